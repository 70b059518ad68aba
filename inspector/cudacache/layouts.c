/* Each line was read off the real torch wheels of its releases (PyPI's builds: CUDA 12.1 for
 * 2.1 and 2.4, 12.4 for 2.6, 12.6 for 2.7, 12.8 for 2.8 to 2.10, 13 from 2.11) running on
 * culeak's simulated device, where the allocator's structures are the wheel's own (only the CUDA
 * runtime's memory calls and the driver's virtual-memory calls are stood in for), and is
 * confirmed on every walk by the structural checks; tests/integration/test_blocks.py compares
 * each with the allocator's own torch.cuda.memory._snapshot(). From 2.7 on, every table was read
 * off by tests/layouts/probe_allocator.py, which finds each offset from values the process knows
 * (and gives the older tables back from their wheels, 2.1.2 to 2.15.0, blk_context included).
 * Offsets worked out by hand from the allocator's source (c10/cuda/CUDACachingAllocator.cpp)
 * disagreed with these wheels in several places (docs/design.md lists them), so releases that
 * have not been run (2.0, 2.2, 2.3, 2.5) get no table: culeak tries each table on them,
 * `--allocator-layout` can force one, and the structural checks say whether it fits. */
#include <stdio.h>
#include <string.h>

#include "cudacache/layout.h"
#include "util/text.h"

/* clang-format off */
/* Block gained registration_counter (everything from size on moved by 8) in 2.11. */
#define BLOCK_2_10 \
    .blk_stream = 8, .blk_size = 48, .blk_requested = 56, .blk_pool = 64, .blk_ptr = 72, \
    .blk_allocated = 80, .blk_mapped = 81, .blk_prev = 88, .blk_next = 96, .blk_context = 120, \
    .blk_expandable = 152
#define BLOCK_2_11 \
    .blk_stream = 8, .blk_size = 56, .blk_requested = 64, .blk_pool = 72, .blk_ptr = 80, \
    .blk_allocated = 88, .blk_mapped = 89, .blk_prev = 96, .blk_next = 104, .blk_context = 128, \
    .blk_expandable = 160
/* TraceEntry, by the members it gained: time (2.4), private pool and compile context (2.8), user
 * metadata (2.10); 2.15's internal metadata only makes it longer. Action is an int at +0; the
 * last one is OOM (8), ANNOTATE (9) from 2.14. */
#define TRACE_MEMBERS .te_addr = 8, .te_context = 16, .te_stream = 32, .te_size = 40
#define TRACE_2_1 TRACE_MEMBERS, .te_stride = 48, .last_action = 8
#define TRACE_2_4 TRACE_MEMBERS, .te_stride = 56, .te_time = 48, .nca_clock = 6496, .last_action = 8
#define TRACE_2_8_MEMBERS TRACE_MEMBERS, .te_mempool = 48, .te_time = 64, \
    .te_compile_context = 72, .nca_clock = 6496
#define TRACE_2_8 TRACE_2_8_MEMBERS, .te_stride = 104, .last_action = 8
#define TRACE_2_10(last) TRACE_2_8_MEMBERS, .te_stride = 136, .te_user_metadata = 104, \
    .last_action = (last)
#define ALLOCATOR_2_13 \
    .nca_device_allocator = 22584, STATS, .device_prop = true, .dca_large_blocks = 1064, \
    .dca_active_blocks = 1400, .dca_graph_pools = 2880, .bp_size = 168, .bp_unmapped = 96, \
    .bp_is_small = 144, .bp_owner = 152, .pp_has_id = true, .pp_large_blocks = 40, BLOCK_2_11
/* The ring's members: RingBuffer<TraceEntry> from 2.6 (max_entries, a mutex, next, the vector),
 * three members of the DeviceCachingAllocator before. */
#define RING(at) .dca_trace_entries = (at), .dca_trace_next = (at) - 8, .dca_trace_max = (at) - 56
#define OLD_RING(at) .dca_trace_entries = (at), .dca_trace_next = (at) - 24, \
    .dca_trace_max = (at) - 8
/* DeviceStats at +40 of every DeviceCachingAllocator; its members never moved. */
#define STATS .dca_allocated_bytes = 40 + 384, .dca_reserved_bytes = 40 + 480

static const struct cc_layout layouts[] = {
    /* read off 2.1.2+cu121: one mutex and one allocated-blocks map, not 67 shards of each */
    {.name = "2.1", .major = 2, .first_minor = 1, .last_minor = 1, .cuda_major = 12,
     .nca_device_allocator = 80, STATS,
     .dca_large_blocks = 992, .dca_active_blocks = 1216, .dca_graph_pools = 1424,
     .bp_size = 112, .bp_unmapped = 48, .bp_is_small = 96, .bp_owner = 104,
     .pp_large_blocks = 8,
     .blk_stream = 8, .blk_size = 48, .blk_requested = 56, .blk_pool = 64, .blk_ptr = 72,
     .blk_allocated = 80, .blk_mapped = 81, .blk_prev = 88, .blk_next = 96, .blk_context = 112,
     .blk_expandable = 144, TRACE_2_1, OLD_RING(1416)},
    /* read off 2.4.1+cu121; no cudaDeviceProp in the DeviceCachingAllocator yet */
    {.name = "2.4", .major = 2, .first_minor = 4, .last_minor = 4, .cuda_major = 12,
     .nca_device_allocator = 22512, STATS,
     .dca_large_blocks = 1016, .dca_active_blocks = 1256, .dca_graph_pools = 1480,
     .bp_size = 120, .bp_unmapped = 48, .bp_is_small = 96, .bp_owner = 104,
     .pp_large_blocks = 8, BLOCK_2_10, TRACE_2_4, OLD_RING(1472)},
    /* read off 2.6.0+cu124 and 2.7.1+cu126 */
    {.name = "2.6-2.7", .major = 2, .first_minor = 6, .last_minor = 7, .cuda_major = 12,
     .nca_device_allocator = 22584, STATS,
     .dca_large_blocks = 1016, .dca_active_blocks = 1256, .dca_graph_pools = 1520,
     .bp_size = 120, .bp_unmapped = 48, .bp_is_small = 96, .bp_owner = 104,
     .pp_large_blocks = 8, BLOCK_2_10, TRACE_2_4, RING(1512)},
    /* read off 2.8.0+cu128: PrivatePool starts with its id, as in 2.10, but no cudaDeviceProp */
    {.name = "2.8", .major = 2, .first_minor = 8, .last_minor = 8, .cuda_major = 12,
     .nca_device_allocator = 22584, STATS,
     .dca_large_blocks = 1016, .dca_active_blocks = 1256, .dca_graph_pools = 1552,
     .bp_size = 120, .bp_unmapped = 48, .bp_is_small = 96, .bp_owner = 104,
     .pp_has_id = true, .pp_large_blocks = 32, BLOCK_2_10, TRACE_2_8, RING(1544)},
    /* read off 2.9.1+cu128 */
    {.name = "2.9", .major = 2, .first_minor = 9, .last_minor = 9, .cuda_major = 12,
     .nca_device_allocator = 22584, STATS,
     .dca_large_blocks = 1016, .dca_active_blocks = 1256, .dca_graph_pools = 1560,
     .bp_size = 120, .bp_unmapped = 48, .bp_is_small = 96, .bp_owner = 104,
     .pp_has_id = true, .pp_large_blocks = 32, BLOCK_2_10, TRACE_2_8, RING(1552)},
    /* read off 2.10.0+cu128 */
    {.name = "2.10", .major = 2, .first_minor = 10, .last_minor = 10, .cuda_major = 12,
     .nca_device_allocator = 22584, STATS, .device_prop = true,
     .dca_large_blocks = 1024, .dca_active_blocks = 1264, .dca_graph_pools = 2704,
     .bp_size = 120, .bp_unmapped = 48, .bp_is_small = 96, .bp_owner = 104,
     .pp_has_id = true, .pp_large_blocks = 32, BLOCK_2_10, TRACE_2_10(8), RING(2696)},
    {.name = "2.11", .major = 2, .first_minor = 11, .last_minor = 11, .cuda_major = 13,
     .nca_device_allocator = 22584, STATS, .device_prop = true,
     .dca_large_blocks = 1024, .dca_active_blocks = 1264, .dca_graph_pools = 2736,
     .bp_size = 120, .bp_unmapped = 48, .bp_is_small = 96, .bp_owner = 104,
     .pp_has_id = true, .pp_large_blocks = 40, BLOCK_2_11, TRACE_2_10(8), RING(2728)},
    {.name = "2.12", .major = 2, .first_minor = 12, .last_minor = 12, .cuda_major = 13,
     .nca_device_allocator = 22584, STATS, .device_prop = true,
     .dca_large_blocks = 1032, .dca_active_blocks = 1272, .dca_graph_pools = 2744,
     .bp_size = 120, .bp_unmapped = 48, .bp_is_small = 96, .bp_owner = 104,
     .pp_has_id = true, .pp_large_blocks = 40, BLOCK_2_11, TRACE_2_10(8), RING(2736)},
    /* BlockPool grew a std::set (168 bytes, not 120): at +48 the free blocks again, in another
     * order, so the unmapped ranges moved to +96 */
    {.name = "2.13-2.14", .major = 2, .first_minor = 13, .last_minor = 14, .cuda_major = 13,
     ALLOCATOR_2_13, TRACE_2_10(9), RING(2872)},
    /* 2.13's allocator; TraceEntry grew internal_metadata_ (a std::string) at its end */
    {.name = "2.15", .major = 2, .first_minor = 15, .last_minor = 15, .cuda_major = 13,
     ALLOCATOR_2_13, TRACE_2_8_MEMBERS, .te_stride = 168, .te_user_metadata = 104,
     .last_action = 9, RING(2872)},
};
/* clang-format on */

#define NLAYOUTS (sizeof layouts / sizeof *layouts)

const struct cc_layout *cc_layout_for(unsigned major, unsigned minor)
{
    for (size_t i = 0; i < NLAYOUTS; i++)
        if (layouts[i].major == major && minor >= layouts[i].first_minor &&
            minor <= layouts[i].last_minor)
            return &layouts[i];
    return NULL;
}

const struct cc_layout *cc_layout_named(const char *name)
{
    for (size_t i = 0; i < NLAYOUTS; i++)
        if (strcmp(layouts[i].name, name) == 0)
            return &layouts[i];
    unsigned major, minor;   /* or a release a table covers: "2.14" */
    char end;
    return sscanf(name, "%u.%u%c", &major, &minor, &end) == 2 ? cc_layout_for(major, minor) : NULL;
}

static const struct cc_layout *const all[] = {
    &layouts[0], &layouts[1], &layouts[2], &layouts[3], &layouts[4],
    &layouts[5], &layouts[6], &layouts[7], &layouts[8], &layouts[9],
};
_Static_assert(sizeof all / sizeof *all == NLAYOUTS, "all lists every table");

static const char *table_name(size_t i)
{
    return all[i]->name;
}

const char *cc_layout_names(char *buf, size_t cap)
{
    return cl_join_names(buf, cap, NLAYOUTS, table_name);
}

const struct cc_layout *const *cc_layouts(size_t *n)
{
    *n = NLAYOUTS;
    return all;
}
