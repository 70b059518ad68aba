/* The books (cpython/balance.c): the rule table is whole, counts are read as each version writes
 * them, and over the hand-built fixture image of heap_fixture.h (a fixture; real interpreters'
 * books are checked against gc.garbage and sys.getrefcount by tests/integration/test_books.py)
 * the garbage cycle is garbage until a reference from C holds it. */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpython/balance.h"
#include "cpython/heap_fixture.h"
#include "cpython/layout.h"
#include "suites.h"
#include "testutil.h"

static struct pf P;   /* large: not on the stack */

static void test_rules_whole(void)
{
    size_t n;
    const struct py_books_rule *r = py_books_rules(&n);
    CU_ASSERT(n >= 10);
    for (size_t k = 0; k < n; k++) {
        CU_ASSERT(r[k].first >= 9 && r[k].first <= r[k].last);
        CU_ASSERT(r[k].rule && strlen(r[k].rule) > 20);
        CU_ASSERT(r[k].source && strchr(r[k].source, '/'));   /* a file of CPython's */
    }
}

static void test_counts_by_version(void)
{
    const struct py_layout *l39 = py_layout_for(3, 9), *l311 = py_layout_for(3, 11),
                           *l312 = py_layout_for(3, 12), *l314 = py_layout_for(3, 14);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l39);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l314);
    CU_ASSERT_EQUAL(py_books_refcnt(l39, 7), 7);
    CU_ASSERT_EQUAL(py_books_refcnt(l39, 1ull << 40), PY_UNBALANCED);      /* no int32 count */
    CU_ASSERT_EQUAL(py_books_refcnt(l311, 999999999u + 3), PY_UNBALANCED);  /* static */
    CU_ASSERT_EQUAL(py_books_refcnt(l311, 12), 12);
    CU_ASSERT_EQUAL(py_books_refcnt(l312, 0xffffffffu), PY_UNBALANCED);    /* immortal */
    CU_ASSERT_EQUAL(py_books_refcnt(l312, 3), 3);
    CU_ASSERT_EQUAL(py_books_refcnt(l314, 0xc0000000u), PY_UNBALANCED);    /* immortal */
    /* 3.14: flags in the upper half, the count in the lower */
    CU_ASSERT_EQUAL(py_books_refcnt(l314, (3ull << 48) | 5), 5);
}

/* The fixture's garbage list (it holds itself, its one reference) as the books split it. */
static void split_garbage(const char *layout, uint64_t refcnt, bool garbage)
{
    CU_ASSERT_FATAL(pf_build(&P, layout));
    pf_put64(P.garbage, refcnt);
    struct cl_target *t = pf_target(&P);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    struct py_walk_options opt = {.max_objects = 10000};
    struct py_heap h;
    struct cl_error err = {0};
    CU_ASSERT_EQUAL_FATAL(py_heap_build(&P.rt, &opt, &h, &err), 0);
    uint32_t i = py_heap_find(&h, P.garbage);
    CU_ASSERT_FATAL(i != PY_NO_NODE && !py_node_reachable(&h, i));
    CU_ASSERT(h.books.done);
    CU_ASSERT_EQUAL(py_books_held_from(&h, i), garbage ? PY_NO_NODE : i);
    CU_ASSERT_EQUAL(py_books_collectable(&h, i), garbage);
    CU_ASSERT_EQUAL(py_books_unexplained(&h, i), (int32_t)refcnt - 1);
    CU_ASSERT_PTR_NULL(py_books_c_holder(&h, i));
    py_heap_free(&h);
    cl_target_close(t);
}

static void test_garbage_until_held(void)
{
    static const char *const layouts[] = {"3.11", "3.12", "3.13.0"};
    for (size_t k = 0; k < sizeof layouts / sizeof *layouts; k++) {
        split_garbage(layouts[k], 1, true);    /* its own reference: garbage */
        split_garbage(layouts[k], 2, false);   /* one more, from C: held */
    }
}

void register_cpython_balance_tests(void)
{
    static const struct tu_test tests[] = {
        {"the rule table is whole", test_rules_whole},
        {"counts as each version writes them", test_counts_by_version},
        {"fixture image: a cycle is garbage until C holds it", test_garbage_until_held},
        {NULL, NULL},
    };
    tu_add_suite("cpython/balance", tests);
}
