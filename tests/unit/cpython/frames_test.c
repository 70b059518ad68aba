/* Frames (cpython/frames.c) over the fixture image of heap_fixture.h (a fixture; real frames are
 * checked by the integration tests): a frame's named locals, its free variable read through its
 * cell, its description for root names; a shim frame is no Python frame; a frame, or locals,
 * that cannot be read are said to be (py_frame_locals returns false), never read as empty. */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpython/frames.h"
#include "cpython/heap_fixture.h"
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

/* Whether a local named name was emitted with value dst. */
static bool local(uint64_t dst, const char *name)
{
    char s[64];
    for (unsigned i = 0; i < V.n; i++)
        if (V.v[i].dst == dst && (V.v[i].edge & PY_E_KIND_MASK) == PY_E_FRAMELOCAL &&
            py_str_read(&V.objects, V.v[i].payload, s, sizeof s) && strcmp(s, name) == 0)
            return true;
    return false;
}

/* How many locals were emitted (besides, the frame's cells, value stack and fields). */
static unsigned nlocals(void)
{
    unsigned n = 0;
    for (unsigned i = 0; i < V.n; i++)
        n += (V.v[i].edge & PY_E_KIND_MASK) == PY_E_FRAMELOCAL;
    return n;
}

/* Whether the edge to dst was emitted uncounted: a name whose count another reference holds. */
static bool uncounted(uint64_t dst)
{
    for (unsigned i = 0; i < V.n; i++)
        if (V.v[i].dst == dst)
            return (V.v[i].edge & PY_E_UNCOUNTED) != 0;
    return false;
}

static bool locals(uint64_t frame)
{
    V.n = 0;
    return py_frame_locals(&V.e, frame, PY_E_FRAMELOCAL);
}

static void test_locals_and_names(void)
{
    char s[256];
    for (size_t li = 0; li < NLAYOUTS; li++) {
        start(layouts[li]);
        CU_ASSERT_TRUE(locals(P.frame_f));
        CU_ASSERT_EQUAL(nlocals(), 2);
        CU_ASSERT_TRUE(local(P.t, "x"));
        CU_ASSERT_TRUE(local(P.captured, "c"));   /* the cell's contents, not the cell */
        CU_ASSERT_TRUE(uncounted(P.captured));    /* the cell holds its count */
        CU_ASSERT_TRUE(locals(P.frame_mod));
        CU_ASSERT_EQUAL(nlocals(), 0);
        CU_ASSERT_EQUAL(py_frame_kind(&V.objects, P.frame_f), PY_FRAME_CODE);
        CU_ASSERT_TRUE(py_frame_describe(&V.objects, P.frame_f, s, sizeof s));
        CU_ASSERT_STRING_EQUAL(s, "f() at main.py");
        CU_ASSERT_TRUE(py_frame_describe(&V.objects, P.frame_mod, s, sizeof s));
        CU_ASSERT_STRING_EQUAL(s, "<module>() at main.py");
        CU_ASSERT_TRUE(py_frame_file(&V.objects, P.frame_f, s, sizeof s));
        CU_ASSERT_STRING_EQUAL(s, "/home/u/main.py");
        if (P.frame_shim) {   /* 3.12+: a C-stack shim frame runs no Python code */
            CU_ASSERT_EQUAL(py_frame_kind(&V.objects, P.frame_shim), PY_FRAME_NOT_CODE);
            CU_ASSERT_FALSE(py_frame_describe(&V.objects, P.frame_shim, s, sizeof s));
            CU_ASSERT_TRUE(locals(P.frame_shim));
            CU_ASSERT_EQUAL(nlocals(), 0);
        }
        stop();
    }
}

/* An unbound local (NULL slot) and an empty cell are no locals. */
static void test_unbound(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        start(layouts[li]);
        pf_put64(P.frame_f + P.l->if_localsplus, 0);
        pf_put64(P.cell + P.l->cell_ref, 0);
        CU_ASSERT_TRUE(locals(P.frame_f));
        CU_ASSERT_EQUAL(nlocals(), 0);
        stop();
    }
}

/* A frame whose code slot holds an object that is not code: no Python frame, nothing to say. */
static void test_not_code(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        start(layouts[li]);
        pf_put64(P.frame_f + P.l->if_code, P.xs);
        CU_ASSERT_EQUAL(py_frame_kind(&V.objects, P.frame_f), PY_FRAME_NOT_CODE);
        CU_ASSERT_TRUE(locals(P.frame_f));
        CU_ASSERT_EQUAL(nlocals(), 0);
        stop();
    }
}

/* What cannot be read is said: the frame itself, its code object, the count, names or kinds of
 * its locals; a count beyond what the walker reads, or beyond the names, is corrupt. */
static void test_unreadable(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        start(layouts[li]);
        const struct py_layout *l = P.l;
        CU_ASSERT_EQUAL(py_frame_kind(&V.objects, PF_UNMAPPED), PY_FRAME_UNREADABLE);
        CU_ASSERT_FALSE(locals(PF_UNMAPPED));
        stop();
        const struct {
            uint64_t addr;
            uint64_t v;
            int width;
        } bad[] = {
            {P.frame_f + l->if_code, PF_UNMAPPED, 8},
            {P.code_f + l->co_localsplusnames, PF_UNMAPPED, 8},
            {P.code_f + l->co_localspluskinds, PF_UNMAPPED, 8},
            {P.code_f + l->co_nlocalsplus, 70000, 4},
            {P.code_f + l->co_nlocalsplus, (uint32_t)-1, 4},
            {P.code_f + l->co_nlocalsplus, 3, 4},   /* more locals than names */
        };
        for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
            start(layouts[li]);
            if (bad[k].width == 8)
                pf_put64(bad[k].addr, bad[k].v);
            else
                pf_put32(bad[k].addr, (uint32_t)bad[k].v);
            CU_ASSERT_FALSE(locals(P.frame_f));
            CU_ASSERT_EQUAL(V.n, 0);
            stop();
        }
    }
}

void register_cpython_frames_tests(void)
{
    static const struct tu_test tests[] = {
        {"fixture image: locals by name, cells unwrapped", test_locals_and_names},
        {"fixture image: unbound locals and empty cells", test_unbound},
        {"fixture image: a frame without code", test_not_code},
        {"fixture image: unreadable frames and locals are said", test_unreadable},
        {NULL, NULL},
    };
    tu_add_suite("cpython/frames", tests);
}
