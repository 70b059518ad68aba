/* GC list walks over a hand-built image: a list of PyGC_Heads that comes back to its head is
 * walked node by node; links that loop short of the head, or break, stop the walk at once (a
 * looped list costs a few times its length, not the bound: issue 14), and no walk passes its
 * bound, which the image's writable memory sets. */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpython/gclist.h"
#include "image.h"
#include "suites.h"
#include "target/target.h"
#include "testutil.h"

#define BASE 0x200000u
#define NODES 64
static unsigned char img[4 * CL_PAGE_SIZE];

static struct tu_image image = {.base = BASE, .bytes = img, .size = sizeof img};

/* The head at BASE, node i (1-based) at BASE + 32 i: PyGC_Head {_gc_next, _gc_prev}. */
static uint64_t node(unsigned i)
{
    return BASE + 32u * i;
}

static void set_next(unsigned from, uint64_t to, uint64_t flags)
{
    uint64_t v = to | flags;
    memcpy(img + (node(from) - BASE), &v, sizeof v);
}

/* A well-formed list of n nodes; the _gc_next words carry a flag bit, as 3.12+ lists may. */
static void build(unsigned n)
{
    memset(img, 0, sizeof img);
    set_next(0, n ? node(1) : node(0), 0);
    for (unsigned i = 1; i <= n; i++)
        set_next(i, i < n ? node(i + 1) : node(0), 1);
}

static struct cl_target *image_target(void)
{
    struct cl_open_options opt = {.cache_pages = 4};
    struct cl_target *t = tu_image_target(&image, CL_TARGET_GDB, &opt, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

struct visits {
    uint64_t n, last, stop_after;   /* stop_after 0: never stop */
    unsigned seen[NODES + 1];
};

static bool count(void *arg, uint64_t addr)
{
    struct visits *v = arg;
    v->n++;
    v->last = addr;
    if (addr >= node(1) && (addr - BASE) % 32 == 0 && (addr - BASE) / 32 <= NODES)
        v->seen[(addr - BASE) / 32]++;
    return v->n != v->stop_after;
}

static uint64_t walk_until(uint64_t bound, uint64_t stop_after, struct visits *v, bool *broken)
{
    struct cl_target *t = image_target();
    memset(v, 0, sizeof *v);
    v->stop_after = stop_after;
    uint64_t n = py_gc_list_walk(t, node(0), bound, count, v, broken);
    cl_target_close(t);
    return n;
}

static uint64_t walk(uint64_t bound, struct visits *v, bool *broken)
{
    return walk_until(bound, 0, v, broken);
}

static void test_whole_list(void)
{
    struct visits v;
    bool broken = true;
    build(NODES);
    CU_ASSERT_EQUAL(walk(1000, &v, &broken), NODES);
    CU_ASSERT_FALSE(broken);
    for (unsigned i = 1; i <= NODES; i++)
        CU_ASSERT_EQUAL(v.seen[i], 1);
    build(0);
    CU_ASSERT_EQUAL(walk(1000, &v, &broken), 0);
    CU_ASSERT_FALSE(broken);
}

/* The last node links back into the list, at every distance: the walk ends, broken, having
 * visited each node a few times at most. */
static void test_loops_stop_at_revisit(void)
{
    for (unsigned back = 1; back <= NODES; back++) {
        struct visits v;
        bool broken = false;
        build(NODES);
        set_next(NODES, node(back), 1);
        uint64_t n = walk(200000000u, &v, &broken);
        CU_ASSERT_TRUE(broken);
        CU_ASSERT_TRUE(n >= NODES && n <= 3u * NODES);
        for (unsigned i = 1; i <= NODES; i++)
            CU_ASSERT_TRUE(v.seen[i] >= 1 && v.seen[i] <= 3);
    }
}

static void test_breaks_and_bounds(void)
{
    struct visits v;
    bool broken = false;
    build(NODES);
    set_next(10, 0, 0);   /* a NULL link */
    CU_ASSERT_EQUAL(walk(1000, &v, &broken), 10);
    CU_ASSERT_TRUE(broken);
    build(NODES);
    set_next(10, 0x10, 0);   /* an unreadable node */
    CU_ASSERT_EQUAL(walk(1000, &v, &broken), 11);
    CU_ASSERT_TRUE(broken);
    build(NODES);
    CU_ASSERT_EQUAL(walk(5, &v, &broken), 5);
    CU_ASSERT_TRUE(broken);
    CU_ASSERT_EQUAL(v.last, node(5));
}

/* The visitor can end the walk (culeak's walk, once it holds --max-objects): no further node
 * is read, and the list is not called broken. */
static void test_visitor_stops(void)
{
    struct visits v;
    bool broken = true;
    build(NODES);
    CU_ASSERT_EQUAL(walk_until(1000, 4, &v, &broken), 4);
    CU_ASSERT_FALSE(broken);
    CU_ASSERT_EQUAL(v.last, node(4));
}

static void test_bound_from_memory(void)
{
    struct cl_target *t = image_target();
    CU_ASSERT_EQUAL(py_gc_list_bound(t, 32, UINT64_MAX), sizeof img / 32);
    CU_ASSERT_EQUAL(py_gc_list_bound(t, 32, 7), 7);
    cl_target_close(t);
}

void register_cpython_gclist_tests(void)
{
    static const struct tu_test tests[] = {
        {"GC list: walked node by node back to its head", test_whole_list},
        {"GC list: a loop stops at the first revisit", test_loops_stop_at_revisit},
        {"GC list: a break or the bound stops the walk", test_breaks_and_bounds},
        {"GC list: the visitor can stop the walk", test_visitor_stops},
        {"GC list: the bound comes from writable memory", test_bound_from_memory},
        {NULL, NULL},
    };
    tu_add_suite("cpython/gclist", tests);
}
