/* Little-endian byte strings for culeak's own file formats: a growable writer, and a bounded
 * reader for input that may be hostile (a truncated or crafted dump). The reader never reads
 * past its buffer: a short or malformed field makes it "bad" and every later read returns 0. */
#ifndef CULEAK_UTIL_BYTES_H
#define CULEAK_UTIL_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CL_BYTES_NULL_STR UINT32_MAX   /* a string's length field when it is NULL */

struct cl_bytes_out {
    unsigned char *p;
    size_t len, cap;
    bool oom;           /* an append failed; the contents are incomplete */
};

void cl_out_bytes(struct cl_bytes_out *o, const void *data, size_t len);
void cl_out_u32(struct cl_bytes_out *o, uint32_t v);
void cl_out_u64(struct cl_bytes_out *o, uint64_t v);
/* A u32 length and the bytes (no NUL); NULL is written as CL_BYTES_NULL_STR. */
void cl_out_str(struct cl_bytes_out *o, const char *s);
void cl_out_free(struct cl_bytes_out *o);
/* Whether the len bytes at p are all zero (a page a dump or spool keeps as a hole). */
bool cl_all_zero(const void *p, size_t len);

struct cl_bytes_in {
    const unsigned char *p;
    size_t len, at;
    bool bad;           /* a read went past the end or a field was malformed */
    bool oom;           /* a string could not be allocated */
};

uint32_t cl_in_u32(struct cl_bytes_in *in);
uint64_t cl_in_u64(struct cl_bytes_in *in);
/* A string written by cl_out_str, malloc'ed (NULL for a NULL string, or on failure); a string
 * longer than max or holding a NUL makes the reader bad. */
char *cl_in_str(struct cl_bytes_in *in, size_t max);
/* How many more items of at least min_size bytes each could be left: the bound for a count
 * read from the input, so a crafted count never drives a long loop or a huge allocation. */
size_t cl_in_room(const struct cl_bytes_in *in, size_t min_size);

#endif
