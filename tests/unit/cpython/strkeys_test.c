/* Str-keyed lookups (cpython/strkeys.c) over the fixture image of heap_fixture.h (a fixture;
 * the module names they serve are checked on real processes by the integration tests): the index
 * finds what a read of every key finds, in several dicts at once, and where two keys share a
 * hash it falls back to that read. */
#include <stdint.h>

#include <CUnit/CUnit.h>

#include "cpython/heap_fixture.h"
#include "cpython/strkeys.h"
#include "suites.h"
#include "testutil.h"

static const char *const layouts[] = {"3.11", "3.12", "3.13.0"};
#define NLAYOUTS (sizeof layouts / sizeof *layouts)

static void test_lookups(void)
{
    static const char *const names[] = {"xs", "t", "d", "foo", "f",   "Foo",    "bar",
                                        "g",  "k", "",  "x",   "xss", "payload"};
    for (size_t li = 0; li < NLAYOUTS; li++) {
        struct pf p;
        CU_ASSERT_FATAL(pf_build(&p, layouts[li]));
        /* a dict with the same text as a key of __main__, and one whose two keys read alike (a
         * corrupt dict: the first is what a scan finds) */
        uint64_t other_k = pf_str(&p, "xs", PF_ABSENT), other_v = pf_int(&p, 7, PF_ABSENT, "7");
        uint64_t other = pf_dict(&p, 1, &other_k, &other_v, 0, PF_ABSENT, "other", NULL);
        uint64_t twin_k[2] = {pf_str(&p, "k", PF_ABSENT), pf_str(&p, "k", PF_ABSENT)};
        uint64_t twin_v[2] = {p.str_a, p.str_b};
        uint64_t twins = pf_dict(&p, 2, twin_k, twin_v, 0, PF_ABSENT, "twins", NULL);
        CU_ASSERT_FATAL(!p.overflow);
        struct cl_target *t = pf_target(&p);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        struct py_objects o;
        py_objects_init(&o, &p.rt);
        struct py_strkeys k = {.o = &o};
        const uint64_t dicts[] = {p.main_dict, p.d, other, twins, p.foo_dict, p.xs, 0};
        for (int round = 0; round < 2; round++) /* indexing, then indexed */
            for (size_t di = 0; di < sizeof dicts / sizeof *dicts; di++)
                for (size_t ni = 0; ni < sizeof names / sizeof *names; ni++)
                    CU_ASSERT_EQUAL(py_strkeys_get(&k, dicts[di], names[ni]),
                                    py_dict_get_str(&o, dicts[di], names[ni]));
        CU_ASSERT_EQUAL(py_strkeys_get(&k, p.main_dict, "Foo"), p.t_foo);
        CU_ASSERT_EQUAL(py_strkeys_get(&k, other, "xs"), other_v);
        CU_ASSERT_EQUAL(py_strkeys_get(&k, p.d, "k"), p.in_d); /* its int key skipped */
        CU_ASSERT_EQUAL(py_strkeys_get(&k, twins, "k"), p.str_a);
        CU_ASSERT_EQUAL(py_strkeys_get(&k, p.main_dict, "k"), 0);
        CU_ASSERT_EQUAL(py_strkeys_get(&k, p.xs, "xs"), 0); /* a list: no items */
        py_strkeys_free(&k);
        py_objects_free(&o);
        cl_target_close(t);
    }
}

void register_cpython_strkeys_tests(void)
{
    static const struct tu_test tests[] = {
        {"fixture image: lookups by key text, as a scan finds them", test_lookups},
        {NULL, NULL},
    };
    tu_add_suite("cpython/strkeys", tests);
}
