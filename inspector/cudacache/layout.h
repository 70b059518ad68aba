/* Where PyTorch's native CUDA caching allocator keeps its state, per release line. Data only,
 * chosen by torch version and confirmed by the structure itself (the allocator's RTTI name, the
 * allocator's own statistics equal to the walk's totals, block chains that link both ways). */
#ifndef CULEAK_CUDACACHE_LAYOUT_H
#define CULEAK_CUDACACHE_LAYOUT_H

#include <stdint.h>

struct cc_layout {
    const char *name;
    /* NativeCachingAllocator */
    uint32_t nca_device_allocator;            /* std::vector<DeviceCachingAllocator*> */
    /* DeviceCachingAllocator */
    uint32_t dca_allocated_bytes, dca_reserved_bytes;   /* Stat[AGGREGATE].current */
    uint32_t dca_large_blocks, dca_small_blocks;        /* BlockPool; its std::set at +0 */
    uint32_t dca_active_blocks;                         /* ska::flat_hash_set<Block*> */
    /* Block */
    uint16_t blk_stream, blk_size, blk_requested, blk_pool, blk_ptr, blk_allocated, blk_mapped,
        blk_prev, blk_next, blk_event_count, blk_expandable;
};

/* The table for torch major.minor, or NULL. */
const struct cc_layout *cc_layout_for(unsigned major, unsigned minor);

#endif
