#include "util/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool cl_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    if (*len >= cap)
        return false;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0) {
        buf[*len] = '\0';
        return false;
    }
    if ((size_t)n >= cap - *len) {
        *len = cap - 1;
        return false;
    }
    *len += (size_t)n;
    return true;
}

/* "00" to "99", for decimal digits two at a time */
static const char decimal_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

const char *cl_digits(char buf[CL_DIGITS], uint64_t v, unsigned base)
{
    size_t i = CL_DIGITS - 1;
    buf[i] = '\0';
    /* each base its own loop, so that each divides by a constant: a multiply and a shift, where
     * a division by a variable takes tens of cycles */
    if (base == 16) {
        do {
            buf[--i] = "0123456789abcdef"[v % 16];
            v /= 16;
        } while (v);
        return buf + i;
    }
    /* decimal two digits a division */
    for (; v >= 10; v /= 100) {
        i -= 2;
        memcpy(buf + i, decimal_pairs + 2 * (v % 100), 2);
        if (v < 100)
            return buf + i;
    }
    buf[--i] = (char)('0' + v);
    return buf + i;
}

/* v's digits in base (10 or 16), after prefix: their length is known, not counted again. */
static bool append_digits(char *buf, size_t cap, size_t *len, const char *prefix, uint64_t v,
                          unsigned base)
{
    char digits[CL_DIGITS];
    const char *d = cl_digits(digits, v, base);
    size_t n = (size_t)(digits + CL_DIGITS - 1 - d);
    return cl_append(buf, cap, len, prefix) && cl_append_n(buf, cap, len, d, n);
}

bool cl_append_int(char *buf, size_t cap, size_t *len, int64_t v)
{
    /* the magnitude of INT64_MIN is no int64_t: negate it unsigned */
    return v < 0 ? append_digits(buf, cap, len, "-", 0 - (uint64_t)v, 10)
                 : append_digits(buf, cap, len, "", (uint64_t)v, 10);
}

bool cl_append_uint(char *buf, size_t cap, size_t *len, uint64_t v)
{
    return append_digits(buf, cap, len, "", v, 10);
}

bool cl_append_hex(char *buf, size_t cap, size_t *len, uint64_t v)
{
    return append_digits(buf, cap, len, "0x", v, 16);
}

const char *cl_join_names(char *buf, size_t cap, size_t n, const char *(*name)(size_t i))
{
    size_t len = 0;
    if (cap)
        buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (!cl_appendf(buf, cap, &len, "%s%s", i ? ", " : "", name(i)))
            break;
    return buf;
}

bool cl_copy_span(char *out, size_t cap, const char *s, size_t n)
{
    if (cap == 0)
        return false;
    size_t have = strnlen(s, n), k = have < cap - 1 ? have : cap - 1;
    memcpy(out, s, k);
    out[k] = '\0';
    return k == have;
}
