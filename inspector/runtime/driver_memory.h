/* The CUDA driver's own figure of the GPU memory a process uses, which NVML keeps per process
 * (nvmlDeviceGetComputeRunningProcesses): the caching allocator's segments, and all the rest the
 * allocator never sees (the CUDA context, NCCL's buffers, cuBLAS and cuDNN handles, cudaMalloc
 * outside torch). Less what the allocator reserved, it is the memory outside the allocator.
 *
 * It is asked of the NVML library of the machine culeak runs on (libnvidia-ml.so.1, loaded when
 * asked, so culeak needs none to build or run) just before the process is stopped, since NVML's
 * first call can take longer than the stop should. A live process only: a core keeps no such
 * figure. NVML lists processes by the host's process ids, so a process culeak names by another
 * PID namespace's id (culeak in a container, or the job in one culeak sees from outside it under
 * another id) is not found; some drivers do not give the figure to unprivileged users. Each of
 * these is said, never guessed around. */
#ifndef CULEAK_RUNTIME_DRIVER_MEMORY_H
#define CULEAK_RUNTIME_DRIVER_MEMORY_H

#include <stdint.h>

enum cl_driver_state {
    CL_DRIVER_NOT_ASKED,   /* not a live process, or the command does not use it */
    CL_DRIVER_NO_NVML,     /* no NVML here, or it would not start */
    CL_DRIVER_NOT_LISTED,  /* NVML lists no GPU process of this id */
    CL_DRIVER_HIDDEN,      /* listed, with its figure not available */
    CL_DRIVER_READ,
};

struct cl_driver_memory {
    enum cl_driver_state state;
    uint64_t used;         /* CL_DRIVER_READ: bytes, over every GPU it is listed on */
    unsigned gpus;         /* how many GPUs list it */
    char why[200];         /* what NVML said, for the states that are not READ */
};

/* Asks NVML about process pid (in culeak's PID namespace); never fails: out says how it went. */
void cl_driver_memory_read(int pid, struct cl_driver_memory *out);

#endif
