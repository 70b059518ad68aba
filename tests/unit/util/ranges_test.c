/* Sets of address ranges: sorted and merged, then asked about an address. */
#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "util/ranges.h"

static void test_merge_and_contain(void)
{
    struct cl_ranges r = {0};
    CU_ASSERT_TRUE(cl_ranges_add(&r, 0x3000, 0x4000));
    CU_ASSERT_TRUE(cl_ranges_add(&r, 0x1000, 0x2000));
    CU_ASSERT_TRUE(cl_ranges_add(&r, 0x1800, 0x2800)); /* overlaps the one before */
    CU_ASSERT_TRUE(cl_ranges_add(&r, 0x2800, 0x2900)); /* touches it */
    cl_ranges_sort(&r);
    CU_ASSERT_EQUAL(r.n, 2);
    CU_ASSERT_EQUAL(r.v[0].start, 0x1000);
    CU_ASSERT_EQUAL(r.v[0].end, 0x2900);
    CU_ASSERT_FALSE(cl_ranges_contain(&r, 0xfff));
    CU_ASSERT_TRUE(cl_ranges_contain(&r, 0x1000));
    CU_ASSERT_TRUE(cl_ranges_contain(&r, 0x28ff));
    CU_ASSERT_FALSE(cl_ranges_contain(&r, 0x2900)); /* an end is outside */
    CU_ASSERT_FALSE(cl_ranges_contain(&r, 0x2fff));
    CU_ASSERT_TRUE(cl_ranges_contain(&r, 0x3fff));
    CU_ASSERT_FALSE(cl_ranges_contain(&r, 0x4000));
    /* the first range that ends after an address: where a walk over [addr, ...) starts */
    CU_ASSERT_EQUAL(cl_ranges_first_after(&r, 0), 0);
    CU_ASSERT_EQUAL(cl_ranges_first_after(&r, 0x28ff), 0);
    CU_ASSERT_EQUAL(cl_ranges_first_after(&r, 0x2900), 1);
    CU_ASSERT_EQUAL(cl_ranges_first_after(&r, 0x4000), 2);
    CU_ASSERT_FALSE(r.lost);
    cl_ranges_free(&r);
    CU_ASSERT_FALSE(cl_ranges_contain(&r, 0x1000)); /* empty */
}

void register_util_ranges_tests(void)
{
    static const struct tu_test tests[] = {
        {"sort merges, contain", test_merge_and_contain},
        {NULL, NULL},
    };
    tu_add_suite("util/ranges", tests);
}
