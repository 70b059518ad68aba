/* Reading objects (cpython/object.c) over the fixture image of heap_fixture.h (a fixture; real
 * objects are read by the integration tests): strs and ints decode, types are recognised and
 * cached with their family, and what is not an object, or not a sane type, is refused. */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpython/heap_fixture.h"
#include "cpython/object.h"
#include "suites.h"
#include "testutil.h"

static const char *const layouts[] = {"3.11", "3.12", "3.13.0"};
#define NLAYOUTS (sizeof layouts / sizeof *layouts)

static struct pf P;
static struct py_objects O;
static struct cl_target *T;

static void start(const char *layout)
{
    CU_ASSERT_FATAL(pf_build(&P, layout));
    T = pf_target(&P);
    CU_ASSERT_PTR_NOT_NULL_FATAL(T);
    py_objects_init(&O, &P.rt);
}

static void stop(void)
{
    py_objects_free(&O);
    cl_target_close(T);
}

static void test_str_and_int(void)
{
    char s[64];
    int64_t v;
    for (size_t li = 0; li < NLAYOUTS; li++) {
        start(layouts[li]);
        CU_ASSERT_TRUE(py_str_read(&O, P.k_foo, s, sizeof s));
        CU_ASSERT_STRING_EQUAL(s, "foo");
        CU_ASSERT_TRUE(py_str_read(&O, P.k_foo, s, 3));   /* cut to cap - 1 bytes */
        CU_ASSERT_STRING_EQUAL(s, "fo");
        CU_ASSERT_FALSE(py_str_read(&O, P.xs, s, sizeof s));
        CU_ASSERT_TRUE(py_int_read(&O, P.int_42, &v));
        CU_ASSERT_EQUAL(v, 42);
        CU_ASSERT_TRUE(py_int_read(&O, P.int_3, &v));
        CU_ASSERT_EQUAL(v, 3);
        CU_ASSERT_FALSE(py_int_read(&O, P.str_a, &v));
        stop();
        /* a negative length, an unknown kind, data that is not there, too many digits */
        start(layouts[li]);
        pf_put64(P.k_xs + P.l->str_length, (uint64_t)-1);
        pf_put32(P.k_t + P.l->str_state, 3u << 2 | 1u << 5 | 1u << 6);
        pf_put64(P.k_d + P.l->str_length, 1u << 20);
        uint64_t tagged = P.l->long_tagged ? 3u << 3 : 3u;
        pf_put64(P.int_42 + P.l->ob_size, tagged);
        CU_ASSERT_FALSE(py_str_read(&O, P.k_xs, s, sizeof s));
        CU_ASSERT_FALSE(py_str_read(&O, P.k_t, s, sizeof s));
        /* a length past the image's end: at most 4096 code points are read, and they are */
        CU_ASSERT_TRUE(py_str_read(&O, P.k_d, s, sizeof s));
        CU_ASSERT_EQUAL(s[0], 'd');
        CU_ASSERT_FALSE(py_int_read(&O, P.int_42, &v));
        stop();
    }
}

static void test_types(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        start(layouts[li]);
        struct py_type *foo = py_type_at(&O, P.t_foo);
        CU_ASSERT_PTR_NOT_NULL_FATAL(foo);
        CU_ASSERT_STRING_EQUAL(foo->name, "Foo");
        CU_ASSERT_TRUE(foo->heap);
        CU_ASSERT_EQUAL(foo->family, PY_F_OTHER);
        CU_ASSERT_EQUAL(foo->dictoffset, 16);
        CU_ASSERT_PTR_EQUAL(py_object_type(&O, P.foo), foo); /* cached */
        CU_ASSERT_EQUAL(py_object_type(&O, P.d)->family, PY_F_DICT);
        CU_ASSERT_EQUAL(py_object_type(&O, P.main_mod)->family, PY_F_MODULE);
        CU_ASSERT_EQUAL(py_object_type(&O, P.t_foo)->family, PY_F_TYPE);
        /* not objects: unaligned, NULL, unmapped, an object whose type is no type */
        CU_ASSERT_PTR_NULL(py_object_type(&O, P.xs + 1));
        CU_ASSERT_PTR_NULL(py_object_type(&O, 0));
        CU_ASSERT_PTR_NULL(py_object_type(&O, PF_UNMAPPED));
        CU_ASSERT_PTR_NULL(py_type_at(&O, P.str_a));
        CU_ASSERT_EQUAL(py_object_size(&O, P.t, py_object_type(&O, P.t)), P.l->tuple_items + 2 * 8);
        stop();
    }
}

/* A type whose sizes are absurd is no type; one whose tp_dict or tp_base chain is bad still is,
 * and lookups along its bases stay bounded. */
static void test_corrupt_types(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        const struct py_layout *l = py_layout_named(layouts[li]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(l);
        const struct {
            uint16_t at;
            int64_t v;
        } bad[] = {
            {l->tp_basicsize, 0},
            {l->tp_basicsize, 1ll << 40},
            {l->tp_itemsize, -8},
        };
        for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
            start(layouts[li]);
            pf_put64(P.t_foo + bad[k].at, (uint64_t)bad[k].v);
            CU_ASSERT_PTR_NULL(py_type_at(&O, P.t_foo));
            CU_ASSERT_PTR_NULL(py_object_type(&O, P.foo));
            stop();
        }
        start(layouts[li]);
        pf_put64(P.t_foo + P.l->tp_dict, PF_UNMAPPED);
        pf_put64(P.t_foo + P.l->tp_base, P.t_foo); /* its own base */
        pf_put64(P.t_foo + P.l->tp_name, PF_UNMAPPED);
        struct py_type *foo = py_type_at(&O, P.t_foo);
        CU_ASSERT_PTR_NOT_NULL_FATAL(foo);
        CU_ASSERT_STRING_EQUAL(foo->name, "");
        CU_ASSERT_EQUAL(foo->dict, PF_UNMAPPED);
        int n = -1;
        py_type_slots(&O, foo, &n);
        CU_ASSERT_EQUAL(n, 0);
        stop();
    }
}

/* __slots__: object members along the base chain, each once, __dict__ and __weakref__ left out
 * (PyMemberDef {name, type, offset, flags}, 40 bytes, T_OBJECT_EX = 16). */
static void test_slots(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        start(layouts[li]);
        uint64_t defs = pf_alloc(&P, 4 * 40);
        const char *names[3] = {"slot", "__weakref__", "other"};
        const uint64_t offsets[3] = {16, 24, 16};
        for (int i = 0; i < 3; i++) {
            pf_put64(defs + 40 * i, pf_cstr(&P, names[i]));
            pf_put32(defs + 40 * i + 8, 16);
            pf_put64(defs + 40 * i + 16, offsets[i]);
        }
        pf_put64(P.t_foo + P.l->tp_members, defs);
        pf_put64(P.t_foo + P.l->tp_base, P.t_foo); /* a cycle: the same members again */
        CU_ASSERT_FATAL(!P.overflow);
        int n = -1;
        struct py_type *foo = py_type_at(&O, P.t_foo);
        CU_ASSERT_PTR_NOT_NULL_FATAL(foo);
        const struct py_member *m = py_type_slots(&O, foo, &n);
        CU_ASSERT_EQUAL_FATAL(n, 1);
        CU_ASSERT_EQUAL(m[0].offset, 16);
        CU_ASSERT_EQUAL(m[0].name, pf_get64(defs));
        stop();
    }
}

void register_cpython_object_tests(void)
{
    static const struct tu_test tests[] = {
        {"fixture image: str and int values", test_str_and_int},
        {"fixture image: types, families, what is no object", test_types},
        {"fixture image: corrupt types", test_corrupt_types},
        {"fixture image: __slots__ members", test_slots},
        {NULL, NULL},
    };
    tu_add_suite("cpython/object", tests);
}
