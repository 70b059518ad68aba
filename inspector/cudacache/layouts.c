/* The 2.14 line was read off torch 2.14.1+cu130's real allocator running on culeak's simulated
 * device (its structures are the same as on a GPU: only cudaMalloc is stood in for), and the
 * structural checks confirm it on every walk. The header-derived offsets of the shared notes for
 * other lines disagreed with 2.14.1 where they could be checked (BlockPool is 168 bytes there,
 * not 120), so no other line is listed until it can be checked the same way. */
#include <stddef.h>

#include "cudacache/layout.h"

static const struct cc_layout cc214 = {
    .name = "2.14",
    .nca_device_allocator = 22584,
    .dca_allocated_bytes = 40 + 384, .dca_reserved_bytes = 40 + 480,
    .dca_large_blocks = 1064, .dca_small_blocks = 1232, .dca_active_blocks = 1400,
    .blk_stream = 8, .blk_size = 56, .blk_requested = 64, .blk_pool = 72, .blk_ptr = 80,
    .blk_allocated = 88, .blk_mapped = 89, .blk_prev = 96, .blk_next = 104, .blk_event_count = 112,
    .blk_expandable = 160,
};

const struct cc_layout *cc_layout_for(unsigned major, unsigned minor)
{
    return major == 2 && minor == 14 ? &cc214 : NULL;
}
