/* The simulated device's stand-in for NVML (libnvidia-ml.so.1), which PyTorch's driver API
 * loads beside the driver and asks, before mapping expandable-segment memory, whether the
 * device has fabric (multi-node NVLink) memory: it has not. Only the functions c10 looks up are
 * here; c10 stops with an internal assert naming any it cannot find. */
#include <string.h>

enum { NVML_SUCCESS = 0, NVML_ERROR_NOT_SUPPORTED = 3 };

static int device = 1;

int nvmlInit_v2(void) { return NVML_SUCCESS; }
int nvmlShutdown(void) { return NVML_SUCCESS; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 13000; return NVML_SUCCESS; }
int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **out)
{
    (void)bus;
    *out = &device;
    return NVML_SUCCESS;
}
/* nvmlGpuFabricInfoV_t: {version, clusterUuid[16], status, cliqueId, state, ...}. Older
 * releases take "not supported" for an answer, 2.13 wants success with state 0, which is
 * NVML_GPU_FABRIC_STATE_NOT_SUPPORTED. */
int nvmlDeviceGetGpuFabricInfoV(void *dev, unsigned char *info)
{
    (void)dev;
    memset(info + 4, 0, 25);
    return NVML_SUCCESS;
}
/* No process runs on the simulated device as far as NVML knows. c10 asks at an out-of-memory
 * error, for its message, and from 2.11 (to 2.13) asserts that the call succeeds. */
int nvmlDeviceGetComputeRunningProcesses(void *dev, unsigned *n, void *infos)
{
    (void)dev;
    (void)infos;
    *n = 0;
    return NVML_SUCCESS;
}
int nvmlDeviceGetNvLinkRemoteDeviceType(void *dev, unsigned link, int *type)
{
    (void)dev;
    (void)link;
    (void)type;
    return NVML_ERROR_NOT_SUPPORTED;
}
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *dev, unsigned link, void *pci)
{
    (void)dev;
    (void)link;
    (void)pci;
    return NVML_ERROR_NOT_SUPPORTED;
}
