/* The simulated device's stand-in for NVML (libnvidia-ml.so.1), which PyTorch's driver API
 * loads beside the driver and asks, before mapping expandable-segment memory, whether the
 * device has fabric (multi-node NVLink) memory: it has not; and, at an out-of-memory error, and
 * culeak for its figure of memory outside the caching allocator, which processes use the device
 * and how much (the simulated driver's ledger.h). Only the functions c10 and culeak look up are
 * here; c10 stops with an internal assert naming any it cannot find. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"

enum { NVML_SUCCESS = 0, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3,
       NVML_ERROR_INSUFFICIENT_SIZE = 7 };

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
int nvmlDeviceGetCount_v2(unsigned *n) { *n = 1; return NVML_SUCCESS; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **out)
{
    *out = &device;
    return i == 0 ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}
const char *nvmlErrorString(int rc) { return rc ? "simulated NVML: error" : "Success"; }

/* Every live process's ledger, as nvmlProcessInfo_v1_t (size 16: the unversioned function c10
 * calls) or nvmlProcessInfo_v2_t (24: _v3): pid, then usedGpuMemory. A process id is the one
 * its own PID namespace gave it, as the real driver's is the host's: a reader in another one
 * looks for another number. */
static int processes(unsigned *n, unsigned char *infos, size_t size)
{
    DIR *d = opendir(LEDGER_DIR);
    unsigned found = 0, room = *n;
    for (struct dirent *e; d && (e = readdir(d));) {
        char *end, path[300];
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || (kill((pid_t)pid, 0) && errno != EPERM))
            continue;   /* not a ledger, or its process is gone */
        snprintf(path, sizeof path, LEDGER_DIR "/%s", e->d_name);
        uint64_t used = 0;
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        size_t got = fread(&used, sizeof used, 1, f);
        fclose(f);
        if (got == 1 && found < room) {
            unsigned char *p = infos + found * size;
            unsigned id = (unsigned)pid;
            unsigned long long bytes = used;
            memset(p, 0, size);
            memcpy(p, &id, sizeof id);
            memcpy(p + 8, &bytes, sizeof bytes);
        }
        found += got == 1;
    }
    if (d)
        closedir(d);
    *n = found;
    return found > room ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}
int nvmlDeviceGetComputeRunningProcesses(void *dev, unsigned *n, void *infos)
{
    (void)dev;
    return processes(n, infos, 16);
}
int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned *n, void *infos)
{
    (void)dev;
    return processes(n, infos, 24);
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
