/* The CUDA caching allocator's segments and blocks, per device, read from outside. */
#ifndef CULEAK_CUDACACHE_WALK_H
#define CULEAK_CUDACACHE_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "cudacache/layout.h"
#include "runtime/torch.h"
#include "symbols/symbols.h"

/* Named as in torch.cuda.memory._snapshot(), plus unmapped: expandable-segment address space
 * with no memory behind it. */
enum cc_state { CC_ACTIVE_ALLOCATED, CC_ACTIVE_PENDING_FREE, CC_INACTIVE, CC_UNMAPPED };

struct cc_block {
    uint64_t addr;            /* the Block struct */
    uint64_t ptr, size, requested;
    enum cc_state state;
    /* The GatheredContext recorded when the block, and when its segment, was allocated (torch's
     * _record_memory_history); 0 when nothing was recorded. Unchecked: torch/alloc_stacks.h
     * confirms what they point at. */
    uint64_t context, segment_context;
    /* What C++ object holds it when no tensor does: 1 + its index in cc_allocator.owners (named
     * after the walk: cudacache/workspaces.h), 0 when none is known */
    uint32_t owner;
};

struct cc_segment {
    uint64_t addr, size, stream;
    uint64_t mapped; /* bytes with memory behind them: size, unless expandable */
    bool small; /* the small-allocation pool (2 MiB segments) */
    uint64_t pool_id[2]; /* MempoolId_t of a private pool (CUDA graph, MemPool); 0,0: none */
    bool expandable;
    uint32_t first, nblocks; /* into the device's blocks, in address order */
};

struct cc_device {
    int index;
    uint64_t dca;
    uint64_t reserved, allocated; /* the allocator's own statistics */
    struct cc_segment *segments;
    uint32_t nsegments;
    struct cc_block *blocks;
    uint32_t nblocks;
};

struct cc_allocator {
    const struct cc_layout *l;
    struct cc_layout other_cuda; /* l for the other CUDA major, when the build is one */
    char *warnings; /* a layout not chosen by the torch version says so here */
    uint64_t object; /* the NativeCachingAllocator */
    struct cc_device *devices;
    uint32_t ndevices;
    char **owners; /* the owners' names, "torch's cuBLAS workspace (...)" */
    uint32_t nowners;
    size_t owners_cap;
    /* the Python objects that own private pools (cudacache/mempools.h), once asked */
    struct cc_pool_owner *pools;
    uint32_t npools;
    size_t pools_cap;
    bool pools_named;
};

struct cc_pool_owner {
    uint64_t id[2]; /* MempoolId_t */
    /* its owner, "torch.cuda.MemPool __main__.pool", or its owners, "shared by A and B" */
    char *name;
    uint32_t owners;
};

/* Walks the native allocator with the table for the torch version, or with the table called
 * force when not NULL, or, when the version has no table, with the newest table the structure
 * fits. CL_E_UNSUPPORTED (with the reason) for another backend (cudaMallocAsync, pluggable), or
 * when no table fits. */
int cc_walk(struct cl_target *t, const struct cl_symbols *syms, const struct cl_torch_info *torch,
            const char *force, struct cc_allocator *out, struct cl_error *err);
/* The walk itself: the NativeCachingAllocator at object read with layout l, every device's
 * pools, active blocks, private pools and block chains, checked against the allocator's own
 * statistics. CL_E_UNSUPPORTED when the structure refutes the layout. */
int cc_walk_object(struct cl_target *t, const struct cc_layout *l, uint64_t object,
                   struct cc_allocator *out, struct cl_error *err);
void cc_free(struct cc_allocator *a);
const char *cc_state_name(enum cc_state s);

#endif
