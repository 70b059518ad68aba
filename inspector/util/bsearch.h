/* The library's one binary search, over anything sorted: a caller says what "before" means for
 * the element at an index, and gets the first index where it no longer holds. Inline, so that a
 * constant predicate is inlined too (the mapping lookups run once a page-cache miss). */
#ifndef CULEAK_UTIL_BSEARCH_H
#define CULEAK_UTIL_BSEARCH_H

#include <stdbool.h>
#include <stddef.h>

/* The first index in [0, n) at which before(i, ctx) is false, n when it holds everywhere. before
 * must hold on a prefix of the range and nowhere after it (sorted, disjoint data). */
static inline size_t cl_partition_point(size_t n, bool (*before)(size_t i, const void *ctx),
                                        const void *ctx)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (before(mid, ctx))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif
