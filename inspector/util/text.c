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
