/* What the simulated device's driver knows of each process's memory, which NVML reports per
 * process on a GPU: one shared 8-byte counter a process, in LEDGER_DIR/PID, that the runtime
 * (cudaMalloc) and the driver (cuMemCreate: expandable segments' physical memory) add to, and the
 * NVML stand-in lists. The simulated device has no context memory: what a process uses is what
 * it allocated. */
#ifndef SIMGPU_LEDGER_H
#define SIMGPU_LEDGER_H

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LEDGER_DIR "/dev/shm/culeak-simgpu"

static uint64_t *ledger_word;
static pthread_once_t ledger_once = PTHREAD_ONCE_INIT;
static pid_t ledger_pid;

static inline void ledger_open(void)
{
    char path[64];
    (void)mkdir(LEDGER_DIR, 01777);
    (void)chmod(LEDGER_DIR, 01777);   /* whoever made it, every user's process writes here */
    ledger_pid = getpid();
    snprintf(path, sizeof path, LEDGER_DIR "/%d", (int)ledger_pid);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || ftruncate(fd, sizeof *ledger_word)) {
        if (fd >= 0)
            close(fd);
        return;   /* no ledger: NVML does not list the process */
    }
    void *p = mmap(NULL, sizeof *ledger_word, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p != MAP_FAILED)
        ledger_word = p;
}

/* n bytes more (or less) in use on the device. A child of fork() starts a ledger of its own,
 * with nothing in it, as a child has no CUDA context. */
static inline void ledger_add(int64_t n)
{
    (void)pthread_once(&ledger_once, ledger_open);
    if (ledger_word && ledger_pid == getpid())
        __atomic_add_fetch(ledger_word, (uint64_t)n, __ATOMIC_RELAXED);
}

#endif
