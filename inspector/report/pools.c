#include "report/pools.h"

#include <stdlib.h>

#include "cudacache/mempools.h"
#include "util/vec.h"

bool cl_pool_rows(const struct cc_allocator *a, const struct cc_device *d,
                  struct cl_pool_row **rows, uint32_t *n)
{
    size_t count = 0, cap = 0;
    *rows = NULL;
    for (uint32_t s = 0; s < d->nsegments; s++) {
        const struct cc_segment *seg = &d->segments[s];
        if (!seg->pool_id[0] && !seg->pool_id[1])
            continue;
        struct cl_pool_row *r = NULL; /* among at most 2048 (cudacache/walk.c: MAX_POOLS) */
        for (size_t k = 0; k < count && !r; k++)
            if ((*rows)[k].id[0] == seg->pool_id[0] && (*rows)[k].id[1] == seg->pool_id[1])
                r = &(*rows)[k];
        if (!r) {
            if (!CL_VEC_RESERVE(*rows, count, cap)) {
                free(*rows);
                *rows = NULL;
                return false;
            }
            r = &(*rows)[count++];
            *r = (struct cl_pool_row){.id = {seg->pool_id[0], seg->pool_id[1]},
                                      .owner = cc_pool_owner(a, seg->pool_id)};
        }
        uint64_t live = 0;
        for (uint32_t b = seg->first; b < seg->first + seg->nblocks && b < d->nblocks; b++)
            if (d->blocks[b].state == CC_ACTIVE_ALLOCATED ||
                d->blocks[b].state == CC_ACTIVE_PENDING_FREE)
                live += d->blocks[b].size;
        r->segments++;
        r->reserved += seg->mapped;
        r->allocated += live;
        if (!live)
            r->empty += seg->mapped;
    }
    *n = (uint32_t)count;
    return true;
}
