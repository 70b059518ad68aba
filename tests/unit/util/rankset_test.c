/* Rank sets: on random subsets of every density, around word edges, each member's number is its
 * place among the members in order and every other number, and every one past the end, is none. */
#include <stdlib.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "util/rankset.h"

static void check_subset(uint32_t n, unsigned percent, uint64_t *seed)
{
    uint8_t *mark = calloc(n + 1, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mark);
    for (uint32_t v = 0; v < n; v++)
        mark[v] = tu_random(seed) % 100 < percent;
    struct cl_rankset s;
    CU_ASSERT_TRUE_FATAL(cl_rankset_build(&s, mark, n));
    uint32_t next = 0, wrong = 0;
    for (uint32_t v = 0; v < n; v++)
        wrong += cl_rankset_number(&s, v) != (mark[v] ? next++ : CL_RANKSET_NONE);
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(s.count, next);
    CU_ASSERT_EQUAL(cl_rankset_number(&s, n), CL_RANKSET_NONE);
    CU_ASSERT_EQUAL(cl_rankset_number(&s, UINT32_MAX), CL_RANKSET_NONE);
    cl_rankset_free(&s);
    CU_ASSERT_PTR_NULL(s.bits);
    free(mark);
}

static void test_random_subsets(void)
{
    static const uint32_t sizes[] = {0, 1, 63, 64, 65, 127, 128, 129, 1000, 100003};
    static const unsigned percents[] = {0, 1, 50, 99, 100};
    uint64_t seed = 7;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t p = 0; p < sizeof percents / sizeof *percents; p++)
            check_subset(sizes[i], percents[p], &seed);
}

void register_util_rankset_tests(void)
{
    static const struct tu_test tests[] = {
        {"members numbered in order, others none", test_random_subsets},
        {NULL, NULL},
    };
    tu_add_suite("util/rankset", tests);
}
