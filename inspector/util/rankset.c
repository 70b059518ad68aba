#include "util/rankset.h"

#include <stdlib.h>
#include <string.h>

bool cl_rankset_build(struct cl_rankset *s, const uint8_t *mark, uint32_t n)
{
    size_t words = (size_t)n / 64 + 1;
    memset(s, 0, sizeof *s);
    if (!(s->bits = calloc(words, sizeof *s->bits)) ||
        !(s->before = malloc(words * sizeof *s->before))) {
        cl_rankset_free(s);
        return false;
    }
    for (uint32_t v = 0; v < n; v++)
        if (mark[v])
            s->bits[v / 64] |= 1ull << (v % 64);
    for (size_t w = 0; w < words; w++) {
        s->before[w] = s->count;
        s->count += (uint32_t)__builtin_popcountll(s->bits[w]);
    }
    s->n = n;
    return true;
}

void cl_rankset_free(struct cl_rankset *s)
{
    free(s->bits);
    free(s->before);
    memset(s, 0, sizeof *s);
}
