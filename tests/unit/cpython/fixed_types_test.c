/* The fixed-field C types (cpython/fixed_types.c): every row is well formed, no two rows claim
 * one type, version and size, and a type is found only in the versions and at the size of its
 * struct. Whether the rows are right is proven on real interpreters, against gc.get_referents,
 * by tests/integration/test_c_types.py. */
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpython/fixed_types.h"
#include "cpython/layout.h"
#include "suites.h"

/* The newest 3.minor culeak has a layout table for: no row reaches past it. */
static unsigned newest_minor(void)
{
    size_t n;
    const struct py_layout *const *all = py_layouts(&n);
    unsigned newest = 0;
    for (size_t i = 0; i < n; i++)
        newest = all[i]->minor > newest ? all[i]->minor : newest;
    return newest;
}

static void test_rows_well_formed(void)
{
    size_t n;
    const struct py_fixed_type *r = py_fixed_types(&n);
    CU_ASSERT(n >= 40);
    unsigned newest = newest_minor();
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT(r[i].name && r[i].name[0]);
        CU_ASSERT(r[i].since >= 9 && r[i].since <= r[i].until && r[i].until <= newest);
        CU_ASSERT(r[i].size >= 24 && r[i].size % 8 == 0);
        CU_ASSERT_PTR_NOT_NULL(r[i].fields[0].label);   /* a row reads something */
        for (size_t k = 0; k < PY_FIXED_FIELDS && r[i].fields[k].label; k++) {
            /* past the header, inside the struct, a whole word, printed as a step */
            CU_ASSERT(r[i].fields[k].offset >= 16);
            CU_ASSERT(r[i].fields[k].offset + 8 <= r[i].size);
            CU_ASSERT(r[i].fields[k].offset % 8 == 0);
            CU_ASSERT(r[i].fields[k].label[0] == '.');
            for (size_t j = 0; j < k; j++)
                CU_ASSERT(r[i].fields[j].offset != r[i].fields[k].offset);
        }
        for (size_t j = 0; j < i; j++)   /* one row per type, version and size */
            CU_ASSERT(strcmp(r[i].name, r[j].name) != 0 || r[i].size != r[j].size ||
                      r[i].until < r[j].since || r[j].until < r[i].since);
    }
}

static void test_lookup_by_version_and_size(void)
{
    const struct py_fixed_type *p12 = py_fixed_type("itertools.pairwise", 12, 32),
                               *p13 = py_fixed_type("itertools.pairwise", 13, 40);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p12);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p13);
    CU_ASSERT_PTR_NULL(p12->fields[2].label);               /* 3.13 added the result tuple */
    CU_ASSERT_STRING_EQUAL(p13->fields[2].label, ".<result>");
    CU_ASSERT_PTR_NULL(py_fixed_type("itertools.pairwise", 13, 32));   /* another struct */
    CU_ASSERT_PTR_NULL(py_fixed_type("itertools.pairwise", 9, 32));    /* not in 3.9 */
    CU_ASSERT_PTR_NULL(py_fixed_type("itertools.pairwis", 12, 32));
}

void register_cpython_fixed_types_tests(void)
{
    CU_pSuite s = CU_add_suite("cpython/fixed_types", NULL, NULL);
    CU_add_test(s, "rows well formed", test_rows_well_formed);
    CU_add_test(s, "lookup by version and size", test_lookup_by_version_and_size);
}
