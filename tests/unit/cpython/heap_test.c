/* The object-graph walk (cpython/heap.c) over the hand-built fixture image of heap_fixture.h (a
 * fixture; the walk over real interpreters is checked by the integration tests), for each layout
 * table the fixture lays out: it finds exactly the objects laid out, with the edges and the names
 * the scene gives them. Corrupted (a list whose size is absurd, a dict whose keys are unmapped, a
 * frame chain that loops or breaks, a type whose namespace cannot be read, managed values or a
 * generator's frame that cannot be read, a GC list that loops back on itself) the walk stays
 * bounded and its warnings say what it skipped. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <CUnit/CUnit.h>

#include "cpython/heap.h"
#include "cpython/path.h"
#include "cpython/heap_fixture.h"
#include "cpython/referents.h"
#include "suites.h"
#include "testutil.h"

static const char *const layouts[] = {"3.11", "3.12", "3.13.0"};
#define NLAYOUTS (sizeof layouts / sizeof *layouts)

static struct pf P;            /* large: not on the stack */
static struct cl_target *T;
static struct py_heap H;

static void build(const char *layout)
{
    CU_ASSERT_FATAL(pf_build(&P, layout));
}

/* Walks the image as the session does (the walk, then its note of what it skipped); the heap
 * stays open, reading the image, until done(). */
static int walk_max(uint64_t max_objects)
{
    struct py_walk_options opt = {.max_objects = max_objects};
    struct cl_error err = {0};
    T = pf_target(&P);
    CU_ASSERT_PTR_NOT_NULL_FATAL(T);
    int rc = py_heap_build(&P.rt, &opt, &H, &err);
    if (rc == 0)
        py_referents_note_skipped(&H.objects, &H.warnings);
    return rc;
}

static int walk(void)
{
    return walk_max(10000);
}

static void done(void)
{
    py_heap_free(&H);
    cl_target_close(T);
    T = NULL;
}

static bool warned(const char *text)
{
    return H.warnings && strstr(H.warnings, text);
}

static uint32_t node(uint64_t addr)
{
    return py_heap_find(&H, addr);
}

/* Whether node src has an edge of kind to dst (with payload, unless any_payload). */
static bool has_edge(uint64_t src, uint64_t dst, enum py_edge kind, uint64_t payload)
{
    uint32_t s = node(src), d = node(dst);
    if (s == PY_NO_NODE || d == PY_NO_NODE)
        return false;
    for (uint32_t p = 0; p < py_node_nedges(&H, s); p++) {
        uint32_t e = py_node_edge(&H, s, p);
        struct py_step step = py_edge_step(&H, e, 0);
        if (py_edge_dst(&H, e) == d && step.edge == kind && step.payload == payload)
            return true;
    }
    return false;
}

static bool has_named_edge(uint64_t src, uint64_t dst, const char *label)
{
    uint32_t s = node(src), d = node(dst);
    if (s == PY_NO_NODE || d == PY_NO_NODE)
        return false;
    for (uint32_t p = 0; p < py_node_nedges(&H, s); p++) {
        uint32_t e = py_node_edge(&H, s, p);
        struct py_step step = py_edge_step(&H, e, 0);
        if (py_edge_dst(&H, e) == d && step.edge == PY_E_NAMED &&
            strcmp((const char *)(uintptr_t)step.payload, label) == 0)
            return true;
    }
    return false;
}

/* The root edge to dst, named by the str `name` (a frame local). */
static bool has_local(uint64_t dst, const char *name)
{
    char s[64];
    for (size_t k = 0; k < H.nroot_edges; k++) {
        const struct py_root_edge *r = &H.root_edges[k];
        if (r->dst == node(dst) && r->step.edge == PY_E_ATTR &&
            py_str_read(&H.objects, r->step.payload, s, sizeof s) && strcmp(s, name) == 0)
            return true;
    }
    return false;
}

/* The path to addr reads want, in steps of the kinds given (enum py_path_kind's letters). */
static void check_path(uint64_t addr, const char *want, const char *kinds)
{
    char marked[4096] = "", text[4096], got[16] = "";
    struct py_path_step steps[16];
    uint32_t i = node(addr);
    CU_ASSERT_TRUE(i != PY_NO_NODE && py_heap_path(&H, i, marked, sizeof marked));
    py_path_text(marked, text, sizeof text);
    size_t n = py_path_steps(marked, steps, 16);
    for (size_t k = 0; k < n && k + 1 < sizeof got; k++)
        got[k] = (char)steps[k].kind;
    if (strcmp(text, want) != 0 || strcmp(got, kinds) != 0)
        fprintf(stderr, "\n  %s: path %s (%s), want %s (%s)\n", P.l->name, text, got, want, kinds);
    CU_ASSERT_STRING_EQUAL(text, want);
    CU_ASSERT_STRING_EQUAL(got, kinds);
}

/* Every object laid out is found as the scene says (reachable, on a GC list only, or absent), and
 * every node found is one the fixture laid out. */
static void check_exactly(void)
{
    for (unsigned k = 0; k < P.nobjs; k++) {
        const struct pf_object *ob = &P.objs[k];
        uint32_t i = node(ob->addr);
        bool ok = ob->expect == PF_REACHABLE ? i < H.nreachable
                  : ob->expect == PF_GARBAGE ? i != PY_NO_NODE && i >= H.nreachable
                                             : i == PY_NO_NODE;
        if (!ok)
            fprintf(stderr, "\n  %s: %s (0x%llx): node %u of %u reachable\n", P.l->name, ob->what,
                    (unsigned long long)ob->addr, i, H.nreachable);
        CU_ASSERT_TRUE(ok);
    }
    for (uint32_t i = 0; i < H.n; i++) {
        bool laid_out = false;
        for (unsigned k = 0; k < P.nobjs && !laid_out; k++)
            laid_out = P.objs[k].addr == H.nodes[i].addr;
        CU_ASSERT_TRUE(laid_out);
    }
}

static void test_finds_exactly_the_scene(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        build(layouts[li]);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        check_exactly();
        CU_ASSERT_PTR_NULL(H.warnings);
        CU_ASSERT_EQUAL(H.gc_listed, 3);
        CU_ASSERT_TRUE(H.nodes[node(P.garbage)].tracked);
        /* __main__ and the two Python frames; the C-stack shim frame is no root */
        CU_ASSERT_EQUAL(H.nroots, 3);
        if (H.nroots == 3) {
            CU_ASSERT_STRING_EQUAL(H.roots[0], "__main__");
            CU_ASSERT_STRING_EQUAL(H.roots[1], "<thread main: f() at main.py>");
            CU_ASSERT_STRING_EQUAL(H.roots[2], "<thread main: <module>() at main.py>");
            CU_ASSERT_EQUAL(H.root_kinds[0], PY_ROOT_USER_MODULE);
            CU_ASSERT_EQUAL(H.root_kinds[1], PY_ROOT_USER_FRAME);
        }
        done();
    }
}

static void test_edges_and_names(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        build(layouts[li]);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        /* list indexes, dict keys (str and int) and the keys as objects of their own */
        CU_ASSERT_TRUE(has_edge(P.xs, P.str_a, PY_E_INDEX, 0));
        CU_ASSERT_TRUE(has_edge(P.xs, P.int_42, PY_E_INDEX, 1));
        CU_ASSERT_TRUE(has_edge(P.t, P.str_b, PY_E_INDEX, 1));
        CU_ASSERT_TRUE(has_edge(P.d, P.str_v, PY_E_KEY, P.int_3));
        CU_ASSERT_TRUE(has_edge(P.d, P.int_3, PY_E_DICTKEY, 0));
        CU_ASSERT_TRUE(has_edge(P.main_dict, P.xs, PY_E_KEY, P.k_xs));
        CU_ASSERT_TRUE(has_edge(P.main_dict, P.t_foo, PY_E_KEY, P.k_Foo));
        CU_ASSERT_TRUE(has_edge(P.garbage, P.garbage, PY_E_INDEX, 0));
        /* attribute names */
        CU_ASSERT_TRUE(has_named_edge(P.f, P.closure, ".__closure__"));
        CU_ASSERT_TRUE(has_named_edge(P.f, P.code_f, ".__code__"));
        CU_ASSERT_TRUE(has_named_edge(P.f, P.main_dict, ".__globals__"));
        CU_ASSERT_TRUE(has_named_edge(P.cell, P.captured, ".cell_contents"));
        CU_ASSERT_TRUE(has_named_edge(P.foo, P.foo_dict, ".__dict__"));
        CU_ASSERT_TRUE(has_named_edge(P.foo, P.t_foo, ".__class__"));
        CU_ASSERT_TRUE(has_named_edge(P.t_foo, P.class_dict, ".__dict__"));
        CU_ASSERT_TRUE(has_named_edge(P.main_mod, P.main_dict, ".__dict__"));
        /* frame locals, the free variable through its cell */
        CU_ASSERT_TRUE(has_local(P.t, "x"));
        CU_ASSERT_TRUE(has_local(P.captured, "c"));
        CU_ASSERT_FALSE(has_local(P.cell, "c"));
        /* shortest paths, as Python spells them */
        check_path(P.xs, "__main__.xs", "ra");
        check_path(P.str_a, "__main__.xs[0]", "rai");
        check_path(P.in_d, "__main__.d['k']", "rak");
        check_path(P.str_v, "__main__.d[3]", "rak");
        check_path(P.payload, "__main__.foo.payload", "raa");
        check_path(P.cell, "__main__.f.__closure__[0]", "raai");
        check_path(P.code_f, "__main__.f.__code__", "raa");
        check_path(P.class_dict, "__main__.Foo.__dict__", "raa");
        check_path(P.k_d, "[*__main__.__dict__][2]", "rad");
        check_path(P.t, "<thread main: f() at main.py>.x", "ra");
        check_path(P.int_42, "<thread main: f() at main.py>.x[0]", "rai");
        check_path(P.captured, "<thread main: f() at main.py>.c", "ra");
        check_path(P.bar_w, "__main__.bar.w", "raa");              /* managed values, no dict */
        check_path(P.in_g, "__main__.g.gi_frame.f_locals['y']", "ral");
        char path[4096];
        CU_ASSERT_FALSE(py_heap_path(&H, node(P.garbage), path, sizeof path));
        char name[256];
        py_type_qualified_name(&H, py_type_at(&H.objects, P.t_foo), name, sizeof name);
        CU_ASSERT_STRING_EQUAL(name, "__main__.Foo");
        py_type_qualified_name(&H, py_type_at(&H.objects, P.t_dict), name, sizeof name);
        CU_ASSERT_STRING_EQUAL(name, "builtins.dict");
        done();
    }
}

/* A list claiming 2^40 items, or a negative number: its items are not read, and that is said. */
static void test_list_size_absurd(void)
{
    static const int64_t sizes[] = {1ll << 40, -5, INT64_MIN};
    for (size_t li = 0; li < NLAYOUTS; li++)
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            build(layouts[li]);
            pf_put64(P.xs + P.l->ob_size, (uint64_t)sizes[k]);
            CU_ASSERT_EQUAL_FATAL(walk(), 0);
            CU_ASSERT_TRUE(node(P.xs) < H.nreachable);
            CU_ASSERT_EQUAL(node(P.str_a), PY_NO_NODE);   /* only xs holds it */
            CU_ASSERT_TRUE(node(P.int_42) < H.nreachable);   /* t holds it too */
            CU_ASSERT_TRUE(warned("could not read the contents of 1 objects (1 list)"));
            done();
        }
}

/* A dict whose keys table lies outside mapped memory: counted and said, the rest walked. */
static void test_dict_keys_unmapped(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        build(layouts[li]);
        pf_put64(P.d + P.l->dict_keys, PF_UNMAPPED);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT_TRUE(node(P.d) < H.nreachable);
        CU_ASSERT_EQUAL(node(P.in_d), PY_NO_NODE);
        CU_ASSERT_EQUAL(node(P.str_v), PY_NO_NODE);
        CU_ASSERT_TRUE(node(P.xs) < H.nreachable);
        CU_ASSERT_TRUE(warned("could not read the contents of 1 objects (1 dict)"));
        done();
        /* a keys table that runs off the end of the image: the entries cannot be read */
        build(layouts[li]);
        uint64_t moved = PF_BASE + PF_SIZE - P.l->dk_indices - 16;
        memcpy(pf_img + (moved - PF_BASE), pf_img + (P.d_keys - PF_BASE), P.l->dk_indices + 16);
        pf_put64(P.d + P.l->dict_keys, moved);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT_TRUE(warned("(1 dict)"));
        done();
    }
}

/* A type whose tp_dict points at unmapped memory: the type, its instances and their attributes
 * are still walked, the class namespace is said to be missing, and the class is named by its
 * tp_name alone. A tp_dict that is a dict whose keys cannot be read counts as that dict. */
static void test_type_dict_unreadable(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        build(layouts[li]);
        pf_put64(P.t_foo + P.l->tp_dict, PF_UNMAPPED);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT_TRUE(node(P.t_foo) < H.nreachable);
        CU_ASSERT_TRUE(node(P.payload) < H.nreachable);
        CU_ASSERT_EQUAL(node(P.class_dict), PY_NO_NODE);
        CU_ASSERT_TRUE(warned("could not read the contents of 1 objects (1 type)"));
        char name[256];
        py_type_qualified_name(&H, py_type_at(&H.objects, P.t_foo), name, sizeof name);
        CU_ASSERT_STRING_EQUAL(name, "builtins.Foo");
        done();
        build(layouts[li]);
        pf_put64(P.class_dict + P.l->dict_keys, PF_UNMAPPED);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT_TRUE(node(P.class_dict) < H.nreachable);
        CU_ASSERT_TRUE(warned("could not read the contents of 1 objects (1 dict)"));
        done();
    }
}

/* A frame chain that loops back (f's caller's caller is f, or f is its own caller): each frame
 * is a root once, the walk ends at once, and the loop is said. */
static void test_frame_chain_loops(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        for (int self = 0; self < 2; self++) {
            build(layouts[li]);
            uint64_t from = self ? P.frame_f : P.frame_mod;
            pf_put64(from + P.l->if_previous, P.frame_f);
            clock_t start = clock();
            CU_ASSERT_EQUAL_FATAL(walk(), 0);
            CU_ASSERT((double)(clock() - start) / CLOCKS_PER_SEC < 0.5);   /* CPU, not wall */
            CU_ASSERT_EQUAL(H.nroots, self ? 2u : 3u);
            CU_ASSERT_TRUE(warned("frame chain of thread main loops back"));
            CU_ASSERT_TRUE(node(P.captured) < H.nreachable);
            done();
        }
    }
}

/* Regression (found by tests/fuzz/pyheap.c): a thread list that looped (a thread state its own
 * next) walked MAX_THREADS threads, and an exception-state chain that looped walked MAX_FRAMES
 * items for each: 4 * 10^8 steps, over a minute of CPU. Each chain is now walked once, and the
 * loop said. */
static void test_thread_and_exception_loops(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        build(layouts[li]);
        const struct py_layout *l = P.l;
        uint64_t item = pf_alloc(&P, 64);   /* a _PyErr_StackItem that is its own previous */
        uint16_t previous = l->ei_exc_type == PY_NONE ? 8 : 24;
        pf_put64(item + l->ei_exc_value, P.none);
        pf_put64(item + previous, item);
        pf_put64(P.tstate + l->ts_exc_info, item);
        pf_put64(P.tstate + l->ts_next, P.tstate);
        clock_t start = clock();
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT((double)(clock() - start) / CLOCKS_PER_SEC < 0.5);   /* CPU, not wall */
        CU_ASSERT_EQUAL(H.nroots, 4);   /* __main__, two frames, the exception being handled */
        CU_ASSERT_TRUE(warned("thread list loops back after 1 threads"));
        CU_ASSERT_TRUE(warned("exceptions being handled by thread main loop back after 1"));
        CU_ASSERT_TRUE(node(P.none) < H.nreachable);
        done();
    }
}

/* Frames that cannot be read, and frames whose locals cannot be: counted with the containers,
 * the rest of the chain walked as far as it goes. */
static void test_unreadable_frames_said(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        const struct py_layout *l;
        /* f's caller is unmapped: the chain is cut there */
        build(layouts[li]);
        l = P.l;
        pf_put64(P.frame_f + l->if_previous, PF_UNMAPPED);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT_EQUAL(H.nroots, 2);
        CU_ASSERT_TRUE(warned("could not read the contents of 1 objects (1 frame)"));
        CU_ASSERT_TRUE(has_local(P.t, "x"));
        done();
        /* f's local names are unmapped: its locals are not read */
        build(layouts[li]);
        pf_put64(P.code_f + l->co_localsplusnames, PF_UNMAPPED);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT_FALSE(has_local(P.t, "x"));
        CU_ASSERT_TRUE(node(P.t) < H.nreachable);   /* __main__.t */
        CU_ASSERT_TRUE(warned("(1 frame)"));
        done();
        /* f's code object is unmapped: nothing of the frame can be read */
        build(layouts[li]);
        pf_put64(P.frame_f + l->if_code, PF_UNMAPPED);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT_EQUAL(H.nroots, 2);
        CU_ASSERT_TRUE(warned("(1 frame)"));
        done();
        /* f's frame runs off the end of the image: its local slots cannot be read */
        build(layouts[li]);
        uint64_t moved = PF_BASE + PF_SIZE - l->if_localsplus - 8;
        memcpy(pf_img + (moved - PF_BASE), pf_img + (P.frame_f - PF_BASE), l->if_localsplus + 8);
        if (l->frames == PY_FRAMES_CFRAME)
            pf_put64(P.cframe + l->cf_current_frame, moved);
        else
            pf_put64(P.tstate + l->ts_current_frame, moved);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT_TRUE(has_local(P.t, "x"));         /* slot 0 is in the image */
        CU_ASSERT_FALSE(has_local(P.captured, "c"));  /* slot 1 is not */
        CU_ASSERT_TRUE(warned("(1 frame)"));
        done();
        /* a shim frame (3.12+) and a frame whose code is not a code object are no Python
         * frames: skipped, and nothing is said */
        build(layouts[li]);
        pf_put64(P.frame_mod + l->if_code, P.xs);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT_EQUAL(H.nroots, 2);
        CU_ASSERT_PTR_NULL(H.warnings);
        done();
    }
}

/* Managed values whose shared keys are unmapped (every dict model), a generator whose frame's
 * code is unmapped: their contents are missing, and said. */
static void test_managed_and_generator_unreadable(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        build(layouts[li]);
        pf_put64(P.t_bar + P.l->ht_cached_keys, PF_UNMAPPED);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT_TRUE(node(P.bar) < H.nreachable);
        CU_ASSERT_EQUAL(node(P.bar_w), PY_NO_NODE);
        CU_ASSERT_TRUE(warned("could not read the contents of 1 objects (1 other)"));
        done();
        build(layouts[li]);
        pf_put64(P.g + P.l->gen_iframe + P.l->if_code, PF_UNMAPPED);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT_TRUE(node(P.g) < H.nreachable);
        CU_ASSERT_EQUAL(node(P.in_g), PY_NO_NODE);
        CU_ASSERT_TRUE(warned("could not read the contents of 1 objects (1 generator)"));
        done();
        /* a generator that has completed has no locals to read: nothing to say */
        build(layouts[li]);
        pf_put8(P.g + P.l->gen_frame_state, (uint8_t)P.l->gen_completed);
        pf_put64(P.g + P.l->gen_iframe + P.l->if_code, PF_UNMAPPED);
        CU_ASSERT_EQUAL_FATAL(walk(), 0);
        CU_ASSERT_PTR_NULL(H.warnings);
        done();
    }
}

/* A GC list that loops back on itself short of its head: walked once, said broken. */
static void test_gc_list_loops(void)
{
    for (size_t li = 0; li < NLAYOUTS; li++) {
        for (int to_self = 0; to_self < 2; to_self++) {
            build(layouts[li]);
            uint16_t g = P.l->gc_head_size;
            pf_put64(P.garbage - g, (to_self ? P.garbage : P.xs) - g);
            clock_t start = clock();
            CU_ASSERT_EQUAL_FATAL(walk(), 0);
            CU_ASSERT((double)(clock() - start) / CLOCKS_PER_SEC < 0.5);   /* CPU, not wall */
            CU_ASSERT_TRUE(warned("GC generation 0 list is broken"));
            CU_ASSERT_TRUE(node(P.garbage) >= H.nreachable && node(P.garbage) != PY_NO_NODE);
            CU_ASSERT_TRUE(H.gc_listed <= 3 * 3);
            done();
        }
    }
}

/* --max-objects: the walk stops there and says so. Once it holds that many, the GC lists are
 * not read on (a dump made with --max-objects then holds no more of the heap than the walk),
 * and a list left unread is not called broken. */
static void test_max_objects(void)
{
    build("3.12");
    CU_ASSERT_EQUAL_FATAL(walk_max(5), 0);
    CU_ASSERT_EQUAL(H.n, 5);
    CU_ASSERT_TRUE(warned("stopped after 5 objects"));
    CU_ASSERT_EQUAL(H.gc_listed, 0);
    done();
    CU_ASSERT_EQUAL_FATAL(walk(), 0);
    uint32_t reachable = H.nreachable;
    done();
    CU_ASSERT_EQUAL_FATAL(walk_max(reachable + 1), 0);   /* one garbage object more */
    CU_ASSERT_EQUAL(H.n, reachable + 1);
    CU_ASSERT_TRUE(H.gc_listed >= 1 && H.gc_listed < 3 + reachable);
    CU_ASSERT_FALSE(warned("is broken"));
    done();
}

/* No roots at all (sys.modules and the thread list empty): refused, not an empty report. */
static void test_no_roots_refused(void)
{
    build("3.11");
    pf_put64(P.interp + P.l->is_modules, 0);
    pf_put64(P.interp + P.l->is_threads_head, 0);
    CU_ASSERT_EQUAL(walk(), CL_E_UNSUPPORTED);
    cl_target_close(T);
}

void register_cpython_heap_tests(void)
{
    static const struct tu_test tests[] = {
        {"fixture image: the walk finds exactly the scene", test_finds_exactly_the_scene},
        {"fixture image: edges carry their names", test_edges_and_names},
        {"fixture image: a list of absurd size is skipped and said", test_list_size_absurd},
        {"fixture image: a dict with unmapped keys is skipped and said", test_dict_keys_unmapped},
        {"fixture image: a type whose tp_dict is unreadable", test_type_dict_unreadable},
        {"fixture image: a looping frame chain is bounded and said", test_frame_chain_loops},
        {"fixture image: unreadable frames and locals are said", test_unreadable_frames_said},
        {"fixture image: looping thread and exception chains are bounded",
         test_thread_and_exception_loops},
        {"fixture image: unreadable managed values and generator frames are said",
         test_managed_and_generator_unreadable},
        {"fixture image: a looping GC list is bounded and said", test_gc_list_loops},
        {"fixture image: --max-objects stops the walk", test_max_objects},
        {"fixture image: no roots is refused", test_no_roots_refused},
        {NULL, NULL},
    };
    tu_add_suite("cpython/heap", tests);
}
