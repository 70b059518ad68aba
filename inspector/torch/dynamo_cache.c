#include "torch/dynamo_cache.h"

#include <string.h>

#include "cpython/layout.h"

#define MAX_CO_EXTRA 255        /* CPython's MAX_CO_EXTRA_USERS: more slots is no ExtraState */
#define MAX_ENTRIES 4096        /* per code object (torch's recompile limit is 8 by default) */
#define MAX_REGIONS 1024        /* isolated recompile regions of one code object */
#define NOT_A_POINTER 4096      /* Dynamo's SKIP_CODE-style marks are small integers */
#define MAX_MEMBERS 4
#define LIST_NODE 16            /* libstdc++'s list and hash nodes: next (and prev), then value */

enum shape {
    CHAIN, /* 2.1: the first entry, a Python object chaining the next */
    LIST,  /* a std::list<CacheEntry> */
    MAP,   /* a std::unordered_map<int64_t, std::list<CacheEntry>>: its before-begin word */
};

struct row {
    unsigned first_minor;   /* covers its minor up to the next row's (cl_torch_row) */
    enum shape shape;
    uint16_t orig_code;     /* the ExtraState's pointer back at its code; PY_NONE: none */
    uint16_t entries;       /* where the ExtraState keeps them (enum shape) */
    uint16_t frame_state;   /* its py::dict */
    uint16_t link;          /* an entry's _owner (the ExtraState); CHAIN: its next entry */
    struct {
        uint16_t at;
        const char *label;
        unsigned flags;     /* PY_E_UNCOUNTED: a PyObject* the entry holds no count of */
    } members[MAX_MEMBERS]; /* an entry's py::objects */
};

#define ENTRY ".<torch.compile cache>"
/* clang-format off */
#define GUARDED_CODE(backend_flags) \
    {{0, ENTRY ".guard_manager", 0}, \
     {8, ENTRY ".code", 0}, \
     {16, ENTRY ".compile_id", 0}, \
     {40, ENTRY ".backend", backend_flags}}

/* Read off 2.1.2, 2.4.1, 2.6.0 to 2.15.0 by tests/layouts/probe_dynamo.py: two cache entries of
 * one function, found through torch's _debug_get_cache_entry_list. The members it cannot match
 * to an attribute of the entry are named after torch's source: 2.4's at 24 and 2.6-2.9's at 40
 * are the `backend` that 2.10 shows, which 2.4 to 2.8 keep as a PyObject* with no count
 * (torch/csrc/dynamo/cache_entry.h), a name only. */
static const struct row rows[] = {
    {1, CHAIN, PY_NONE, 0, 8, 32, {{16, ENTRY ".check_fn", 0}, {24, ENTRY ".code", 0}}},
    {4, LIST, PY_NONE, 0, 16, 32,
     {{0, ENTRY ".check_fn", 0}, {8, ENTRY ".code", 0}, {24, ENTRY ".backend", PY_E_UNCOUNTED}}},
    {6, LIST, 0, 8, 24, 48, GUARDED_CODE(PY_E_UNCOUNTED)},
    {7, LIST, 0, 8, 32, 48, GUARDED_CODE(PY_E_UNCOUNTED)},
    {8, LIST, 0, 32, 56, 48, GUARDED_CODE(PY_E_UNCOUNTED)},
    {9, LIST, 0, 32, 56, 48, GUARDED_CODE(0)},
    {13, MAP, 0, 48, 96, 48, GUARDED_CODE(0)},
};
/* clang-format on */

/* 2.1's entries are objects of this type (torch/csrc/dynamo/eval_frame.c). */
#define CHAIN_ENTRY_TYPE "CacheEntryWrapper"

/* The word at addr, or 0: read only where the target holds it, as nothing says these structures
 * are what the row says until they check out, and a dump an older culeak wrote has none of them
 * (cl_read_held). */
static uint64_t word(const struct py_emitter *e, uint64_t addr)
{
    return cl_read_held_ptr_or_0(e->o->rt->t, addr);
}

/* One entry's members: each set one an object. With emit, they are the code's references. */
static bool read_entry(const struct py_emitter *e, const struct row *r, uint64_t entry, bool emit)
{
    for (size_t k = 0; k < MAX_MEMBERS && r->members[k].label; k++) {
        uint64_t v = word(e, entry + r->members[k].at);
        if (v && !py_held_object_type(e->o, v))
            return false;
        if (v && emit)
            py_emit(e, v, PY_E_NAMED | r->members[k].flags,
                    (uint64_t)(uintptr_t)r->members[k].label);
    }
    return true;
}

/* The entries of the std::list whose sentinel is at list, each pointing back at state. */
static bool read_list(const struct py_emitter *e, const struct row *r, uint64_t state,
                      uint64_t list, bool emit, size_t *seen)
{
    uint64_t node = word(e, list);
    for (; node != list; node = word(e, node)) {
        uint64_t entry = node + LIST_NODE;
        if (!node || ++*seen > MAX_ENTRIES || word(e, entry + r->link) != state ||
            !read_entry(e, r, entry, emit))
            return false;
    }
    return true;
}

/* 2.1: entries are Python objects of their own, the first held by the ExtraState and each by the
 * one before it (the last by None); they and what they hold are the code's. */
static bool read_chain(const struct py_emitter *e, const struct row *r, uint64_t first, bool emit)
{
    size_t seen = 0;
    uint64_t none = e->o->rt->none;   /* the last entry's next */
    for (uint64_t entry = first; entry && entry != none; entry = word(e, entry + r->link)) {
        const struct py_type *ty = py_held_object_type(e->o, entry);
        if (++seen > MAX_ENTRIES || !ty || !strstr(ty->name, CHAIN_ENTRY_TYPE) ||
            !read_entry(e, r, entry, emit))
            return false;
        if (emit)
            py_emit(e, entry, PY_E_NAMED, (uint64_t)(uintptr_t)ENTRY);
    }
    return true;
}

static bool read_state(const struct py_emitter *e, const struct row *r, uint64_t code,
                       uint64_t state, bool emit)
{
    uint64_t frame_state = word(e, state + r->frame_state);
    const struct py_type *fs = py_held_object_type(e->o, frame_state);
    if ((r->orig_code != PY_NONE && word(e, state + r->orig_code) != code) ||
        (frame_state && (!fs || fs->family != PY_F_DICT)))
        return false;
    if (frame_state && emit)
        py_emit(e, frame_state, PY_E_NAMED, (uint64_t)(uintptr_t)".<torch.compile frame_state>");
    size_t seen = 0, regions = 0;
    switch (r->shape) {
    case CHAIN: return read_chain(e, r, word(e, state + r->entries), emit);
    case LIST: return read_list(e, r, state, state + r->entries, emit, &seen);
    case MAP:
        for (uint64_t n = word(e, state + r->entries); n; n = word(e, n))
            if (++regions > MAX_REGIONS || !read_list(e, r, state, n + LIST_NODE, emit, &seen))
                return false;
        return true;
    }
    return false;
}

static void look_up(struct torch_dynamo_cache *c)
{
    c->looked_up = true;
    c->row = cl_torch_row(c->torch, &rows[0].first_minor, sizeof rows / sizeof *rows, sizeof *rows);
    const struct cl_module *lib = cl_symbols_module_named(c->syms, "libtorch_python");
    uint64_t at, index;
    c->torch_python = lib != NULL;
    if (lib && cl_module_symbol_optional(lib, "extra_index", &at, NULL) &&
        !cl_read_u64(c->t, at, &index) && index < MAX_CO_EXTRA)
        c->index = (int64_t)index;
}

static void emit_cache(void *ctx, const struct py_emitter *e, uint64_t code, uint64_t co_extra)
{
    struct torch_dynamo_cache *c = ctx;
    if (!c->looked_up)
        look_up(c);
    /* _PyCodeObjectExtra: ce_size, then the slots */
    uint64_t size = word(e, co_extra);
    if (c->index < 0 && c->torch_python)
        c->unread++;   /* whose slot is whose is not known */
    if (c->index < 0 || (uint64_t)c->index >= size || size > MAX_CO_EXTRA)
        return;   /* no slot of Dynamo's: another library's co_extra */
    uint64_t state = word(e, co_extra + 8 + 8 * (uint64_t)c->index);
    if (state < NOT_A_POINTER)
        return;   /* none, or a mark (skip this code) */
    const struct row *r = c->row >= 0 ? &rows[c->row] : NULL;
    if (r && read_state(e, r, code, state, false)) {
        (void)read_state(e, r, code, state, true);
        c->read++;
    } else {
        c->unread++;
    }
}

void torch_dynamo_cache_init(struct torch_dynamo_cache *c, struct cl_target *t,
                             const struct cl_symbols *syms, const struct cl_torch_info *torch)
{
    *c = (struct torch_dynamo_cache){{emit_cache, c}, t, syms, torch, false, false, -1, -1, 0, 0};
}
