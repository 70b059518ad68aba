/* The torch layout tables (torch/layouts.c) as data: each release line has at most one tensor and
 * one autograd table, names are unique and found by name, and the lines the README names are
 * covered. The tables' offsets themselves are checked on the real wheels (frozen evidence and the
 * integration tests). */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "torch/layout.h"

static void test_tensor_tables(void)
{
    size_t n;
    const struct torch_layout *const *all = torch_layouts(&n);
    CU_ASSERT_FATAL(n >= 5);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_PTR_EQUAL(torch_layout_named(all[i]->name), all[i]);
        CU_ASSERT(all[i]->first_minor <= all[i]->last_minor);
        for (unsigned m = all[i]->first_minor; m <= all[i]->last_minor; m++)
            CU_ASSERT_PTR_EQUAL(torch_layout_for(all[i]->major, m), all[i]);   /* one a line */
        for (size_t k = 0; k < i; k++)
            CU_ASSERT_STRING_NOT_EQUAL(all[i]->name, all[k]->name);
    }
    static const unsigned lines[][2] = {{1, 13}, {2, 0}, {2, 1}, {2, 4}, {2, 9}, {2, 12}, {2, 15}};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        CU_ASSERT_PTR_NOT_NULL(torch_layout_for(lines[i][0], lines[i][1]));
    CU_ASSERT_PTR_NULL(torch_layout_for(2, 99));
    CU_ASSERT_PTR_NULL(torch_layout_for(3, 0));
    CU_ASSERT_PTR_NULL(torch_layout_named("2.99"));
    char names[256];
    CU_ASSERT_PTR_NOT_NULL(strstr(torch_layout_names(names, sizeof names), "2.13-2.15"));
}

static void test_autograd_tables(void)
{
    size_t n;
    const struct torch_autograd_layout *const *all = torch_autograd_layouts(&n);
    CU_ASSERT_FATAL(n >= 5);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_PTR_EQUAL(torch_autograd_layout_named(all[i]->name), all[i]);
        for (unsigned m = all[i]->first_minor; m <= all[i]->last_minor; m++)
            CU_ASSERT_PTR_EQUAL(torch_autograd_layout_for(all[i]->major, m), all[i]);
    }
    CU_ASSERT_PTR_NOT_NULL(torch_autograd_layout_for(2, 14));
    CU_ASSERT_PTR_NULL(torch_autograd_layout_for(2, 99));
}

void register_torch_layouts_tests(void)
{
    static const struct tu_test tests[] = {
        {"tensor tables", test_tensor_tables},
        {"autograd tables", test_autograd_tables},
        {NULL, NULL},
    };
    tu_add_suite("torch/layouts", tests);
}
