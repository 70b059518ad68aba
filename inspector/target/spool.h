/* A core that arrives on a stream (core_pattern's pipe, `coredumpctl dump PID |`), made a file
 * the core reader can map: the walk reads a core at random while a pipe gives it once, front to
 * back. The spool is an unlinked file in a folder the caller names; a page of zeros is left a
 * hole, so a job's terabyte of reserved, never-touched address space takes no disk, and the
 * bytes the spool stores are bounded (a stream that would take more is refused, nothing kept). */
#ifndef CULEAK_TARGET_SPOOL_H
#define CULEAK_TARGET_SPOOL_H

#include <stdint.h>

#include "util/error.h"

struct cl_spool {
    int fd;                /* the spool, unlinked: gone with the last close */
    char path[32];         /* /proc/self/fd/N: where the core reader opens it */
    uint64_t size;         /* the core's bytes */
    uint64_t stored;       /* of them, those not in zero pages: the disk it takes */
};

/* Reads the stream in (to its end) into a spool in dir, storing at most limit bytes: 0, or
 * CL_E_IO (an unreadable stream, a folder it cannot write, a full disk, or more data than limit,
 * whose message says which option raises it), the spool then gone. */
int cl_spool_stream(int in, const char *dir, uint64_t limit, struct cl_spool *out,
                    struct cl_error *err);
void cl_spool_close(struct cl_spool *s);

#endif
