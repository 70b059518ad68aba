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

void register_util_addrmap_tests(void)
{
    static const struct tu_test tests[] = {
        {"put and get", test_put_get},
        {"growth with strided keys", test_growth},
        {NULL, NULL},
    };
    tu_add_suite("util/addrmap", tests);
}
