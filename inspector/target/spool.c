#include "target/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/bytes.h"

#define SPOOL_PAGE 4096
#define SPOOL_CHUNK (1u << 20) /* read from the stream at once */

/* Reads up to cap bytes, short only at the stream's end: the bytes read, or -1 (errno). */
static ssize_t read_full(int in, unsigned char *buf, size_t cap)
{
    size_t got = 0;
    while (got < cap) {
        ssize_t n = read(in, buf + got, cap - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/* Writes buf's pages at offset at, skipping those of zeros: 0, or -1 (errno). */
static int store(struct cl_spool *s, const unsigned char *buf, size_t len, uint64_t at)
{
    for (size_t off = 0; off < len; off += SPOOL_PAGE) {
        size_t n = len - off < SPOOL_PAGE ? len - off : SPOOL_PAGE;
        if (cl_all_zero(buf + off, n))
            continue;
        for (size_t done = 0; done < n;) {
            ssize_t w = pwrite(s->fd, buf + off + done, n - done, (off_t)(at + off + done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return -1;
            done += (size_t)w;
        }
        s->stored += n;
    }
    return 0;
}

int cl_spool_stream(int in, const char *dir, uint64_t limit, struct cl_spool *out,
                    struct cl_error *err)
{
    memset(out, 0, sizeof *out);
    out->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (out->fd < 0)
        return cl_error_set(err, CL_E_IO, "cannot make the core's spool in %s: %s", dir,
                            strerror(errno));
    snprintf(out->path, sizeof out->path, "/proc/self/fd/%d", out->fd);
    unsigned char *buf = malloc(SPOOL_CHUNK);
    int rc = buf ? 0 : cl_error_set(err, CL_E_INTERNAL, "out of memory");
    for (ssize_t n = 1; !rc && n > 0;) {
        n = read_full(in, buf, SPOOL_CHUNK);
        if (n < 0)
            rc = cl_error_set(err, CL_E_IO, "cannot read the core from standard input: %s",
                              strerror(errno));
        else if (store(out, buf, (size_t)n, out->size))
            rc = cl_error_set(err, CL_E_IO, "cannot write the core's spool in %s: %s", dir,
                              strerror(errno));
        else if (out->stored > limit)
            rc = cl_error_set(err, CL_E_IO,
                              "the core holds more than %llu bytes of data (--copy-limit), "
                              "which its spool in %s may take",
                              (unsigned long long)limit, dir);
        else
            out->size += (uint64_t)n;
    }
    free(buf);
    /* the holes after the last page stored: the file is the stream's length */
    if (!rc && ftruncate(out->fd, (off_t)out->size) != 0)
        rc = cl_error_set(err, CL_E_IO, "cannot write the core's spool in %s: %s", dir,
                          strerror(errno));
    if (rc)
        cl_spool_close(out);
    return rc;
}

void cl_spool_close(struct cl_spool *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}
