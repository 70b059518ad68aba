/* The allocator walk over a hand-built fixture image (walk_fixture.h; the real allocator is
 * checked on the simulated device by the integration tests). Read with its own layout it
 * walks; read with another line's layout, or corrupted (a cyclic tree, a broken chain, a block
 * in no pool, statistics that disagree), it is refused, and every traversal stays bounded. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <CUnit/CUnit.h>

#include "cudacache/walk.h"
#include "cudacache/walk_fixture.h"
#include "suites.h"
#include "target/target.h"
#include "testutil.h"

static const struct cc_layout *build(void)
{
    const struct cc_layout *l = fixture_build();
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    return l;
}

static struct cl_target *image_target(void)
{
    struct cl_target *t = fixture_target();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
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

/* Whether two tables read the allocator alike (2.15's differs from 2.13's in its trace only):
 * the members before the trace's, padding zeroed as in every static table. */
static bool same_allocator(const struct cc_layout *x, const struct cc_layout *y)
{
    size_t from = offsetof(struct cc_layout, nca_device_allocator),
           to = offsetof(struct cc_layout, dca_trace_entries);
    return memcmp((const char *)x + from, (const char *)y + from, to - from) == 0;
}

static void test_other_layouts_refused(void)
{
    size_t n;
    const struct cc_layout *const *all = cc_layouts(&n);
    const struct cc_layout *own = build();
    for (size_t i = 0; i < n; i++) {
        if (same_allocator(all[i], own))
            continue;
        struct cc_allocator a;
        CU_ASSERT_EQUAL(walk(all[i], &a), CL_E_UNSUPPORTED);
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

/* Regression (found by tests/fuzz/walk.c): blocks whose prev pointers form a cycle sent the
 * search for the chain's head round it 2^24 times per block (9 s of CPU under the sanitizers).
 * A chain holds no more blocks than the walk found, so it is refused after that many steps. */
static void test_prev_cycle_bounded(void)
{
    const struct cc_layout *l = build();
    put64(BLOCK_A + l->blk_prev, BASE + BLOCK_B);   /* A <-> B through prev */
    struct cc_allocator a;
    clock_t start = clock();
    CU_ASSERT_EQUAL(walk(l, &a), CL_E_UNSUPPORTED);
    CU_ASSERT((double)(clock() - start) / CLOCKS_PER_SEC < 0.5);   /* CPU time, not wall */
}

/* Regression (found by tests/fuzz/walk.c): a tree whose node_count says 2^24 and whose node is
 * its own right child, or its own parent's right child, ran the 4n + 4 step budget of that count:
 * 2^26 steps. A walk steps onto a node at most three times, so it stops after a few. */
static void test_tree_cycle_with_huge_count(void)
{
    const struct cc_layout *l = build();
    uint64_t large = DCA + l->dca_large_blocks;
    struct cc_allocator a;
    put64(large + 40, 1u << 24);
    put64(NODE + 24, BASE + NODE);            /* its own right child */
    clock_t start = clock();
    CU_ASSERT_EQUAL(walk(l, &a), CL_E_UNSUPPORTED);
    build();
    put64(large + 40, 1u << 24);
    put64(NODE + 8, BASE + NODE);             /* its own parent, and that parent's right child */
    put64(NODE + 24, 0);
    CU_ASSERT_EQUAL(walk(l, &a), CL_E_UNSUPPORTED);
    CU_ASSERT((double)(clock() - start) / CLOCKS_PER_SEC < 0.5);   /* CPU time, not wall */
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
    CU_ASSERT_PTR_EQUAL(cc_layout_named("2.14"), cc_layout_named("2.13-2.14"));
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
        {"fixture image: a cycle of prev pointers is bounded", test_prev_cycle_bounded},
        {"fixture image: a looped tree with a huge count is bounded",
         test_tree_cycle_with_huge_count},
        {"fixture image: expandable tail unmapped", test_unmapped_tail},
        {"layout tables by name and release", test_layout_names},
        {NULL, NULL},
    };
    tu_add_suite("cudacache/walk", tests);
}
