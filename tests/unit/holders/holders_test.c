/* Holders and retained bytes (holders/holders.c) on the hand-built heap of heap_fixture.h, with
 * tensors laid on its objects by hand (not a real torch: the holders are checked against real
 * processes, deleting each holder, by the integration tests). What Python's semantics say of the
 * scene:
 *   storage 0 (100 B) under a tensor at foo:       __main__.foo alone holds it, retains 100;
 *   storage 1 (200 B) under a tensor at xs[0]:     __main__.xs alone, retains 200;
 *   storage 2 (400 B) under a tensor at 42, which xs[1], t[0] and f's local x (= t) hold:
 *                                                  retained by none, reached by each;
 *   storage 3 (800 B) under a tensor at the garbage list: no holder (unreachable);
 *   storage 4 (1600 B) under a tensor only C++ holds: no holder (unknown). */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpython/heap.h"
#include "cpython/heap_fixture.h"
#include "cpython/path.h"
#include "holders/holders.h"
#include "suites.h"
#include "testutil.h"

static struct pf P; /* large: not on the stack */

#define NT 5
static struct torch_tensor tensors[NT];
static struct torch_storage storages[NT];
static uint32_t storage_tensors[NT];
static torch_name names[1] = {"?"};

/* One tensor per storage, the k-th at heap object addr (0: only C++ holds it). */
static void lay(struct torch_tensors *tt, const struct py_heap *h, const uint64_t *addrs)
{
    memset(tt, 0, sizeof *tt);
    for (uint32_t k = 0; k < NT; k++) {
        tensors[k] =
            (struct torch_tensor){.pyobj = addrs[k],
                                  .impl = 0x9000 + k,
                                  .node = addrs[k] ? py_heap_find(h, addrs[k]) : PY_NO_NODE,
                                  .grad_fn_node = TORCH_NO_NODE,
                                  .storage_index = k,
                                  .origin = addrs[k] ? TORCH_FROM_PYTHON : TORCH_FROM_SAVED};
        storage_tensors[k] = k;
        storages[k] = (struct torch_storage){.impl = 0xa000 + k,
                                             .data = 0xb000 + k,
                                             .nbytes = 100u << k,
                                             .tensors = &storage_tensors[k],
                                             .ntensors = 1};
    }
    tt->v = tensors;
    tt->n = NT;
    tt->storages = storages;
    tt->nstorages = NT;
    tt->storage_tensors = storage_tensors;
    tt->names = names;
    tt->nnames = 1;
}

static const struct cl_holder *holder(const struct cl_holders *hs, const char *name)
{
    char text[256];
    for (uint32_t k = 0; k < hs->n; k++)
        if (strcmp(py_path_text(hs->v[k].name, text, sizeof text), name) == 0)
            return &hs->v[k];
    return NULL;
}

static void test_retained_and_reachable(void)
{
    static const char *const layouts[] = {"3.11", "3.12", "3.13.0"};
    for (size_t li = 0; li < sizeof layouts / sizeof *layouts; li++) {
        CU_ASSERT_FATAL(pf_build(&P, layouts[li]));
        struct cl_target *t = pf_target(&P);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        struct py_walk_options opt = {.max_objects = 10000};
        struct py_heap h;
        struct cl_error err = {0};
        CU_ASSERT_EQUAL_FATAL(py_heap_build(&P.rt, &opt, &h, &err), 0);
        const uint64_t at[NT] = {P.foo, P.str_a, P.int_42, P.garbage, 0};
        struct torch_tensors tt;
        lay(&tt, &h, at);
        struct cl_holders hs;
        CU_ASSERT_EQUAL_FATAL(cl_holders_build(&h, &tt, NULL, NULL, &hs, &err), 0);
        CU_ASSERT_EQUAL_FATAL(hs.ndevices, 1);   /* the CPU */
        char text[256];
        const struct cl_holder *foo = holder(&hs, "__main__.foo");
        const struct cl_holder *xs = holder(&hs, "__main__.xs");
        const struct cl_holder *tup = holder(&hs, "__main__.t");
        CU_ASSERT_PTR_NOT_NULL_FATAL(foo);
        CU_ASSERT_PTR_NOT_NULL_FATAL(xs);
        CU_ASSERT_PTR_NOT_NULL_FATAL(tup);
        CU_ASSERT_EQUAL(foo->retained[0], 100);
        CU_ASSERT_EQUAL(foo->reachable[0], 100);
        CU_ASSERT_EQUAL(xs->retained[0], 200);          /* not the 400 it shares with t */
        CU_ASSERT_EQUAL(xs->reachable[0], 600);
        CU_ASSERT_EQUAL(tup->retained[0], 0);
        CU_ASSERT_EQUAL(tup->reachable[0], 400);
        /* the shared one: t[0], xs[1] and f's local x (= t), module globals first */
        static const char *const shared[] = {"__main__.t[0]", "__main__.xs[1]",
                                             "<thread main: f() at main.py>.x[0]"};
        CU_ASSERT_EQUAL_FATAL(hs.storages[2].n, 3);
        for (uint32_t k = 0; k < 3; k++)
            CU_ASSERT_STRING_EQUAL(py_path_text(hs.storages[2].v[k].path, text, sizeof text),
                                   shared[k]);
        CU_ASSERT_EQUAL(hs.storages[0].held_by, CL_HELD_PYTHON);
        CU_ASSERT_EQUAL(hs.storages[3].n, 0);
        CU_ASSERT_EQUAL(hs.storages[3].held_by,
                        CL_HELD_GARBAGE); /* the image counts no reference */
        CU_ASSERT_EQUAL(hs.storages[4].held_by, CL_HELD_UNKNOWN);
        CU_ASSERT_PTR_NOT_NULL_FATAL(hs.tensor_paths[1]);
        CU_ASSERT_STRING_EQUAL(py_path_text(hs.tensor_paths[1], text, sizeof text),
                               "__main__.xs[0]");
        CU_ASSERT_PTR_NULL(hs.tensor_paths[3]);
        CU_ASSERT_PTR_NULL(hs.tensor_paths[4]);
        cl_holders_free(&hs);
        py_heap_free(&h);
        cl_target_close(t);
    }
}

static void test_names(void)
{
    CU_ASSERT_STRING_EQUAL(cl_held_by_name(CL_HELD_PYTHON), "python");
    CU_ASSERT_STRING_EQUAL(cl_held_by_name(CL_HELD_AUTOGRAD), "autograd");
    CU_ASSERT_STRING_EQUAL(cl_held_by_name(CL_HELD_GARBAGE), "garbage");
    CU_ASSERT_STRING_EQUAL(cl_held_by_name(CL_HELD_UNKNOWN), "unknown");
}

void register_holders_tests(void)
{
    static const struct tu_test tests[] = {
        {"retained and reachable on the fixture heap", test_retained_and_reachable},
        {"held-by names", test_names},
        {NULL, NULL},
    };
    tu_add_suite("holders/holders", tests);
}
