/* PyTorch: fields of torch/version.py (pure), and detection from a target's map with version.py
 * found through the locator. */
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "runtime/torch.h"
#include "suites.h"
#include "testutil.h"

/* torch/version.py as the 2.x wheels write it. */
static const char cpu_version_py[] =
    "from typing import Optional\n"
    "\n"
    "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']\n"
    "__version__ = '2.13.0+cpu'\n"
    "debug = False\n"
    "cuda: Optional[str] = None\n"
    "git_version = 'f0d6a2b1c3e4d5f60718293a4b5c6d7e8f901234'\n"
    "hip: Optional[str] = None\n"
    "xpu: Optional[str] = None\n";

static const char cuda_version_py[] =
    "from typing import Optional\n"
    "\n"
    "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
    "__version__ = '2.13.0+cu130'\n"
    "debug = False\n"
    "cuda: Optional[str] = '13.0'\n"
    "git_version = 'f0d6a2b1c3e4d5f60718293a4b5c6d7e8f901234'\n"
    "hip: Optional[str] = None\n";

static void field(const char *text, const char *name, const char *want)
{
    char out[64];
    memset(out, 'z', sizeof out);
    cl_torch_version_py_field(text, name, out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, want);
}

static void test_version_py_fields(void)
{
    field(cpu_version_py, "__version__", "2.13.0+cpu");
    field(cpu_version_py, "cuda", "");          /* None: a CPU build */
    field(cpu_version_py, "debug", "");         /* not a string */
    field(cpu_version_py, "git_version", "f0d6a2b1c3e4d5f60718293a4b5c6d7e8f901234");
    field(cpu_version_py, "rocm", "");          /* missing */
    field(cpu_version_py, "__all__", "");       /* a list */
    field("hip = None or None\n", "hip", "");     /* expressions are not string literals */
    field("debug = 0 if x else 0\n", "debug", "");
    field(cuda_version_py, "__version__", "2.13.0+cu130");
    field(cuda_version_py, "cuda", "13.0");
    field("cuda = '13.0'\n", "cuda", "13.0");   /* without an annotation */
    field("cuda='12.4'", "cuda", "12.4");       /* no spaces, no final newline */
    field("__version__ = \"2.5.1\"\n", "__version__", "2.5.1");
    field("__version__ = '2.5.1'\r\n", "__version__", "2.5.1");
    field("", "__version__", "");
}

static void test_version_py_edges(void)
{
    /* a longer name that starts with the one asked for */
    field("cuda_version = '1.0'\ncudax = '2.0'\n", "cuda", "");
    field("cuda_version = '1.0'\ncuda = '12.1'\n", "cuda", "12.1");
    /* the '=' of the next line does not belong to this one */
    field("cuda: Optional[str]\ncuda = '12.1'\n", "cuda", "12.1");
    field("cuda: Optional[str]\nhip = '6.0'\n", "cuda", "");
    /* unterminated or mismatched quotes */
    field("__version__ = '2.13.0", "__version__", "");
    field("__version__ = '2.13.0\ngit_version = 'abc'\n", "__version__", "");
    field("__version__ = '2.13.0\"\n", "__version__", "");
    /* indented (inside a block) is not the module-level assignment */
    field("if x:\n    __version__ = '9.9'\n", "__version__", "");
    /* cut to cap */
    char small[4];
    cl_torch_version_py_field(cpu_version_py, "__version__", small, sizeof small);
    CU_ASSERT_STRING_EQUAL(small, "2.1");
}

/* A target with only a map, as cl_torch_detect needs. */
static struct cl_target *mapped(const char *const *paths, size_t n)
{
    struct cl_target *t = calloc(1, sizeof *t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (size_t i = 0; i < n; i++) {
        struct cl_mapping m = {.start = 0x100000 * (i + 1),
                               .end = 0x100000 * (i + 1) + 0x1000,
                               .perms = CL_MAP_R,
                               .path = (char *)paths[i]};
        CU_ASSERT_EQUAL_FATAL(cl_mappings_add(&t->maps, &m), 0);
    }
    return t;
}

static void free_mapped(struct cl_target *t)
{
    cl_mappings_free(&t->maps);
    free(t);
}

#define SITE_REL "venv/lib/python3.11/site-packages/torch"
#define SITE "/" SITE_REL

static void test_detect_cpu(void)
{
    char *root = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    char *vpy = tu_path(root, SITE_REL "/version.py");
    CU_ASSERT_EQUAL_FATAL(tu_write_file(vpy, cpu_version_py, strlen(cpu_version_py)), 0);
    const char *paths[] = {"/usr/bin/python3.11",       SITE "/lib/libc10.so",
                           SITE "/lib/libtorch_cpu.so", SITE "/_C.cpython-311-x86_64-linux-gnu.so",
                           SITE "/lib/libc10.so",       "[heap]"};
    struct cl_target *t = mapped(paths, 6);
    t->locator.sysroot = root;
    struct cl_torch_info info;
    cl_torch_detect(t, &info);
    CU_ASSERT(info.loaded);
    CU_ASSERT_STRING_EQUAL(info.version, "2.13.0+cpu");
    CU_ASSERT_STRING_EQUAL(info.cuda, "");
    CU_ASSERT_STRING_EQUAL(info.version_file, vpy);
    CU_ASSERT_FALSE(info.cuda_build);
    CU_ASSERT_FALSE(info.c10_cuda_mapped);
    CU_ASSERT_EQUAL_FATAL(info.nlibs, 2);   /* libc10 once, libtorch_cpu */
    CU_ASSERT_STRING_EQUAL(info.libs[0], SITE "/lib/libc10.so");
    CU_ASSERT_STRING_EQUAL(info.libs[1], SITE "/lib/libtorch_cpu.so");

    /* version.py not on this machine: still loaded, version unknown */
    t->locator.sysroot = "/nonexistent-culeak-test";
    cl_torch_detect(t, &info);
    CU_ASSERT(info.loaded);
    CU_ASSERT_STRING_EQUAL(info.version, "");
    free_mapped(t);
    free(vpy);
    tu_rmtree(root);
}

static void test_detect_cuda_and_absent(void)
{
    char *root = tu_mkdtemp();
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    char *vpy = tu_path(root, SITE_REL "/version.py");
    CU_ASSERT_EQUAL_FATAL(tu_write_file(vpy, cuda_version_py, strlen(cuda_version_py)), 0);
    const char *paths[] = {SITE "/_C.cpython-311-x86_64-linux-gnu.so", SITE "/lib/libc10_cuda.so",
                           "/usr/local/cuda/lib64/libcudart.so.13"};
    struct cl_target *t = mapped(paths, 3);
    t->locator.sysroot = root;
    struct cl_torch_info info;
    cl_torch_detect(t, &info);
    CU_ASSERT(info.loaded);
    CU_ASSERT_STRING_EQUAL(info.cuda, "13.0");
    CU_ASSERT(info.cuda_build);
    CU_ASSERT(info.c10_cuda_mapped);
    CU_ASSERT_EQUAL(info.nlibs, 2);
    free_mapped(t);

    /* no torch: a plain Python with a "_C." module outside a torch/ directory */
    const char *plain[] = {"/usr/bin/python3.11", "/usr/lib/python3/dist-packages/foo/_C.so"};
    t = mapped(plain, 2);
    cl_torch_detect(t, &info);
    CU_ASSERT_FALSE(info.loaded);
    CU_ASSERT_EQUAL(info.nlibs, 0);
    CU_ASSERT_STRING_EQUAL(info.version, "");
    free_mapped(t);
    free(vpy);
    tu_rmtree(root);
}

void register_runtime_torch_tests(void)
{
    static const struct tu_test tests[] = {
        {"version.py fields", test_version_py_fields},
        {"version.py edge cases", test_version_py_edges},
        {"detect a CPU build", test_detect_cpu},
        {"detect a CUDA build, and no torch", test_detect_cuda_and_absent},
        {NULL, NULL},
    };
    tu_add_suite("runtime/torch", tests);
}
