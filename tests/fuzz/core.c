/* libFuzzer harness for the core reader (inspector/target/core.c): the input is a core file. It
 * is opened as a target (ELF header, program headers, notes, NT_FILE, the map built from them)
 * and the first and last bytes of every mapping are read, through the core's own bytes or the
 * files NT_FILE names (found on this machine, as the seeds' cores were made here). Whatever the
 * bytes, the open must return a status, never crash, hang or leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "target/target.h"

#define MAX_READS 256   /* mappings read per input: bounds an input with 10^5 NT_FILE entries */

static int memfd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_mappings(struct cl_target *t)
{
    unsigned char buf[64];
    for (size_t i = 0; i < t->maps.n && i < MAX_READS; i++) {
        const struct cl_mapping *m = &t->maps.v[i];
        (void)cl_read(t, m->start, buf, sizeof buf);   /* either status is fine; no crash */
        if (m->end - m->start >= sizeof buf)
            (void)cl_read(t, m->end - sizeof buf, buf, sizeof buf);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memfd < 0) {   /* one in-memory file, rewritten per input: no disk I/O */
        memfd = memfd_create("culeak-fuzz-core", MFD_CLOEXEC);
        if (memfd < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
    }
    if (ftruncate(memfd, 0) != 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
        abort();
    struct cl_open_options opt = {.cache_pages = 64};
    struct cl_target *t = NULL;
    struct cl_error err = {0};
    int rc = cl_target_open_core(path, &opt, &t, &err);
    if (rc == 0) {
        read_mappings(t);
        cl_target_close(t);
    } else if (t || (int)err.code != rc || !err.msg[0] ||
               (rc != CL_E_NOT_CORE && rc != CL_E_TRUNCATED)) {
        abort();   /* a bad core is "not a core" or "truncated", says why, and leaves nothing */
    }
    return 0;
}
