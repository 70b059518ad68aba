/* Bounded text: building a line or copying a span into a fixed buffer, where running out of room
 * cuts the text at the buffer's end (and says so) instead of overrunning it. One place decides
 * what truncation means, so the call sites need no length arithmetic of their own. */
#ifndef CULEAK_UTIL_TEXT_H
#define CULEAK_UTIL_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Appends printf-style text at buf + *len, where buf holds cap bytes and is NUL-terminated at
 * *len. Text that does not fit is cut at cap - 1 bytes (*len is then cap - 1). False when
 * anything was cut, or cap is 0: the caller can stop appending. */
bool cl_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* v's digits in base 10 or 16 (lowercase), NUL-terminated at the end of buf; returns the first.
 * Reports write millions of numbers, which printf would parse a format for each. */
#define CL_DIGITS 24
const char *cl_digits(char buf[CL_DIGITS], uint64_t v, unsigned base);

/* cl_appendf's plain counterparts, for text written once an object: s (cl_append_n: n bytes of
 * s, a length already known); v in decimal; v as "0x" and lowercase hex digits (as printf's
 * "0x%llx"). cl_append is inline: most of its calls append a literal, whose length and copy the
 * compiler then knows (a report's lines are made of millions of them). */
static inline bool cl_append_n(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
    if (*len >= cap)
        return false;
    size_t room = cap - 1 - *len, k = n < room ? n : room;
    memcpy(buf + *len, s, k);
    *len += k;
    buf[*len] = '\0';
    return k == n;
}
static inline bool cl_append(char *buf, size_t cap, size_t *len, const char *s)
{
    return cl_append_n(buf, cap, len, s, strlen(s));
}
bool cl_append_int(char *buf, size_t cap, size_t *len, int64_t v);
bool cl_append_uint(char *buf, size_t cap, size_t *len, uint64_t v);
bool cl_append_hex(char *buf, size_t cap, size_t *len, uint64_t v);

/* The first n bytes of s (fewer if s ends sooner) as a string in out, cut to cap - 1 bytes;
 * false when cut or cap is 0. */
bool cl_copy_span(char *out, size_t cap, const char *s, size_t n);

/* name(0) ... name(n - 1), comma-separated, into buf (cut to cap); returns buf. How each layout
 * table family lists its tables' names. */
const char *cl_join_names(char *buf, size_t cap, size_t n, const char *(*name)(size_t i));

#endif
