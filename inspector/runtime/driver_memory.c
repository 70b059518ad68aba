#include "runtime/driver_memory.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE (~0ull)
#define MAX_GPUS 64
#define MAX_PROCESSES 4096   /* per GPU */
#define NVML_TIMEOUT_MS 20000

/* nvmlProcessInfo_v2_t, which nvmlDeviceGetComputeRunningProcesses_v3 fills (nvml.h) */
struct process_v2 {
    unsigned pid;
    unsigned long long used;
    unsigned gpu_instance, compute_instance;
};
/* nvmlProcessInfo_v1_t, the unversioned function's, in libraries older than _v3 */
struct process_v1 {
    unsigned pid;
    unsigned long long used;
};

struct nvml {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    int (*count)(unsigned *);
    int (*handle)(unsigned, void **);
    int (*processes)(void *, unsigned *, void *);
    size_t process_size;   /* of the struct that processes fills */
    const char *(*error)(int);
};

static const char *error_text(const struct nvml *n, int rc, char *buf, size_t cap)
{
    if (n->error)
        return n->error(rc);
    snprintf(buf, cap, "NVML error %d", rc);
    return buf;
}

static bool load(struct nvml *n)
{
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib)
        return false;
    /* POSIX's way from a void * to a function pointer (dlsym's own manual page) */
    *(void **)&n->init = dlsym(n->lib, "nvmlInit_v2");
    *(void **)&n->shutdown = dlsym(n->lib, "nvmlShutdown");
    *(void **)&n->count = dlsym(n->lib, "nvmlDeviceGetCount_v2");
    *(void **)&n->handle = dlsym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&n->error = dlsym(n->lib, "nvmlErrorString");
    *(void **)&n->processes = dlsym(n->lib, "nvmlDeviceGetComputeRunningProcesses_v3");
    n->process_size = sizeof(struct process_v2);
    if (!n->processes) {
        *(void **)&n->processes = dlsym(n->lib, "nvmlDeviceGetComputeRunningProcesses");
        n->process_size = sizeof(struct process_v1);
    }
    return n->init && n->shutdown && n->count && n->handle && n->processes;
}

/* Process pid's entry on one GPU: 1 found (*used set), 0 not, -1 NVML failed (out->why). */
static int on_gpu(const struct nvml *n, void *gpu, int pid, unsigned long long *used,
                  struct cl_driver_memory *out)
{
    unsigned char *list = malloc(MAX_PROCESSES * sizeof(struct process_v2));
    unsigned count = MAX_PROCESSES;
    int rc = list ? n->processes(gpu, &count, list) : -1, found = 0;
    if (rc != NVML_SUCCESS) {
        char buf[32];
        snprintf(out->why, sizeof out->why, "NVML did not list a GPU's processes: %s",
                 !list                                ? "out of memory"
                 : rc == NVML_ERROR_INSUFFICIENT_SIZE ? "more than 4096"
                                                      : error_text(n, rc, buf, sizeof buf));
        free(list);
        return -1;
    }
    for (unsigned i = 0; i < count && i < MAX_PROCESSES && !found; i++) {
        const unsigned char *p = list + i * n->process_size;
        unsigned id;
        memcpy(&id, p, sizeof id);
        if ((int)id == pid) {
            memcpy(used, p + offsetof(struct process_v1, used), sizeof *used);
            found = 1;
        }
    }
    free(list);
    return found;
}

/* What NVML says of process pid. */
static void ask(int pid, struct cl_driver_memory *out)
{
    memset(out, 0, sizeof *out);
    struct nvml n = {0};
    char buf[32];
    if (!load(&n)) {
        out->state = CL_DRIVER_NO_NVML;
        snprintf(out->why, sizeof out->why, "no NVML library here (libnvidia-ml.so.1)");
        if (n.lib)
            dlclose(n.lib);
        return;
    }
    int rc = n.init();
    unsigned gpus = 0;
    if (rc != NVML_SUCCESS || (rc = n.count(&gpus)) != NVML_SUCCESS) {
        out->state = CL_DRIVER_NO_NVML;
        snprintf(out->why, sizeof out->why, "NVML would not start: %s",
                 error_text(&n, rc, buf, sizeof buf));
        dlclose(n.lib);
        return;
    }
    out->state = CL_DRIVER_NOT_LISTED;
    snprintf(out->why, sizeof out->why,
             "NVML lists no GPU process with id %d (it names processes by the host's ids: a "
             "job in another PID namespace, such as a container, is listed under another)",
             pid);
    bool hidden = false;
    for (unsigned g = 0; g < gpus && g < MAX_GPUS; g++) {
        void *gpu;
        unsigned long long used = 0;
        if (n.handle(g, &gpu) != NVML_SUCCESS)
            continue;
        int found = on_gpu(&n, gpu, pid, &used, out);
        if (found < 0) {
            out->state = CL_DRIVER_NO_NVML;
            break;
        }
        if (!found)
            continue;
        out->gpus++;
        if (used == NVML_VALUE_NOT_AVAILABLE)
            hidden = true;
        else
            out->used += used;
    }
    if (out->gpus && hidden) {
        out->state = CL_DRIVER_HIDDEN;
        snprintf(out->why, sizeof out->why,
                 "NVML lists the process on %u GPU(s) but does not give its memory (a driver "
                 "that keeps it from unprivileged users, or a MIG instance)",
                 out->gpus);
    } else if (out->gpus) {
        out->state = CL_DRIVER_READ;
        out->why[0] = '\0';
    }
    (void)n.shutdown();
    dlclose(n.lib);
}

/* NVML runs in a child of culeak's: a static culeak loads the machine's libc beside its own to
 * load it, which a child may crash of, and a driver may hang in it; neither reaches culeak,
 * which then says so. */
void cl_driver_memory_read(int pid, struct cl_driver_memory *out)
{
    memset(out, 0, sizeof *out);
    out->state = CL_DRIVER_NO_NVML;
    int fds[2];
    pid_t child = pipe(fds) ? -1 : fork();
    if (child == 0) {
        struct cl_driver_memory answer;
        close(fds[0]);
        ask(pid, &answer);
        ssize_t wrote = write(fds[1], &answer, sizeof answer);
        _exit(wrote == (ssize_t)sizeof answer ? 0 : 1);
    }
    if (child < 0) {
        snprintf(out->why, sizeof out->why, "NVML not asked: could not start its helper");
        return;
    }
    close(fds[1]);
    struct pollfd p = {fds[0], POLLIN, 0};
    ssize_t got = poll(&p, 1, NVML_TIMEOUT_MS) == 1 ? read(fds[0], out, sizeof *out) : 0;
    close(fds[0]);
    if (got != (ssize_t)sizeof *out)
        kill(child, SIGKILL);
    int status = 0;
    (void)waitpid(child, &status, 0);
    if (got != (ssize_t)sizeof *out) {
        memset(out, 0, sizeof *out);
        out->state = CL_DRIVER_NO_NVML;
        snprintf(out->why, sizeof out->why, "NVML's helper %s",
                 WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL ? "crashed"
                                                                    : "gave no answer in 20 s");
    }
    out->why[sizeof out->why - 1] = '\0';
}
