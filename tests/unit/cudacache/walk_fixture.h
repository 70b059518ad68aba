/* The allocator walker's fixture image, shared by tests/unit/cudacache/walk_test.c and the
 * fuzz harness tests/fuzz/walk.c: a hand-built 2.13-2.14 caching allocator (not a real one; the
 * real allocator is checked on the simulated device by the integration tests) with one device
 * and one cudaMalloc'ed segment split into an allocated and a free block, served at BASE through
 * cl_target_ops. Header-only, as testutil.h: each includer gets its own image. */
#ifndef CULEAK_TESTS_UNIT_CUDACACHE_WALK_FIXTURE_H
#define CULEAK_TESTS_UNIT_CUDACACHE_WALK_FIXTURE_H

#include <stdint.h>
#include <string.h>

#include "cudacache/layout.h"
#include "image.h"
#include "target/target.h"

#define BASE 0x100000u
#define MIB (1ull << 20)
static unsigned char img[16 * CL_PAGE_SIZE];

enum {   /* where the fixture puts things, as offsets into img */
       NCA = 0,
       DEVICES = 0x6000,
       DCA = 0x7000,
       BLOCK_A = 0x8000,
       BLOCK_B = 0x8100,
       NODE = 0x9000,
       ACTIVE = 0xa000,
       EMPTY_TABLE = 0xa100,
};
static const uint64_t device_ptr = 0x7f0000000000ull;

static struct tu_image image = {.base = BASE, .bytes = img, .size = sizeof img};

/* Writers at offsets into img (the shared image's, tests/unit/image.h). */
static inline void put64(uint64_t off, uint64_t v)
{
    tu_put64(&image, BASE + off, v);
}
static inline void put8(uint64_t off, uint8_t v)
{
    tu_put8(&image, BASE + off, v);
}

/* An empty std::set at off: no root, leftmost and rightmost the header itself. */
static inline void empty_set(uint64_t off)
{
    put64(off + 24, BASE + off + 8);
    put64(off + 32, BASE + off + 8);
}

/* An empty ska table at off: no slots, three empty lookups into a shared table. */
static inline void empty_ska(uint64_t off)
{
    put64(off, BASE + EMPTY_TABLE);
    put8(off + 17, 3);
}

/* Writes the fixture into img; its layout, or NULL when the table is gone. */
static inline const struct cc_layout *fixture_build(void)
{
    const struct cc_layout *l = cc_layout_named("2.14");
    if (!l)
        return NULL;
    memset(img, 0, sizeof img);
    memset(img + EMPTY_TABLE, 0xff, 4 * 32);   /* distance -1: empty entries */
    put64(NCA + l->nca_device_allocator, BASE + DEVICES);
    put64(NCA + l->nca_device_allocator + 8, BASE + DEVICES + 8);
    put64(DEVICES, BASE + DCA);
    put64(DCA + l->dca_allocated_bytes, MIB);
    put64(DCA + l->dca_reserved_bytes, 2 * MIB);
    uint64_t large = DCA + l->dca_large_blocks, small = large + l->bp_size;
    empty_set(large + l->bp_unmapped);
    empty_set(small);
    empty_set(small + l->bp_unmapped);
    put8(small + l->bp_is_small, 1);
    empty_ska(DCA + l->dca_graph_pools);
    /* the large pool's free set: one node holding block B */
    put64(large + 16, BASE + NODE);
    put64(large + 24, BASE + NODE);
    put64(large + 32, BASE + NODE);
    put64(large + 40, 1);
    put64(NODE + 8, BASE + large + 8);
    put64(NODE + 32, BASE + BLOCK_B);
    /* the active set: block A in slot 0 of 4 */
    memset(img + ACTIVE, 0xff, 6 * 16);
    put64(DCA + l->dca_active_blocks, BASE + ACTIVE);
    put64(DCA + l->dca_active_blocks + 8, 3);
    put8(DCA + l->dca_active_blocks + 17, 2);
    put64(DCA + l->dca_active_blocks + 24, 1);
    put8(ACTIVE, 0);
    put64(ACTIVE + 8, BASE + BLOCK_A);
    /* the segment: A (allocated) then B (free), 1 MiB each */
    const uint64_t blocks[2] = {BLOCK_A, BLOCK_B};
    for (int i = 0; i < 2; i++) {
        uint64_t b = blocks[i];
        put64(b + l->blk_size, MIB);
        put64(b + l->blk_requested, i ? 0 : MIB - 100);
        put64(b + l->blk_pool, BASE + large);
        put64(b + l->blk_ptr, device_ptr + (uint64_t)i * MIB);
        put8(b + l->blk_allocated, i == 0);
        put8(b + l->blk_mapped, 1);
        put64(b + l->blk_prev, i ? BASE + BLOCK_A : 0);
        put64(b + l->blk_next, i ? 0 : BASE + BLOCK_B);
    }
    return l;
}

/* A target serving img at BASE; NULL on allocation failure. */
static inline struct cl_target *fixture_target(void)
{
    struct cl_open_options opt = {.cache_pages = 16};
    return tu_image_target(&image, CL_TARGET_GDB, &opt, NULL, 0);
}

#endif
