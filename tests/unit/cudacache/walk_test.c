/* The allocator walk over a hand-built fixture image (the real allocator is checked on the
 * simulated device by the integration tests): a 2.13-2.15 allocator with one device and one
 * cudaMalloc'ed segment split into an allocated and a free block. Read with its own layout it
 * walks; read with another line's layout, or corrupted (a cyclic tree, a broken chain, a block
 * in no pool, statistics that disagree), it is refused, and every traversal stays bounded. */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cudacache/walk.h"
#include "suites.h"
#include "target/target.h"
#include "testutil.h"

#define BASE 0x100000u
#define MIB (1ull << 20)
static unsigned char img[16 * CL_PAGE_SIZE];

enum {   /* where the fixture puts things, as offsets into img */
    NCA = 0, DEVICES = 0x6000, DCA = 0x7000, BLOCK_A = 0x8000, BLOCK_B = 0x8100,
    NODE = 0x9000, ACTIVE = 0xa000, EMPTY_TABLE = 0xa100,
};
static const uint64_t device_ptr = 0x7f0000000000ull;

static int image_read_page(struct cl_target *t, uint64_t addr, void *page)
{
    if (addr < BASE || addr - BASE >= sizeof img)
        return cl_error_set(&t->err, CL_E_UNREADABLE, "fixture: no page 0x%llx",
                            (unsigned long long)addr);
    memcpy(page, img + (addr - BASE), CL_PAGE_SIZE);
    return 0;
}

static const struct cl_target_ops image_ops = {image_read_page, NULL};

static void put64(uint64_t off, uint64_t v) { memcpy(img + off, &v, 8); }
static void put8(uint64_t off, uint8_t v) { img[off] = v; }

/* An empty std::set at off: no root, leftmost and rightmost the header itself. */
static void empty_set(uint64_t off)
{
    put64(off + 24, BASE + off + 8);
    put64(off + 32, BASE + off + 8);
}

/* An empty ska table at off: no slots, three empty lookups into a shared table. */
static void empty_ska(uint64_t off)
{
    put64(off, BASE + EMPTY_TABLE);
    put8(off + 17, 3);
}

static const struct cc_layout *build(void)
{
    const struct cc_layout *l = cc_layout_named("2.14");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
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

static struct cl_target *image_target(void)
{
    struct cl_target *t;
    struct cl_open_options opt = {.cache_pages = 16};
    CU_ASSERT_EQUAL_FATAL(cl_target_new(&image_ops, CL_TARGET_GDB, NULL, &opt, &t), 0);
    const struct cl_mapping m = {BASE, BASE + sizeof img, 0, CL_MAP_R | CL_MAP_W, NULL};
    CU_ASSERT_EQUAL_FATAL(cl_mappings_add(&t->maps, &m), 0);
    cl_mappings_sort(&t->maps);
    return t;
}

/* Walks the current image with layout l: the status, and the allocator when it is 0. */
static int walk(const struct cc_layout *l, struct cc_allocator *a)
{
    struct cl_target *t = image_target();
    struct cl_error err;
    memset(a, 0, sizeof *a);
    int rc = cc_walk_object(t, l, BASE + NCA, a, &err);
    cl_target_close(t);
    return rc;
}

static void test_walks_its_own_layout(void)
{
    struct cc_allocator a;
    CU_ASSERT_EQUAL_FATAL(walk(build(), &a), 0);
    CU_ASSERT_EQUAL_FATAL(a.ndevices, 1);
    const struct cc_device *d = &a.devices[0];
    CU_ASSERT_EQUAL(d->reserved, 2 * MIB);
    CU_ASSERT_EQUAL(d->allocated, MIB);
    CU_ASSERT_EQUAL_FATAL(d->nsegments, 1);
    CU_ASSERT_EQUAL(d->segments[0].addr, device_ptr);
    CU_ASSERT_EQUAL(d->segments[0].size, 2 * MIB);
    CU_ASSERT_FALSE(d->segments[0].small);
    CU_ASSERT_FALSE(d->segments[0].expandable);
    CU_ASSERT_EQUAL_FATAL(d->nblocks, 2);
    CU_ASSERT_EQUAL(d->blocks[0].state, CC_ACTIVE_ALLOCATED);
    CU_ASSERT_EQUAL(d->blocks[0].requested, MIB - 100);
    CU_ASSERT_EQUAL(d->blocks[1].state, CC_INACTIVE);
    CU_ASSERT_EQUAL(d->blocks[1].ptr, device_ptr + MIB);
    cc_free(&a);
}

static void test_other_layouts_refused(void)
{
    size_t n;
    const struct cc_layout *all = cc_layouts(&n);
    const struct cc_layout *own = build();
    for (size_t i = 0; i < n; i++) {
        if (&all[i] == own)
            continue;
        struct cc_allocator a;
        CU_ASSERT_EQUAL(walk(&all[i], &a), CL_E_UNSUPPORTED);
        CU_ASSERT_EQUAL(a.ndevices, 0);
    }
}

static void test_cyclic_trees_bounded(void)
{
    const struct cc_layout *l = build();
    uint64_t large = DCA + l->dca_large_blocks;
    struct cc_allocator a;
    put64(large + 40, 1000000);              /* a big count, and a node that is its own child */
    put64(NODE + 24, BASE + NODE);
    CU_ASSERT_EQUAL(walk(l, &a), CL_E_UNSUPPORTED);
    build();
    put64(NODE + 16, BASE + NODE);           /* its own left child */
    put64(large + 40, 1000000);
    CU_ASSERT_EQUAL(walk(l, &a), CL_E_UNSUPPORTED);
    build();
    put64(NODE + 8, BASE + NODE);            /* its own parent */
    CU_ASSERT_EQUAL(walk(l, &a), CL_E_UNSUPPORTED);
}

static void test_corruption_refused(void)
{
    const struct cc_layout *l = build();
    struct cc_allocator a;
    put64(BLOCK_B + l->blk_prev, 0);                       /* the chain does not link back */
    CU_ASSERT_EQUAL(walk(l, &a), CL_E_UNSUPPORTED);
    build();
    put64(BLOCK_B + l->blk_ptr, device_ptr + 2 * MIB);     /* a gap inside the segment */
    CU_ASSERT_EQUAL(walk(l, &a), CL_E_UNSUPPORTED);
    build();
    put64(BLOCK_A + l->blk_pool, BASE + DCA);              /* a block in no known pool */
    CU_ASSERT_EQUAL(walk(l, &a), CL_E_UNSUPPORTED);
    build();
    put64(DCA + l->dca_reserved_bytes, 3 * MIB);           /* statistics that disagree */
    CU_ASSERT_EQUAL(walk(l, &a), CL_E_UNSUPPORTED);
    build();
    put64(DCA + l->dca_active_blocks + 8, 1ull << 40);     /* an absurd slot count */
    CU_ASSERT_EQUAL(walk(l, &a), CL_E_UNSUPPORTED);
    build();
    put64(NCA + l->nca_device_allocator + 8, BASE + DEVICES - 8);   /* end before begin */
    CU_ASSERT_EQUAL(walk(l, &a), CL_E_UNSUPPORTED);
}

/* An expandable segment's tail without memory: unmapped, and not counted as reserved. */
static void test_unmapped_tail(void)
{
    const struct cc_layout *l = build();
    put8(BLOCK_B + l->blk_mapped, 0);
    put64(BLOCK_A + l->blk_expandable, BASE + 0xb000);
    put64(DCA + l->dca_reserved_bytes, MIB);
    struct cc_allocator a;
    CU_ASSERT_EQUAL_FATAL(walk(l, &a), 0);
    const struct cc_segment *s = &a.devices[0].segments[0];
    CU_ASSERT_TRUE(s->expandable);
    CU_ASSERT_EQUAL(s->size, 2 * MIB);
    CU_ASSERT_EQUAL(s->mapped, MIB);
    CU_ASSERT_EQUAL(a.devices[0].blocks[1].state, CC_UNMAPPED);
    cc_free(&a);
}

static void test_layout_names(void)
{
    CU_ASSERT_PTR_EQUAL(cc_layout_named("2.14"), cc_layout_named("2.13-2.15"));
    CU_ASSERT_PTR_EQUAL(cc_layout_named("2.13"), cc_layout_for(2, 13));
    CU_ASSERT_PTR_EQUAL(cc_layout_named("2.7"), cc_layout_named("2.6-2.7"));
    CU_ASSERT_PTR_NULL(cc_layout_named("2.5"));
    CU_ASSERT_PTR_NULL(cc_layout_named("2.14x"));
    CU_ASSERT_PTR_NULL(cc_layout_for(3, 0));
}

void register_cudacache_walk_tests(void)
{
    static const struct tu_test tests[] = {
        {"fixture image: walks with its own layout", test_walks_its_own_layout},
        {"fixture image: every other layout refused", test_other_layouts_refused},
        {"fixture image: cyclic trees stay bounded", test_cyclic_trees_bounded},
        {"fixture image: corruption refused", test_corruption_refused},
        {"fixture image: expandable tail unmapped", test_unmapped_tail},
        {"layout tables by name and release", test_layout_names},
        {NULL, NULL},
    };
    tu_add_suite("cudacache/walk", tests);
}
