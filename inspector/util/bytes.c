#include "util/bytes.h"

#include <stdlib.h>
#include <string.h>

bool cl_all_zero(const void *p, size_t len)
{
    static const unsigned char zero[64];
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i += sizeof zero)
        if (memcmp(b + i, zero, len - i < sizeof zero ? len - i : sizeof zero) != 0)
            return false;
    return true;
}

void cl_out_bytes(struct cl_bytes_out *o, const void *data, size_t len)
{
    if (o->oom || len == 0)
        return;
    if (len > o->cap - o->len) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap - o->len < len && cap < SIZE_MAX / 2)
            cap *= 2;
        unsigned char *p = cap - o->len >= len ? realloc(o->p, cap) : NULL;
        if (!p) {
            o->oom = true;
            return;
        }
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->len, data, len);
    o->len += len;
}

void cl_out_u32(struct cl_bytes_out *o, uint32_t v)
{
    unsigned char b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    cl_out_bytes(o, b, sizeof b);
}

void cl_out_u64(struct cl_bytes_out *o, uint64_t v)
{
    cl_out_u32(o, (uint32_t)v);
    cl_out_u32(o, (uint32_t)(v >> 32));
}

void cl_out_str(struct cl_bytes_out *o, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n >= CL_BYTES_NULL_STR) {
        o->oom = true;
        return;
    }
    cl_out_u32(o, s ? (uint32_t)n : CL_BYTES_NULL_STR);
    cl_out_bytes(o, s, n);
}

void cl_out_free(struct cl_bytes_out *o)
{
    free(o->p);
    memset(o, 0, sizeof *o);
}

/* The next n bytes, or NULL (and bad) when fewer are left. */
static const unsigned char *take(struct cl_bytes_in *in, size_t n)
{
    if (in->bad || n > in->len - in->at) {
        in->bad = true;
        return NULL;
    }
    const unsigned char *p = in->p + in->at;
    in->at += n;
    return p;
}

uint32_t cl_in_u32(struct cl_bytes_in *in)
{
    const unsigned char *b = take(in, 4);
    uint32_t v = 0;
    for (int i = 0; b && i < 4; i++)
        v |= (uint32_t)b[i] << (8 * i);
    return v;
}

uint64_t cl_in_u64(struct cl_bytes_in *in)
{
    uint64_t lo = cl_in_u32(in);
    return lo | (uint64_t)cl_in_u32(in) << 32;
}

char *cl_in_str(struct cl_bytes_in *in, size_t max)
{
    uint32_t n = cl_in_u32(in);
    if (in->bad || n == CL_BYTES_NULL_STR)
        return NULL;
    const unsigned char *b = n <= max ? take(in, n) : NULL;
    if (!b || memchr(b, '\0', n)) {
        in->bad = true;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        in->oom = in->bad = true;
        return NULL;
    }
    memcpy(s, b, n);
    s[n] = '\0';
    return s;
}

size_t cl_in_room(const struct cl_bytes_in *in, size_t min_size)
{
    return in->bad || min_size == 0 ? 0 : (in->len - in->at) / min_size;
}
