/* The simulated device's runtime stand-in, called as PyTorch calls it. Linked against
 * build/simgpu/libcudart.so.13 itself. */
#include <CUnit/Basic.h>
#include <cuda_runtime_api.h>
#include <string.h>


static void test_device(void)
{
    int n = 0, dev = -1, v = 0;
    struct cudaDeviceProp p;
    CU_ASSERT_EQUAL(cudaGetDeviceCount(&n), cudaSuccess);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(cudaGetDevice(&dev), cudaSuccess);
    CU_ASSERT_EQUAL(dev, 0);
    CU_ASSERT_EQUAL(cudaSetDevice(1), cudaErrorInvalidDevice);
    CU_ASSERT_EQUAL(cudaGetLastError(), cudaErrorInvalidDevice);
    CU_ASSERT_EQUAL(cudaGetLastError(), cudaSuccess);   /* read once, then cleared */
    CU_ASSERT_EQUAL(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    CU_ASSERT_EQUAL(p.major, 9);
    CU_ASSERT_EQUAL(p.multiProcessorCount, 132);
    CU_ASSERT_PTR_NOT_NULL(strstr(p.name, "simulated"));
    CU_ASSERT_EQUAL(cudaDriverGetVersion(&v), cudaSuccess);
    CU_ASSERT_TRUE(v >= 13000);
}

static void test_memory(void)
{
    size_t free0, total, free1;
    void *a = NULL, *b = NULL;
    CU_ASSERT_EQUAL(cudaMemGetInfo(&free0, &total), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMalloc(&a, 1 << 20), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMalloc(&b, 4096), cudaSuccess);
    CU_ASSERT_PTR_NOT_NULL(a);
    CU_ASSERT_EQUAL(cudaMemGetInfo(&free1, &total), cudaSuccess);
    CU_ASSERT_EQUAL(free0 - free1, (1u << 20) + 4096);
    /* copies and sets are real, in every direction */
    char host[64] = "simulated device memory", back[64] = {0};
    CU_ASSERT_EQUAL(cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMemcpyAsync(b, a, sizeof host, cudaMemcpyDeviceToDevice, 0), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost), cudaSuccess);
    CU_ASSERT_STRING_EQUAL(back, host);
    CU_ASSERT_EQUAL(cudaMemsetAsync(b, 'x', 8, 0), cudaSuccess);
    CU_ASSERT_EQUAL(cudaMemcpy(back, b, 9, cudaMemcpyDeviceToHost), cudaSuccess);
    CU_ASSERT_EQUAL(memcmp(back, "xxxxxxxxd", 9), 0);   /* the 9th byte is untouched */
    CU_ASSERT_EQUAL(cudaFree(a), cudaSuccess);
    CU_ASSERT_EQUAL(cudaFree(b), cudaSuccess);
    CU_ASSERT_EQUAL(cudaFree(b), cudaErrorInvalidValue);   /* a double free is refused */
    CU_ASSERT_EQUAL(cudaMemGetInfo(&free1, &total), cudaSuccess);
    CU_ASSERT_EQUAL(free1, free0);
}

static void test_streams_events(void)
{
    cudaStream_t s1, s2;
    cudaEvent_t e;
    enum cudaStreamCaptureStatus cap;
    CU_ASSERT_EQUAL(cudaStreamCreateWithPriority(&s1, 0, 0), cudaSuccess);
    CU_ASSERT_EQUAL(cudaStreamCreate(&s2), cudaSuccess);
    CU_ASSERT_PTR_NOT_EQUAL(s1, s2);
    CU_ASSERT_EQUAL(cudaEventCreateWithFlags(&e, 0), cudaSuccess);
    CU_ASSERT_EQUAL(cudaEventRecord(e, s1), cudaSuccess);
    CU_ASSERT_EQUAL(cudaEventQuery(e), cudaSuccess);   /* work completes at once */
    CU_ASSERT_EQUAL(cudaStreamIsCapturing(s1, &cap), cudaSuccess);
    CU_ASSERT_EQUAL(cap, cudaStreamCaptureStatusNone);
}

/* A capture as torch's CUDAGraph makes one: the stream says it captures, under one id, until it
 * ends; kernels launched on it are the graph's nodes; a second capture of the stream fails. */
static void test_capture(void)
{
    cudaStream_t s, other;
    cudaGraph_t g = NULL, seen = NULL;
    cudaGraphExec_t exec = NULL;
    enum cudaStreamCaptureStatus cap;
    unsigned long long id = 0;
    size_t nodes = 0;
    dim3 one = {1, 1, 1};
    CU_ASSERT_EQUAL(cudaStreamCreate(&s), cudaSuccess);
    CU_ASSERT_EQUAL(cudaStreamCreate(&other), cudaSuccess);
    CU_ASSERT_EQUAL(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    CU_ASSERT_EQUAL(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaErrorIllegalState);
    CU_ASSERT_EQUAL(cudaStreamIsCapturing(s, &cap), cudaSuccess);
    CU_ASSERT_EQUAL(cap, cudaStreamCaptureStatusActive);
    CU_ASSERT_EQUAL(cudaStreamIsCapturing(other, &cap), cudaSuccess);
    CU_ASSERT_EQUAL(cap, cudaStreamCaptureStatusNone);
    CU_ASSERT_EQUAL(cudaStreamGetCaptureInfo(s, &cap, &id, &seen, NULL, NULL, NULL), cudaSuccess);
    CU_ASSERT(cap == cudaStreamCaptureStatusActive && id != 0 && seen != NULL);
    CU_ASSERT_EQUAL(cudaLaunchKernel((const void *)test_capture, one, one, NULL, 0, s), cudaSuccess);
    CU_ASSERT_EQUAL(cudaLaunchKernel((const void *)test_capture, one, one, NULL, 0, other),
                    cudaSuccess);
    CU_ASSERT_EQUAL(cudaStreamEndCapture(s, &g), cudaSuccess);
    CU_ASSERT_PTR_EQUAL(g, seen);
    CU_ASSERT_EQUAL(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);
    CU_ASSERT_EQUAL(cudaStreamIsCapturing(s, &cap), cudaSuccess);
    CU_ASSERT_EQUAL(cap, cudaStreamCaptureStatusNone);
    CU_ASSERT_EQUAL(cudaGraphGetNodes(g, NULL, &nodes), cudaSuccess);
    CU_ASSERT_EQUAL(nodes, 1);   /* the kernel on s, not the one on the other stream */
    CU_ASSERT_EQUAL(cudaGraphInstantiateWithFlags(&exec, g, 0), cudaSuccess);
    CU_ASSERT_EQUAL(cudaGraphLaunch(exec, s), cudaSuccess);
    CU_ASSERT_EQUAL(cudaGraphExecDestroy(exec), cudaSuccess);
    CU_ASSERT_EQUAL(cudaGraphDestroy(g), cudaSuccess);
}

static void test_unimplemented(void)
{
    cudaGraph_t g;   /* a generated stub: not implemented, so it must fail, not succeed */
    CU_ASSERT_EQUAL(cudaGraphCreate(&g, 0), cudaErrorNotSupported);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("simgpu/cudart", NULL, NULL);
    CU_add_test(s, "device", test_device);
    CU_add_test(s, "memory", test_memory);
    CU_add_test(s, "streams and events", test_streams_events);
    CU_add_test(s, "graph capture", test_capture);
    CU_add_test(s, "unimplemented calls fail loudly", test_unimplemented);
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_tests_failed() + CU_get_number_of_failures();
    CU_cleanup_registry();
    return failed ? 1 : 0;
}
