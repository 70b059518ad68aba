#include "util/vec.h"

#include <stdint.h>
#include <stdlib.h>

bool cl_vec_grow(void **p, size_t *cap, size_t elem)
{
    size_t n = *cap ? *cap * 2 : 16;
    if (n < *cap || n > SIZE_MAX / elem)
        return false;
    void *v = realloc(*p, n * elem);
    if (!v)
        return false;
    *p = v;
    *cap = n;
    return true;
}

bool cl_vec_resize(void **p, size_t cap, size_t elem)
{
    if (cap > SIZE_MAX / elem)
        return false;
    void *v = realloc(*p, (cap ? cap : 1) * elem);
    if (!v)
        return false;
    *p = v;
    return true;
}
