/* A subset of the numbers 0..n-1, each member numbered densely by how many members precede it:
 * a bit a number and a count every 64, about 0.19 bytes a number where an array of the members'
 * numbers takes 4 (the holders' subgraph keeps a few of millions of vertices). */
#ifndef CULEAK_UTIL_RANKSET_H
#define CULEAK_UTIL_RANKSET_H

#include <stdbool.h>
#include <stdint.h>

#define CL_RANKSET_NONE UINT32_MAX

struct cl_rankset {
    uint64_t *bits;   /* v is a member when bit v % 64 of bits[v / 64] is set */
    uint32_t *before; /* members below word w */
    uint32_t n;       /* the numbers the set is of */
    uint32_t count;   /* its members */
};

/* The set of the v < n with mark[v] != 0; false when out of memory (s is then empty). */
bool cl_rankset_build(struct cl_rankset *s, const uint8_t *mark, uint32_t n);
void cl_rankset_free(struct cl_rankset *s);

/* v's number among the members, or CL_RANKSET_NONE when v is not one (or not below n). */
static inline uint32_t cl_rankset_number(const struct cl_rankset *s, uint32_t v)
{
    if (v >= s->n)
        return CL_RANKSET_NONE;
    uint64_t word = s->bits[v / 64], bit = 1ull << (v % 64);
    return word & bit ? s->before[v / 64] + (uint32_t)__builtin_popcountll(word & (bit - 1))
                      : CL_RANKSET_NONE;
}

#endif
