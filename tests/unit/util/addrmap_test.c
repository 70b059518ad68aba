/* The address -> index map under the object graph. */
#include <stdint.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "util/addrmap.h"

static void test_put_get(void)
{
    struct cl_addrmap m = {0};
    bool inserted;
    CU_ASSERT_EQUAL(cl_addrmap_get(&m, 0x1000), UINT32_MAX);   /* empty map */
    CU_ASSERT_EQUAL(cl_addrmap_put(&m, 0x1000, 7, &inserted), 7);
    CU_ASSERT_TRUE(inserted);
    CU_ASSERT_EQUAL(cl_addrmap_put(&m, 0x1000, 9, &inserted), 7);   /* first value stays */
    CU_ASSERT_FALSE(inserted);
    CU_ASSERT_EQUAL(cl_addrmap_get(&m, 0x1000), 7);
    CU_ASSERT_EQUAL(cl_addrmap_get(&m, 0x1008), UINT32_MAX);
    CU_ASSERT_EQUAL(cl_addrmap_put(&m, 0, 1, &inserted), UINT32_MAX);   /* 0 is never an object */
    CU_ASSERT_FALSE(inserted);
    cl_addrmap_free(&m);
}

static void test_growth(void)
{
    /* Heap-like keys: 16-byte stride, many collisions in the low bits, across several regrowths. */
    struct cl_addrmap m = {0};
    bool inserted;
    const uint32_t n = 200000;
    for (uint32_t i = 0; i < n; i++)
        CU_ASSERT_EQUAL_FATAL(cl_addrmap_put(&m, 0x7f0000000000ull + 16ull * i, i, &inserted), i);
    CU_ASSERT_EQUAL(m.n, n);
    CU_ASSERT_TRUE(m.cap >= n * 4 / 3);
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < n; i++)
        wrong += cl_addrmap_get(&m, 0x7f0000000000ull + 16ull * i) != i;
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(cl_addrmap_get(&m, 0x7f0000000000ull + 16ull * n), UINT32_MAX);
    cl_addrmap_free(&m);
    CU_ASSERT_EQUAL(m.cap, 0);
}

static void test_find_then_insert(void)
{
    struct cl_addrmap m = {0};
    size_t slot;
    CU_ASSERT_EQUAL(cl_addrmap_find(&m, 0x2000, &slot), UINT32_MAX); /* a miss reserves a slot */
    CU_ASSERT_NOT_EQUAL_FATAL(slot, SIZE_MAX);
    cl_addrmap_insert_at(&m, slot, 0x2000, 5);
    CU_ASSERT_EQUAL(cl_addrmap_find(&m, 0x2000, &slot), 5); /* a hit reserves nothing */
    CU_ASSERT_EQUAL(slot, SIZE_MAX);
    CU_ASSERT_EQUAL(cl_addrmap_find(&m, 0, &slot), UINT32_MAX);
    CU_ASSERT_EQUAL(slot, SIZE_MAX);
    /* A miss that is not followed by an insert leaves the map as it was. */
    CU_ASSERT_EQUAL(cl_addrmap_find(&m, 0x2008, &slot), UINT32_MAX);
    CU_ASSERT_EQUAL(m.n, 1);
    CU_ASSERT_EQUAL(cl_addrmap_get(&m, 0x2008), UINT32_MAX);
    cl_addrmap_free(&m);
}

static void test_dense_windows(void)
{
    /* Every 8 bytes of 1 MiB an object, and keys that differ only above the window: the slots of
     * neighbouring addresses are side by side, so full windows collide and must still all be
     * found, with misses answered. */
    struct cl_addrmap m = {0};
    bool inserted;
    uint32_t n = 0, wrong = 0;
    for (uint64_t a = 0x10000000; a < 0x10100000; a += 8, n++)
        CU_ASSERT_EQUAL_FATAL(cl_addrmap_put(&m, a, n, &inserted), n);
    for (uint64_t k = 1; k <= 64; k++, n++)
        CU_ASSERT_EQUAL_FATAL(cl_addrmap_put(&m, k << 40, n, &inserted), n);
    n = 0;
    for (uint64_t a = 0x10000000; a < 0x10100000; a += 8, n++)
        wrong += cl_addrmap_get(&m, a) != n;
    for (uint64_t k = 1; k <= 64; k++, n++)
        wrong += cl_addrmap_get(&m, k << 40) != n;
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(cl_addrmap_get(&m, 0x10100000), UINT32_MAX);
    CU_ASSERT_EQUAL(cl_addrmap_get(&m, 0x10000004), UINT32_MAX); /* not a key, in a window */
    cl_addrmap_free(&m);
}

void register_util_addrmap_tests(void)
{
    static const struct tu_test tests[] = {
        {"put and get", test_put_get},
        {"growth with strided keys", test_growth},
        {"find, then insert at the slot found", test_find_then_insert},
        {"windows of neighbouring addresses, packed full", test_dense_windows},
        {NULL, NULL},
    };
    tu_add_suite("util/addrmap", tests);
}
