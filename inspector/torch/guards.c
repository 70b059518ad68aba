#include "torch/guards.h"

#include <string.h>

#include "cpython/layout.h"
#include "cpython/object.h"
#include "cpython/pybind11_types.h"
#include "torch/cxx.h"
#include "util/addrmap.h"

#define MAX_DEPTH 256        /* a guard tree follows the attributes a function reads */
#define MAX_NODES (1u << 20) /* managers, accessors and leaf guards of one tree */
#define SHARED_PTR 16        /* a leaf guard's slot: the pointer, then the control block */
/* torch::dynamo::(anonymous namespace)::, whose classes' RTTI names GCC marks local with a '*' */
#define DYNAMO_CLASS "*N5torch6dynamo12_GLOBAL__N_1"

struct row {
    unsigned first_minor;   /* covers its minor up to the next row's (cl_torch_row) */
    uint16_t leaves;        /* GuardManager::_leaf_guards, a vector of shared_ptrs */
    uint16_t accessors;     /* GuardManager::_accessors, a vector of unique_ptrs */
    uint16_t guarded_type;  /* the manager's weak reference to its value's type; PY_NONE: none */
    uint16_t child, key;    /* GuardAccessor::_guard_manager, _accessor_key */
    uint16_t code_parts;    /* LeafGuard::_verbose_code_parts */
    uint16_t user_stack;    /* LeafGuard::_user_stack; PY_NONE: none */
    uint16_t own;           /* where a leaf guard kind's own members start: LeafGuard's size */
    uint16_t dict_entries;  /* DictGuardManager's key and value managers: an unordered_map's
                             * before-begin word */
    uint16_t epilogue;      /* RootGuardManager's epilogue lambda guards, a vector of
                             * shared_ptrs */
    uint16_t weak_values;   /* 2.9-2.11: a manager's weak references to the value it guards
                             * (whose callback drops the cache when it dies), a vector of
                             * 16-byte elements that open with the reference; PY_NONE: none */
};

/* clang-format off */
/* Read off 2.6.0 to 2.15.0 by tests/layouts/probe_guards.py. */
static const struct row rows[] = {
    {6, 88, 112, PY_NONE, 8, 16, 16, PY_NONE, 24, 216, 208, PY_NONE},
    {7, 112, 136, PY_NONE, 8, 16, 16, PY_NONE, 24, 240, 232, PY_NONE},
    {9, 112, 136, 336, 8, 16, 16, PY_NONE, 24, 408, 400, 304},
    {11, 112, 136, 336, 8, 16, 16, 24, 32, 408, 400, 304},
    {12, 112, 136, 392, 8, 16, 16, 24, 32, 464, 456, PY_NONE},
    {15, 112, 136, 392, 8, 16, 16, 24, 32, 464, 464, PY_NONE},
};
/* clang-format on */

/* A node of the dict manager's map: next, the key's index in the dict, then the KeyValueManager:
 * the key's manager and the value's (unique_ptrs, either may be null). */
#define DICT_NODE_KEY 16
#define DICT_NODE_VALUE 24
#define WEAK_VALUE 16   /* an element of weak_values */

/* The references a kind of leaf guard keeps of its own (after LeafGuard's), where the probe
 * found every object it holds there counted: offsets from the row's `own`, from a release on
 * (the first minor of a row). */
struct leaf_kind {
    const char *name;   /* the class's, as cxx_short_name gives it */
    const char *code_parts, *user_stack;
    struct {
        unsigned first_minor;
        uint16_t at;
        const char *label;
    } members[2];
};

#define GUARD(kind) ".<" kind " guard>"
#define KIND(kind, ...) \
    { \
        kind, GUARD(kind) ".verbose_code_parts", GUARD(kind) ".user_stack", \
        { \
            __VA_ARGS__ \
        } \
    }

static const struct leaf_kind kinds[] = {
    KIND("LAMBDA_GUARD", {6, 0, GUARD("LAMBDA_GUARD") ".guard_check_fn"}),
    KIND("EQUALS_MATCH", {6, 0, GUARD("EQUALS_MATCH") ".value"}),
    /* from 2.9 its GlobalStateGuard, twice: the object, then the reference that owns it */
    KIND("GLOBAL_STATE", {9, 8, GUARD("GLOBAL_STATE") ".guard"}),
    KIND("DEFAULT_DEVICE", {6, 0, GUARD("DEFAULT_DEVICE") ".utils_device_dict"},
         {6, 8, GUARD("DEFAULT_DEVICE") ".device"}),
    KIND("NO_TENSOR_ALIASING", {6, 0, GUARD("NO_TENSOR_ALIASING") ".tensor_names"}),
    /* kinds whose own members hold no reference the probe found (ID_MATCH and TYPE_MATCH keep
     * an address) */
    KIND("TYPE_MATCH"),
    KIND("ID_MATCH"),
    KIND("TENSOR_MATCH"),
    KIND("DIMENSION_DYNAMIC_MARKING_GUARD"),
    KIND("TORCH_FUNCTION_MODE_STACK"),
    KIND("NO_HASATTR"),
    KIND("DICT_CONTAINS"),
    KIND("DICT_VERSION"),
    KIND("LENGTH_CHECK"),
    KIND("FALSE_MATCH"),
};
static const struct leaf_kind other_kind = KIND("a");

struct tree {
    const struct py_emitter *e;
    struct cl_target *t;
    const struct row *r;
    struct torch_guards *g;
    uint32_t index;                 /* this tree's number (g->trees) */
    struct cl_addrmap leaves_met;   /* a leaf shared by managers of the tree is read once */
    size_t nodes;
    bool emit;
};

/* Whether obj is an object of one of Dynamo's classes whose name ends in suffix; its short name
 * into name. */
static bool dynamo_class(struct tree *w, uint64_t obj, const char *suffix,
                         char name[CXX_SHORT_NAME])
{
    char mangled[160];
    if (!cxx_class_name_held(w->t, obj, mangled, sizeof mangled) ||
        strncmp(mangled, DYNAMO_CLASS, strlen(DYNAMO_CLASS)))
        return false;
    cxx_short_name(mangled + 1, name, CXX_SHORT_NAME);
    size_t n = strlen(name), k = strlen(suffix);
    return n >= k && !strcmp(name + n - k, suffix);
}

/* A py::object member: none, or an object of the heap (of family want, unless PY_F_OTHER). */
static bool member(struct tree *w, uint64_t at, const char *label, enum py_family want)
{
    uint64_t v = cl_read_held_ptr_or_0(w->t, at);
    if (!v)
        return true;
    const struct py_type *ty = py_held_object_type(w->e->o, v);
    if (!ty || (want != PY_F_OTHER && ty->family != want))
        return false;
    if (w->emit)
        py_emit(w->e, v, PY_E_NAMED, (uint64_t)(uintptr_t)label);
    return true;
}

static bool leaf(struct tree *w, uint64_t g)
{
    char name[CXX_SHORT_NAME];
    bool inserted;
    if (!g || !dynamo_class(w, g, "", name) ||
        cl_addrmap_put(&w->leaves_met, g, 0, &inserted) == UINT32_MAX)
        return false;
    if (!inserted)
        return true;
    if (w->emit) {
        uint32_t tree = cl_addrmap_put(&w->g->leaf_tree, g, w->index, &inserted);
        if (tree != w->index)
            return true;   /* another tree's (or no room to say whose: none's) */
    }
    const struct leaf_kind *k = &other_kind;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        if (!strcmp(kinds[i].name, name))
            k = &kinds[i];
    if (!member(w, g + w->r->code_parts, k->code_parts, PY_F_LIST) ||
        (w->r->user_stack != PY_NONE &&
         !member(w, g + w->r->user_stack, k->user_stack, PY_F_OTHER)))
        return false;
    for (size_t i = 0; i < sizeof k->members / sizeof *k->members && k->members[i].label; i++)
        if (w->r->first_minor >= k->members[i].first_minor &&
            !member(w, g + w->r->own + k->members[i].at, k->members[i].label, PY_F_OTHER))
            return false;
    return true;
}

/* The leaf guards of a vector of shared_ptrs at `at`. */
static bool leaves(struct tree *w, uint64_t at)
{
    uint64_t v[3];
    if (!cxx_vector_held(w->t, at, SHARED_PTR, MAX_NODES, v))
        return false;
    for (uint64_t p = v[0]; p < v[1]; p += SHARED_PTR)
        if (++w->nodes > MAX_NODES || !leaf(w, cl_read_held_ptr_or_0(w->t, p)))
            return false;
    return true;
}

static bool manager(struct tree *w, uint64_t m, unsigned depth);

/* 2.9-2.11: the manager's weak references to the value it guards. */
static bool weak_values(struct tree *w, uint64_t m)
{
    uint64_t v[3];
    if (w->r->weak_values == PY_NONE)
        return true;
    if (!cxx_vector_held(w->t, m + w->r->weak_values, WEAK_VALUE, MAX_NODES, v))
        return false;
    for (uint64_t p = v[0]; p < v[1]; p += WEAK_VALUE)
        if (++w->nodes > MAX_NODES ||
            !member(w, p, ".<a guard manager's weak reference to its value>", PY_F_WEAKREF))
            return false;
    return true;
}

/* A DictGuardManager's managers of its keys and values. */
static bool dict_entries(struct tree *w, uint64_t m, unsigned depth)
{
    for (uint64_t n = cl_read_held_ptr_or_0(w->t, m + w->r->dict_entries); n;
         n = cl_read_held_ptr_or_0(w->t, n)) {
        uint64_t key = cl_read_held_ptr_or_0(w->t, n + DICT_NODE_KEY);
        uint64_t value = cl_read_held_ptr_or_0(w->t, n + DICT_NODE_VALUE);
        if (++w->nodes > MAX_NODES || (key && !manager(w, key, depth + 1)) ||
            (value && !manager(w, value, depth + 1)))
            return false;
    }
    return true;
}

static bool manager(struct tree *w, uint64_t m, unsigned depth)
{
    const struct row *r = w->r;
    char name[CXX_SHORT_NAME];
    uint64_t v[3];
    if (depth > MAX_DEPTH || !m || !dynamo_class(w, m, "GuardManager", name) ||
        (r->guarded_type != PY_NONE &&
         !member(w, m + r->guarded_type, ".<a guard manager's guarded type>", PY_F_OTHER)) ||
        !leaves(w, m + r->leaves) || !weak_values(w, m) ||
        !cxx_vector_held(w->t, m + r->accessors, 8, MAX_NODES, v) ||
        (!strcmp(name, "DictGuardManager") && !dict_entries(w, m, depth)))
        return false;
    for (uint64_t p = v[0]; p < v[1]; p += 8) {
        uint64_t a = cl_read_held_ptr_or_0(w->t, p);
        if (++w->nodes > MAX_NODES || !a || !dynamo_class(w, a, "Accessor", name) ||
            !member(w, a + r->key, ".<a guard accessor's key>", PY_F_OTHER) ||
            !manager(w, cl_read_held_ptr_or_0(w->t, a + r->child), depth + 1))
            return false;
    }
    return true;
}

static bool read_tree(struct tree *w, uint64_t root, bool emit)
{
    w->emit = emit;
    w->nodes = 0;
    cl_addrmap_free(&w->leaves_met);
    return manager(w, root, 0) && (w->r->epilogue == PY_NONE || leaves(w, root + w->r->epilogue));
}

/* obj's number among the trees met, given the first time; UINT32_MAX when there is no room. */
static uint32_t tree_index(struct torch_guards *g, uint64_t obj)
{
    bool inserted;
    uint32_t i = cl_addrmap_put(&g->trees, obj, g->ntrees, &inserted);
    g->ntrees += inserted;
    return i;
}

void torch_guards_emit(void *ctx, const struct py_emitter *e, uint64_t obj)
{
    struct torch_guards *g = ctx;
    uint64_t root = py_pybind11_value(e->o->rt->t, obj);
    struct tree w = {e, e->o->rt->t, g->row >= 0 ? &rows[g->row] : NULL, g, tree_index(g, obj), {0},
                     0, false};
    char name[CXX_SHORT_NAME];
    if (!w.r || w.index == UINT32_MAX || !root || !dynamo_class(&w, root, "", name) ||
        strcmp(name, "RootGuardManager") || !read_tree(&w, root, false))
        py_emit_skipped(e, PY_F_READER);
    else
        (void)read_tree(&w, root, true);
    cl_addrmap_free(&w.leaves_met);
}

void torch_guards_free(struct torch_guards *g)
{
    cl_addrmap_free(&g->leaf_tree);
    cl_addrmap_free(&g->trees);
    *g = (struct torch_guards){0};
}

void torch_guards_init(struct torch_guards *g, const struct cl_torch_info *torch)
{
    torch_guards_free(g);
    g->row = cl_torch_row(torch, &rows[0].first_minor, sizeof rows / sizeof *rows, sizeof *rows);
}
