/* A CUDA device's private pools (CUDA graphs', torch.cuda.MemPools'), each with its owner: memory
 * an owner keeps reserved whatever the tensors in it, which the holders (retained, allocated
 * bytes) do not show. */
#ifndef CULEAK_REPORT_POOLS_H
#define CULEAK_REPORT_POOLS_H

#include <stdint.h>

#include "cudacache/walk.h"

struct cl_pool_row {
    uint64_t id[2];
    const char *owner; /* cc_pool_owner's name ("shared by A and B"), or NULL when none known */
    uint32_t segments;
    uint64_t reserved;  /* its segments' mapped bytes */
    uint64_t allocated; /* its live blocks' (active, allocated or pending free) */
    /* its segments' with no live block: what empty_cache() gives the device back once the
     * pool's owners are gone (while one lives, the pool keeps them) */
    uint64_t empty;
};

/* The private pools of device d, in the order their first segments lie, into *rows (malloc'ed,
 * *n of them; NULL and 0 when none). False when out of memory. */
bool cl_pool_rows(const struct cc_allocator *a, const struct cc_device *d,
                  struct cl_pool_row **rows, uint32_t *n);

#endif
