/* The referent walkers (cpython/referents.c) object by object over the fixture image of
 * heap_fixture.h (a fixture; real interpreters are checked against gc.get_referents by
 * tests/integration/test_referents.py): each emits exactly the references the scene laid out,
 * named, and a container whose size or table is corrupt emits none of its items. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <CUnit/CUnit.h>

#include "cpython/heap_fixture.h"
#include "cpython/referents.h"
#include "cpython/walk_visits.h"
#include "suites.h"
#include "testutil.h"

static const char *const layouts[] = {"3.11", "3.12", "3.13.0"};
#define NLAYOUTS (sizeof layouts / sizeof *layouts)

static struct pf P;
static struct visits V;
static struct cl_target *T;

static void start(const char *layout)
{
    CU_ASSERT_FATAL(pf_build(&P, layout));
    T = pf_target(&P);
    CU_ASSERT_PTR_NOT_NULL_FATAL(T);
    visits_init(&V, &P.rt);
}

static void stop(void)
{
    visits_free(&V);
    cl_target_close(T);
}

/* The referents of obj, collected afresh; how many. */
static unsigned referents(uint64_t obj)
{
    V.n = 0;
    struct py_type *ty = py_object_type(&V.objects, obj);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ty);
    py_referents(&V.e, obj, ty);
    return V.n;
}

static void test_containers(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        start(layouts[li]);
        CU_ASSERT_EQUAL(referents(P.xs), 3);
        CU_ASSERT_TRUE(visited(&V, P.str_a, PY_E_INDEX, 0));
        CU_ASSERT_TRUE(visited(&V, P.int_42, PY_E_INDEX, 1));
        CU_ASSERT_TRUE(visited_named(&V, P.t_list, ".__class__"));
        CU_ASSERT_EQUAL(referents(P.t), 3);
        CU_ASSERT_TRUE(visited(&V, P.int_42, PY_E_INDEX, 0));
        CU_ASSERT_TRUE(visited(&V, P.str_b, PY_E_INDEX, 1));
        /* a general-keys dict: each value under its key, and each key as an object */
        CU_ASSERT_EQUAL(referents(P.d), 5);
        CU_ASSERT_TRUE(visited(&V, P.str_v, PY_E_KEY, P.int_3));
        CU_ASSERT_TRUE(visited(&V, P.int_3, PY_E_DICTKEY, 0));
        CU_ASSERT_TRUE(visited(&V, P.in_d, PY_E_KEY, P.str_k));
        CU_ASSERT_TRUE(visited(&V, P.str_k, PY_E_DICTKEY, 0));
        CU_ASSERT_TRUE(visited_named(&V, P.t_dict, ".__class__"));
        /* a str-keys dict */
        CU_ASSERT_EQUAL(referents(P.main_dict), 17);
        CU_ASSERT_TRUE(visited(&V, P.xs, PY_E_KEY, P.k_xs));
        CU_ASSERT_TRUE(visited(&V, P.t_foo, PY_E_KEY, P.k_Foo));
        CU_ASSERT_TRUE(visited(&V, P.k_f, PY_E_DICTKEY, 0));
        CU_ASSERT_EQUAL(referents(P.garbage), 2);
        CU_ASSERT_TRUE(visited(&V, P.garbage, PY_E_INDEX, 0));
        stop();
    }
}

static void test_functions_modules_classes(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        start(layouts[li]);
        CU_ASSERT_EQUAL(referents(P.f), 4);
        CU_ASSERT_TRUE(visited_named(&V, P.closure, ".__closure__"));
        CU_ASSERT_TRUE(visited_named(&V, P.code_f, ".__code__"));
        CU_ASSERT_TRUE(visited_named(&V, P.main_dict, ".__globals__"));
        CU_ASSERT_EQUAL(referents(P.cell), 2);
        CU_ASSERT_TRUE(visited_named(&V, P.captured, ".cell_contents"));
        CU_ASSERT_EQUAL(referents(P.main_mod), 3);
        CU_ASSERT_TRUE(visited_named(&V, P.main_dict, ".__dict__"));
        CU_ASSERT_TRUE(visited_named(&V, P.main_name, ".__name__"));
        CU_ASSERT_TRUE(visited_named(&V, P.t_module, ".__class__"));
        CU_ASSERT_EQUAL(referents(P.t_foo), 6);
        CU_ASSERT_TRUE(visited_named(&V, pf_get64(P.t_foo + P.l->ht_qualname), ".__qualname__"));
        CU_ASSERT_TRUE(visited_named(&V, P.t_object, ".__base__"));   /* a heap type's own */
        CU_ASSERT_TRUE(visited_named(&V, P.class_dict, ".__dict__"));
        CU_ASSERT_TRUE(visited_named(&V, pf_get64(P.t_foo + P.l->tp_mro), ".__mro__"));
        CU_ASSERT_TRUE(visited_named(&V, pf_get64(P.t_foo + P.l->tp_bases), ".__bases__"));
        CU_ASSERT_TRUE(visited_named(&V, P.t_type, ".__class__"));
        CU_ASSERT_EQUAL(referents(P.foo), 2);
        CU_ASSERT_TRUE(visited_named(&V, P.foo_dict, ".__dict__"));
        /* co_consts is NULL: its names, kinds, name, file and class */
        CU_ASSERT_EQUAL(referents(P.code_f), 5);
        CU_ASSERT_TRUE(visited_named(&V, pf_get64(P.code_f + P.l->co_filename), ".co_filename"));
        /* managed values: the attribute by its shared key's name */
        CU_ASSERT_EQUAL(referents(P.bar), 2);
        char s[16];
        CU_ASSERT_TRUE(V.v[0].dst == P.bar_w && (V.v[0].edge & PY_E_KIND_MASK) == PY_E_ATTR &&
                       py_str_read(&V.objects, V.v[0].payload, s, sizeof s) && strcmp(s, "w") == 0);
        CU_ASSERT_EQUAL(referents(P.g), 3);   /* y, its frame's code, its class */
        CU_ASSERT_TRUE(visited_named(&V, P.code_g, ".f_code"));
        CU_ASSERT_TRUE(V.v[0].dst == P.in_g && (V.v[0].edge & PY_E_KIND_MASK) == PY_E_GENLOCAL);
        stop();
    }
}

struct order {
    uint64_t keys[8];
    unsigned n;
};

static bool record_key(void *arg, uint64_t key, uint64_t value)
{
    struct order *o = arg;
    (void)value;
    if (o->n < 8)
        o->keys[o->n++] = key;
    return true;
}

/* py_dict_items gives the live entries in insertion order. */
static void test_dict_items_order(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        start(layouts[li]);
        struct order o = {{0}, 0};
        CU_ASSERT_TRUE(py_dict_items(&V.objects, P.main_dict, record_key, &o));
        const uint64_t want[8] = {P.k_xs, P.k_t, P.k_d, P.k_foo, P.k_f, P.k_Foo, P.k_bar, P.k_g};
        CU_ASSERT_EQUAL(o.n, 8);
        CU_ASSERT_EQUAL(memcmp(o.keys, want, sizeof want), 0);
        stop();
    }
}

/* A list or tuple whose size is absurd or negative, a list whose items are unmapped, a dict whose
 * keys header lies: no item is emitted (only the class), and nothing is counted from a lookup
 * that builds nothing. */
static void test_corrupt_containers(void)
{
    static const int64_t sizes[] = {1ll << 40, -1, INT64_MIN, (1ll << 26) + 1};
    for (size_t li = 0; li < NLAYOUTS; li++) {
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            start(layouts[li]);
            pf_put64(P.xs + P.l->ob_size, (uint64_t)sizes[k]);
            pf_put64(P.t + P.l->ob_size, (uint64_t)sizes[k]);
            CU_ASSERT_EQUAL(referents(P.xs), 1);
            CU_ASSERT_EQUAL(referents(P.t), 1);
            CU_ASSERT_EQUAL(V.objects.unreadable[PY_F_LIST], 0);
            stop();
        }
        start(layouts[li]);
        pf_put64(P.xs + P.l->list_items, PF_UNMAPPED);
        CU_ASSERT_EQUAL(referents(P.xs), 1);
        stop();
        /* dict keys headers: more entries than slots, an index size past 2^34, an unknown kind */
        const struct {
            uint16_t at;
            uint8_t v;
        } bad[] = {
            {P.l->dk_log2_size, 0},
            {P.l->dk_log2_index_bytes, 35},
            {P.l->dk_kind, 3},
            {P.l->dk_log2_size, 31},
        };
        for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
            start(layouts[li]);
            pf_put8(P.d_keys + bad[k].at, bad[k].v);
            struct order o = {{0}, 0};
            CU_ASSERT_FALSE(py_dict_items(&V.objects, P.d, record_key, &o));
            CU_ASSERT_EQUAL(o.n, 0);
            CU_ASSERT_EQUAL(referents(P.d), 1);
            stop();
        }
        start(layouts[li]);
        pf_put64(P.d_keys + P.l->dk_nentries, (uint64_t)-1);
        CU_ASSERT_EQUAL(referents(P.d), 1);
        stop();
        start(layouts[li]); /* a fresh target: the page cache holds what was read */
        pf_put64(P.d + P.l->dict_keys, PF_UNMAPPED);
        CU_ASSERT_EQUAL(referents(P.d), 1);
        stop();
    }
}

/* A dict whose keys header claims 2^26 entries (the most read_keys accepts) beyond the image: it
 * is refused before the 1.5 GiB its entries would take are allocated. Without the check the
 * allocation itself costs about 0.25 s of CPU under AddressSanitizer (unit_tests_san), which is
 * what fails there; the plain build's lazy allocation hides it. */
static void test_huge_count_not_allocated(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        start(layouts[li]);
        pf_put8(P.d_keys + P.l->dk_log2_size, 26);
        pf_put64(P.d_keys + P.l->dk_nentries, 1ull << 26);
        struct order o = {{0}, 0};
        clock_t begin = clock();
        CU_ASSERT_FALSE(py_dict_items(&V.objects, P.d, record_key, &o));
        CU_ASSERT((double)(clock() - begin) / CLOCKS_PER_SEC < 0.1); /* CPU, not wall */
        CU_ASSERT_EQUAL(o.n, 0);
        stop();
    }
}

void register_cpython_referents_tests(void)
{
    static const struct tu_test tests[] = {
        {"fixture image: lists, tuples and dicts", test_containers},
        {"fixture image: functions, cells, modules, classes", test_functions_modules_classes},
        {"fixture image: dict items in insertion order", test_dict_items_order},
        {"fixture image: corrupt containers emit no items", test_corrupt_containers},
        {"fixture image: a huge entry count is refused unallocated", test_huge_count_not_allocated},
        {NULL, NULL},
    };
    tu_add_suite("cpython/referents", tests);
}
