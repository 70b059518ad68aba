/* The address -> node map laid out by page (util/nodemap.c). */
#include <stdint.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "util/nodemap.h"

#define SMALL 48 /* bytes: an object from CPython's pools */
#define LARGE 4096

static void test_put_get(void)
{
    struct cl_nodemap m = {0};
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x1000), UINT32_MAX);   /* empty map */
    CU_ASSERT_TRUE(cl_nodemap_put(&m, 0x1000, SMALL, 7));
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x1000), 7);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x1010), UINT32_MAX);   /* same page, another slot */
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x2000), UINT32_MAX);   /* a page with no entry */
    /* 8-byte aligned: not a slot of the page's array, which would share 0x1000's */
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x1008), UINT32_MAX);
    CU_ASSERT_TRUE(cl_nodemap_put(&m, 0x1008, SMALL, 9));
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x1008), 9);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x1000), 7);
    /* the first and last slots of a page, and the top of the address space */
    CU_ASSERT_TRUE(cl_nodemap_put(&m, 0x1ff0, SMALL, 11));
    CU_ASSERT_TRUE(cl_nodemap_put(&m, UINT64_MAX - 15, SMALL, 12));
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x1ff0), 11);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, UINT64_MAX - 15), 12);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x2000), UINT32_MAX);
    cl_nodemap_prefetch(&m, 0x1000);   /* a hint: changes nothing */
    cl_nodemap_prefetch(&m, 0x5000);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x1000), 7);
    cl_nodemap_free(&m);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x1000), UINT32_MAX);
}

static void test_large_objects(void)
{
    struct cl_nodemap m = {0};
    /* a page of large objects only: an entry without an array */
    CU_ASSERT_TRUE(cl_nodemap_put(&m, 0x10000, LARGE, 1));
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x10000), 1);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x10010), UINT32_MAX);
    CU_ASSERT_EQUAL(m.npages, 0);
    /* then a small one on the same page (malloc'ed objects when pools are off), and the other
     * way round: each found where it was put */
    CU_ASSERT_TRUE(cl_nodemap_put(&m, 0x10800, SMALL, 2));
    CU_ASSERT_TRUE(cl_nodemap_put(&m, 0x20000, SMALL, 3));
    CU_ASSERT_TRUE(cl_nodemap_put(&m, 0x20400, LARGE, 4));
    CU_ASSERT_EQUAL(m.npages, 2);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x10000), 1);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x10800), 2);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x20000), 3);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x20400), 4);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, 0x20410), UINT32_MAX);
    /* a thousand one-page objects cost no array */
    for (uint32_t i = 0; i < 1000; i++)
        CU_ASSERT_TRUE_FATAL(cl_nodemap_put(&m, 0x100000 + 4096ull * i, LARGE, 100 + i));
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < 1000; i++)
        wrong += cl_nodemap_get(&m, 0x100000 + 4096ull * i) != 100 + i;
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(m.npages, 2);
    cl_nodemap_free(&m);
}

static void test_many_pages(void)
{
    /* A heap's worth: every 16 bytes of 8 MiB (more than one chunk of blocks holds), in
     * an order that jumps between pages, and one odd address in each page. */
    struct cl_nodemap m = {0};
    const uint64_t base = 0x7f0000000000ull, n = (8u << 20) / 16;
    uint32_t wrong = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t j = (i * 2654435761u) % n; /* a permutation: 2654435761 is odd, n a power of 2 */
        CU_ASSERT_TRUE_FATAL(cl_nodemap_put(&m, base + 16 * j, SMALL, (uint32_t)j));
    }
    for (uint64_t p = 0; p < n / 256; p++)
        CU_ASSERT_TRUE_FATAL(cl_nodemap_put(&m, base + 4096 * p + 8, SMALL, (uint32_t)(n + p)));
    for (uint64_t i = 0; i < n; i++)
        wrong += cl_nodemap_get(&m, base + 16 * i) != i;
    for (uint64_t p = 0; p < n / 256; p++)
        wrong += cl_nodemap_get(&m, base + 4096 * p + 8) != n + p;
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, base + 16 * n), UINT32_MAX);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, base - 16), UINT32_MAX);
    cl_nodemap_free(&m);
}

static void test_page_numbers(void)
{
    /* 40 objects of 96 bytes, put from the page's end down: each number goes in before the
     * others, and the page's block grows to hold 40, not a number per slot. */
    struct cl_nodemap m = {0};
    const uint64_t page = 0x55550000ull;
    for (uint32_t i = 40; i-- > 0;)
        CU_ASSERT_TRUE_FATAL(cl_nodemap_put(&m, page + 96 * i, 96, 1000 + i));
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < 40; i++)
        wrong += cl_nodemap_get(&m, page + 96 * i) != 1000 + i;
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, page + 96 * 40), UINT32_MAX);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, page + 16), UINT32_MAX); /* inside an object */
    CU_ASSERT_EQUAL(m.npages, 1);
    CU_ASSERT_EQUAL(m.pages[0].block_size, 7); /* block_sizes[7] is 48 */
    /* a number given again replaces the old one */
    CU_ASSERT_TRUE(cl_nodemap_put(&m, page + 96 * 3, 96, 7));
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, page + 96 * 3), 7);
    CU_ASSERT_EQUAL(cl_nodemap_get(&m, page + 96 * 4), 1004);
    cl_nodemap_free(&m);
}

static void test_groups_far_apart(void)
{
    /* Groups far apart, the lowest and highest of all, and two that share a slot of the table of
     * near groups while it has 1024 (0 and 0x8000 have the same low 10 bits): the one put
     * there first is then found by hash. */
    static const uint64_t at[] = {
        0x3fff0, /* the first group's last page */
        0x40000, /* the second group */
        (1ull << 33) - 16, /* group 0x7fff */
        1ull << 33, /* group 0x8000, in group 0's slot */
        (1ull << 48) - 16, /* the last group below 256 TiB */
        1ull << 48, /* beyond 4-level page tables */
        0x7fffffffe000ull, /* where a stack lies */
        UINT64_MAX - 15, /* the last slot of all */
    };
    const size_t n = sizeof at / sizeof at[0];
    struct cl_nodemap m = {0};
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_TRUE_FATAL(cl_nodemap_put(&m, at[i], SMALL, (uint32_t)i));
    uint32_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        wrong += cl_nodemap_get(&m, at[i]) != i;
        wrong += cl_nodemap_get(&m, at[i] ^ 0x10) != UINT32_MAX; /* the slot beside it */
        wrong += cl_nodemap_get(&m, at[i] ^ (1ull << 18)) != UINT32_MAX; /* the group beside */
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(m.ngroups, n);
    /* a heap's worth of groups in a row: the table of near groups grows, each keeps its slot */
    const uint64_t base = 0x7f0000000000ull;
    for (uint64_t g = 0; g < 5000; g++)
        CU_ASSERT_TRUE_FATAL(cl_nodemap_put(&m, base + (g << 18), SMALL, (uint32_t)(n + g)));
    for (uint64_t g = 0; g < 5000; g++)
        wrong += cl_nodemap_get(&m, base + (g << 18)) != n + g;
    for (size_t i = 0; i < n; i++)
        wrong += cl_nodemap_get(&m, at[i]) != i;
    CU_ASSERT_EQUAL(wrong, 0);
    cl_nodemap_free(&m);
}

void register_util_nodemap_tests(void)
{
    static const struct tu_test tests[] = {
        {"put and get, aligned and not", test_put_get},
        {"large objects in the hash map, beside small ones", test_large_objects},
        {"a heap's worth of pages", test_many_pages},
        {"a page's numbers in address order", test_page_numbers},
        {"groups far apart, and many in a row", test_groups_far_apart},
        {NULL, NULL},
    };
    tu_add_suite("util/nodemap", tests);
}
