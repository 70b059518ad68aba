/* The CPython walkers' fixture image, shared by tests/unit/cpython/{heap,referents,frames,object}
 * _test.c and the fuzz harness tests/fuzz/pyheap.c: a hand-built heap (not a real interpreter;
 * the walkers are checked on real interpreters by the integration tests) laid out with the offsets
 * of one layout table of inspector/cpython/layouts.c, served at PF_BASE through cl_target_ops. The
 * builder reads every offset and model (frames, dicts) from the table, so the same scene comes out
 * for each table it supports: 3.11, 3.12 and 3.13.0 (split dict keys, interpreter frames).
 *
 * The scene, as Python would have made it:
 *
 *     # /home/u/main.py
 *     class Foo: pass
 *     xs = ["a", 42]
 *     t = (42, "b")
 *     d = {3: "v", "k": ["in d"]}
 *     foo = Foo(); foo.payload = b"\0\0\0\0"
 *     def make():
 *         captured = []
 *         def f(x): ...captured...    # f's closure holds a cell for captured
 *         return f
 *     f = make()
 *     f(t)                            # stopped here: f's frame has x = t and c (its free
 *                                     # variable, spelled "c" here) = captured
 *     class Bar: pass                 # instances keep managed dicts (3.11+): no dict object
 *     bar = Bar(); bar.w = "bar.w"    # just values, where this minor keeps them
 *     def gen(): y = "in g"; yield
 *     g = gen(); next(g)              # suspended, y in its embedded frame
 *     garbage = []; garbage.append(garbage); del garbage   # on the GC list, no root reaches it
 *
 * One thread (main), sys.modules = {"__main__": the module}, the GC's generation 0 list holds xs,
 * d and the garbage list, the other lists are empty. Header-only, as testutil.h: each includer
 * gets its own image. */
#ifndef CULEAK_TESTS_UNIT_CPYTHON_HEAP_FIXTURE_H
#define CULEAK_TESTS_UNIT_CPYTHON_HEAP_FIXTURE_H

#include <stdint.h>
#include <string.h>

#include "cpython/gclist.h"
#include "cpython/layout.h"
#include "cpython/runtime.h"
#include "image.h"
#include "target/target.h"

#define PF_BASE 0x400000u
/* 16 pages: every offset fits the 16-bit patch offsets of the fuzz harness */
#define PF_SIZE (16u * CL_PAGE_SIZE)
#define PF_UNMAPPED 0x7f0000001000ull   /* an address no mapping of the fixture covers */
#define PF_MAX_OBJECTS 128

static unsigned char pf_img[PF_SIZE];

/* What the walk should make of an object the builder laid out. */
enum pf_expect {
    PF_REACHABLE,     /* reached from a root */
    PF_GARBAGE,       /* on a GC list only */
    PF_ABSENT,        /* referred to by nothing the walker follows (a frame's code object) */
};

struct pf_object {
    uint64_t addr;
    uint8_t expect;
    const char *what;
};

struct pf {
    const struct py_layout *l;
    struct py_runtime rt;     /* what py_runtime_open would have found; rt.t set by pf_target */
    uint32_t next;            /* bump allocator: the next free offset in pf_img */
    int overflow;             /* the scene did not fit the image */
    struct pf_object objs[PF_MAX_OBJECTS];
    unsigned nobjs;
    uint64_t gc;              /* the GC state: interp + is_gc */
    /* types */
    uint64_t t_type, t_object, t_dict, t_list, t_tuple, t_str, t_int, t_bytes, t_module, t_function,
        t_cell, t_code, t_none, t_foo, t_bar, t_gen;
    /* the scene */
    uint64_t none, modules, main_mod, main_name, main_dict, xs, xs_items, str_a, int_42, t, str_b,
        d, d_keys, int_3, str_v, str_k, in_d, foo, foo_dict, payload, f, closure, cell, captured,
        code_f, code_mod, garbage, foo_dict_keys, class_dict, bar, bar_values, bar_w, g, in_g,
        code_g;
    /* keys of main_dict, in insertion order */
    uint64_t k_xs, k_t, k_d, k_foo, k_f, k_Foo, k_bar, k_g;
    /* the runtime and its one thread; frame_shim is 0 where the table has no shim frames */
    uint64_t runtime, interp, tstate, cframe, frame_f, frame_mod, frame_shim;
};

static struct tu_image pf_image = {.base = PF_BASE, .bytes = pf_img, .size = sizeof pf_img};

/* Writers at target addresses (the shared image's, tests/unit/image.h). */
static inline void pf_put(uint64_t addr, const void *v, size_t n)
{
    tu_put(&pf_image, addr, v, n);
}
static inline void pf_put64(uint64_t addr, uint64_t v)
{
    tu_put64(&pf_image, addr, v);
}
static inline void pf_put32(uint64_t addr, uint32_t v)
{
    tu_put32(&pf_image, addr, v);
}
static inline void pf_put8(uint64_t addr, uint8_t v)
{
    tu_put8(&pf_image, addr, v);
}
static inline uint64_t pf_get64(uint64_t addr)
{
    return tu_get64(&pf_image, addr);
}

/* size bytes, 16-aligned, zeroed; 0 and overflow set when the image is full. */
static inline uint64_t pf_alloc(struct pf *p, uint32_t size)
{
    uint32_t at = (p->next + 15) & ~15u;
    if (at > sizeof pf_img || size > sizeof pf_img - at) {
        p->overflow = 1;
        return 0;
    }
    p->next = at + size;
    return PF_BASE + at;
}

/* A C string (tp_name, a member name) in the image. */
static inline uint64_t pf_cstr(struct pf *p, const char *s)
{
    uint64_t a = pf_alloc(p, (uint32_t)strlen(s) + 1);
    pf_put(a, s, strlen(s) + 1);
    return a;
}

static inline void pf_note(struct pf *p, uint64_t addr, enum pf_expect expect, const char *what)
{
    if (p->nobjs < PF_MAX_OBJECTS)
        p->objs[p->nobjs++] = (struct pf_object){addr, (uint8_t)expect, what};
    else
        p->overflow = 1;
}

/* Changes what the walk should make of an object already laid out. */
static inline void pf_expect(struct pf *p, uint64_t addr, enum pf_expect expect)
{
    for (unsigned i = 0; i < p->nobjs; i++)
        if (p->objs[i].addr == addr)
            p->objs[i].expect = (uint8_t)expect;
}

/* An object of type `type`, size bytes from its ob_refcnt, with pre bytes in front (its
 * PyGC_Head, and before that a managed dict's pre-header). */
static inline uint64_t pf_object_pre(struct pf *p, uint64_t type, uint32_t size, uint32_t pre,
                                     enum pf_expect expect, const char *what)
{
    uint64_t a = pf_alloc(p, pre + size);
    if (!a)
        return 0;
    a += pre;
    pf_put64(a, 1);   /* ob_refcnt */
    pf_put64(a + p->l->ob_type, type);
    pf_note(p, a, expect, what);
    return a;
}

/* An object with a PyGC_Head in front when gc. */
static inline uint64_t pf_object(struct pf *p, uint64_t type, uint32_t size, int gc,
                                 enum pf_expect expect, const char *what)
{
    return pf_object_pre(p, type, size, gc ? ((p->l->gc_head_size + 15u) & ~15u) : 0, expect, what);
}

/* Appends obj to GC list g: the lists are circular through _gc_next (and _gc_prev) from the
 * list's head in the interpreter's GC state. */
static inline void pf_gc_track(struct pf *p, uint64_t obj, unsigned g)
{
    uint64_t head = py_gc_list_head(p->l, p->gc, g), node = obj - p->l->gc_head_size;
    uint64_t tail = pf_get64(head + 8);
    pf_put64(tail, node);
    pf_put64(node, head);
    pf_put64(node + 8, tail);
    pf_put64(head + 8, node);
}

/* A static type named name whose instances are basicsize bytes (plus itemsize an item). */
static inline uint64_t pf_type(struct pf *p, const char *name, int64_t basicsize, int64_t itemsize,
                               uint64_t flags, enum py_family family)
{
    const struct py_layout *l = p->l;
    uint64_t a = pf_object(p, p->t_type, l->ht_module + 8, 0, PF_REACHABLE, name);
    if (!p->t_type)   /* `type` itself: its own type */
        pf_put64(a + l->ob_type, p->t_type = a);
    pf_put64(a + l->tp_name, pf_cstr(p, name));
    pf_put64(a + l->tp_basicsize, (uint64_t)basicsize);
    pf_put64(a + l->tp_itemsize, (uint64_t)itemsize);
    pf_put64(a + l->tp_flags, flags);
    pf_put64(a + l->tp_base, p->t_object);
    if (family != PY_F_OTHER) {
        struct py_runtime *rt = &p->rt;
        rt->family_type[family] = a;
        rt->known[rt->nknown].type = a;
        rt->known[rt->nknown++].family = family;
    }
    return a;
}

/* A compact ASCII str. */
static inline uint64_t pf_str(struct pf *p, const char *s, enum pf_expect expect)
{
    const struct py_layout *l = p->l;
    uint32_t n = (uint32_t)strlen(s);
    uint64_t a = pf_object(p, p->t_str, l->ascii_data + n + 1, 0, expect, s);
    pf_put64(a + l->str_length, n);
    pf_put32(a + l->str_state, 1u << 2 | 1u << 5 | 1u << 6);   /* kind 1, compact, ascii */
    pf_put(a + l->ascii_data, s, n + 1);
    return a;
}

/* A non-negative int below 2^30 (one digit). */
static inline uint64_t pf_int(struct pf *p, uint32_t v, enum pf_expect expect, const char *what)
{
    const struct py_layout *l = p->l;
    uint64_t a = pf_object(p, p->t_int, l->long_digits + 4, 0, expect, what);
    uint64_t ndigits = v ? 1 : 0;
    /* 3.12+: lv_tag = digits << 3 | sign (0 positive, 1 zero); before: the digit count */
    pf_put64(a + l->ob_size, l->long_tagged ? ndigits << 3 | (v ? 0 : 1) : ndigits);
    pf_put32(a + l->long_digits, v);
    return a;
}

static inline uint64_t pf_bytes(struct pf *p, const void *data, uint32_t n, enum pf_expect expect,
                                const char *what)
{
    const struct py_layout *l = p->l;
    uint64_t a = pf_object(p, p->t_bytes, l->bytes_data + n + 1, 0, expect, what);
    pf_put64(a + l->ob_size, n);
    pf_put(a + l->bytes_data, data, n);
    return a;
}

static inline uint64_t pf_tuple(struct pf *p, unsigned n, const uint64_t *items,
                                enum pf_expect expect, const char *what)
{
    const struct py_layout *l = p->l;
    uint64_t a = pf_object(p, p->t_tuple, l->tuple_items + 8 * n, 1, expect, what);
    pf_put64(a + l->ob_size, n);
    for (unsigned i = 0; i < n; i++)
        pf_put64(a + l->tuple_items + 8 * i, items[i]);
    return a;
}

/* A list; *items_out gets the address of its item array. */
static inline uint64_t pf_list(struct pf *p, unsigned n, const uint64_t *items,
                               enum pf_expect expect, const char *what, uint64_t *items_out)
{
    const struct py_layout *l = p->l;
    uint64_t a = pf_object(p, p->t_list, l->list_items + 16, 1, expect, what);
    uint64_t v = n ? pf_alloc(p, 8 * n) : 0;
    pf_put64(a + l->ob_size, n);
    pf_put64(a + l->list_items, v);
    pf_put64(a + l->list_items + 8, n);   /* allocated */
    for (unsigned i = 0; i < n; i++)
        pf_put64(v + 8 * i, items ? items[i] : 0);
    if (items_out)
        *items_out = v;
    return a;
}

#define PF_DICT_LOG2 3   /* 8 slots: every dict of the scene fits (the walker reads no hashes) */

/* A split-keys (3.11+) dict keys object: general entries {hash, key, value} when general, else
 * str-keyed {key, value}. */
static inline uint64_t pf_keys(struct pf *p, unsigned n, const uint64_t *keys,
                               const uint64_t *values, int general)
{
    const struct py_layout *l = p->l;
    unsigned entry = general ? 24 : 16, index_bytes = 1u << PF_DICT_LOG2;   /* 1 byte a slot */
    uint64_t k = pf_alloc(p, l->dk_indices + index_bytes + entry * (1u << PF_DICT_LOG2));
    uint64_t entries = k + l->dk_indices + index_bytes;
    pf_put64(k, 1);   /* dk_refcnt */
    pf_put8(k + l->dk_log2_size, PF_DICT_LOG2);
    pf_put8(k + l->dk_log2_index_bytes, PF_DICT_LOG2);
    pf_put8(k + l->dk_kind, general ? 0 : 1);   /* DICT_KEYS_GENERAL, DICT_KEYS_UNICODE */
    pf_put64(k + l->dk_nentries, n);
    for (unsigned i = 0; i < (1u << PF_DICT_LOG2); i++)
        pf_put8(k + l->dk_indices + i, i < n ? (uint8_t)i : 0xff);   /* DKIX_EMPTY */
    for (unsigned i = 0; i < n; i++) {
        uint64_t e = entries + entry * i + (general ? 8 : 0);
        if (general)
            pf_put64(e - 8, 1000 + i);   /* me_hash: not read */
        pf_put64(e, keys[i]);
        pf_put64(e + 8, values ? values[i] : 0);
    }
    return k;
}

static inline uint64_t pf_dict(struct pf *p, unsigned n, const uint64_t *keys,
                               const uint64_t *values, int general, enum pf_expect expect,
                               const char *what, uint64_t *keys_out)
{
    const struct py_layout *l = p->l;
    uint64_t a = pf_object(p, p->t_dict, l->dict_values + 8, 1, expect, what);
    uint64_t k = pf_keys(p, n, keys, values, general);
    pf_put64(a + 16, n);   /* ma_used: not read */
    pf_put64(a + l->dict_keys, k);
    if (keys_out)
        *keys_out = k;
    return a;
}

/* A code object named name (n <= 8 locals) whose frames have the named locals of kinds
 * (CO_FAST_*). What it holds (its names and file; no co_consts) is found as it is. */
static inline uint64_t pf_code(struct pf *p, const char *name, unsigned n, const char *const *names,
                               const uint8_t *kinds, enum pf_expect expect)
{
    const struct py_layout *l = p->l;
    uint64_t strs[8];
    n = n < 8 ? n : 8;
    for (unsigned i = 0; i < n; i++)
        strs[i] = pf_str(p, names[i], expect);
    uint64_t a = pf_object(p, p->t_code, l->co_code_adaptive + 16, 0, expect, name);
    pf_put32(a + l->co_nlocalsplus, n);
    pf_put32(a + l->co_nlocals, n);
    pf_put32(a + l->co_firstlineno, 1);
    pf_put64(a + l->co_localsplusnames, pf_tuple(p, n, strs, expect, "co_localsplusnames"));
    pf_put64(a + l->co_localspluskinds, pf_bytes(p, kinds, n, expect, "co_localspluskinds"));
    pf_put64(a + l->co_name, pf_str(p, name, expect));
    pf_put64(a + l->co_filename, pf_str(p, "/home/u/main.py", expect));
    return a;
}

/* An interpreter frame (3.11+) running code, whose localsplus are slots. */
static inline uint64_t pf_frame(struct pf *p, uint64_t code, unsigned n, const uint64_t *slots,
                                uint8_t owner)
{
    const struct py_layout *l = p->l;
    uint64_t a = pf_alloc(p, l->if_localsplus + 8 * n + 8);
    pf_put64(a + l->if_code, code);
    pf_put8(a + l->if_owner, owner);
    for (unsigned i = 0; i < n; i++)
        pf_put64(a + l->if_localsplus + 8 * i, slots[i]);
    return a;
}

/* sizeof(PyFunctionObject) as far as the table knows it: past its last field. */
static inline uint32_t pf_function_size(const struct py_layout *l)
{
    const uint16_t f[] = {l->fn_globals, l->fn_code,        l->fn_defaults, l->fn_kwdefaults,
                          l->fn_closure, l->fn_dict,        l->fn_module,   l->fn_qualname,
                          l->fn_name,    l->fn_annotations, l->fn_annotate, l->fn_typeparams};
    uint32_t end = 0;
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        if (f[i] != PY_NONE)
            end = f[i] + 8u > end ? f[i] + 8u : end;
    return end;
}

/* The types, then the objects. */
static inline void pf_build_types(struct pf *p)
{
    const struct py_layout *l = p->l;
    const uint64_t gc = PY_TPFLAGS_HAVE_GC;
    /* type's instances keep their namespace at tp_dict (PyType_Type.tp_dictoffset) */
    pf_type(p, "type", l->ht_module + 8, 40, gc | PY_TPFLAGS_TYPE_SUBCLASS, PY_F_TYPE);
    pf_put64(p->t_type + l->tp_dictoffset, l->tp_dict);
    p->t_object = pf_type(p, "object", 16, 0, 0, PY_F_OBJECT);
    pf_put64(p->t_type + l->tp_base, p->t_object);
    pf_put64(p->t_object + l->tp_base, 0);
    p->t_dict = pf_type(p, "dict", l->dict_values + 8, 0, gc | PY_TPFLAGS_DICT_SUBCLASS, PY_F_DICT);
    p->t_list = pf_type(p, "list", l->list_items + 16, 0, gc | PY_TPFLAGS_LIST_SUBCLASS, PY_F_LIST);
    p->t_tuple = pf_type(p, "tuple", l->tuple_items, 8, gc | PY_TPFLAGS_TUPLE_SUBCLASS, PY_F_TUPLE);
    p->t_str = pf_type(p, "str", l->ascii_data, 0, PY_TPFLAGS_UNICODE_SUBCLASS, PY_F_STR);
    p->t_int = pf_type(p, "int", l->long_digits, 4, PY_TPFLAGS_LONG_SUBCLASS, PY_F_INT);
    p->t_bytes = pf_type(p, "bytes", l->bytes_data + 1, 1, PY_TPFLAGS_BYTES_SUBCLASS, PY_F_BYTES);
    p->t_module = pf_type(p, "module", l->module_dict + 8 * 4, 0, gc, PY_F_MODULE);
    pf_put64(p->t_module + l->tp_dictoffset, l->module_dict);
    p->t_function = pf_type(p, "function", pf_function_size(l), 0, gc, PY_F_FUNCTION);
    pf_put64(p->t_function + l->tp_dictoffset, l->fn_dict);
    p->t_cell = pf_type(p, "cell", l->cell_ref + 8, 0, gc, PY_F_CELL);
    p->t_code = pf_type(p, "code", l->co_code_adaptive, 2, 0, PY_F_CODE);
    p->t_gen = pf_type(p, "generator", l->gen_iframe + l->if_localsplus, 8, gc, PY_F_GEN);
    p->t_none = pf_type(p, "NoneType", 16, 0, 0, PY_F_OTHER);
    pf_expect(p, p->t_none, PF_ABSENT);   /* None is in no container of the scene */
}

/* A heap class Foo(object) defined in __main__, whose instances keep a dict at +16. */
static inline void pf_build_class(struct pf *p)
{
    const struct py_layout *l = p->l;
    uint64_t a = pf_object(p, p->t_type, l->ht_module + 8, 1, PF_REACHABLE, "Foo");
    p->t_foo = a;
    pf_put64(a + l->tp_name, pf_cstr(p, "Foo"));
    pf_put64(a + l->tp_basicsize, 24);
    pf_put64(a + l->tp_flags, PY_TPFLAGS_HEAPTYPE | PY_TPFLAGS_HAVE_GC);
    pf_put64(a + l->tp_base, p->t_object);
    pf_put64(a + l->tp_dictoffset, 16);
    uint64_t k = pf_str(p, "__module__", PF_REACHABLE), v = pf_str(p, "__main__", PF_REACHABLE);
    p->class_dict = pf_dict(p, 1, &k, &v, 0, PF_REACHABLE, "Foo.__dict__", NULL);
    pf_put64(a + l->tp_dict, p->class_dict);
    pf_put64(a + l->ht_qualname, pf_str(p, "Foo", PF_REACHABLE));   /* its __qualname__ */
    uint64_t mro[2] = {a, p->t_object};
    pf_put64(a + l->tp_mro, pf_tuple(p, 2, mro, PF_REACHABLE, "Foo.__mro__"));
    pf_put64(a + l->tp_bases, pf_tuple(p, 1, &p->t_object, PF_REACHABLE, "Foo.__bases__"));
}

/* A heap class Bar whose instances keep managed dicts, and bar, whose one attribute w lives in
 * values apart from any dict object, where the table's dict model keeps them: 3.11 a values
 * pointer at obj-32, 3.12 obj-24 tagged (values - 1), 3.13 inline after the object, marked
 * valid. Its keys are the class's shared keys (ht_cached_keys). */
static inline void pf_build_managed(struct pf *p)
{
    const struct py_layout *l = p->l;
    uint64_t flags = PY_TPFLAGS_HEAPTYPE | PY_TPFLAGS_HAVE_GC | PY_TPFLAGS_MANAGED_DICT;
    if (l->dicts == PY_DICT_MANAGED_313)
        flags |= PY_TPFLAGS_INLINE_VALUES;
    uint64_t a = pf_object(p, p->t_type, l->ht_module + 8, 1, PF_REACHABLE, "Bar");
    p->t_bar = a;
    pf_put64(a + l->tp_name, pf_cstr(p, "Bar"));
    pf_put64(a + l->tp_basicsize, 16);
    pf_put64(a + l->tp_flags, flags);
    pf_put64(a + l->tp_base, p->t_object);
    uint64_t key = pf_str(p, "w", PF_REACHABLE);   /* a shared key: the class holds it */
    pf_put64(a + l->ht_cached_keys, pf_keys(p, 1, &key, NULL, 0));
    p->bar_w = pf_str(p, "bar.w", PF_REACHABLE);
    /* the pre-header: GC head, then the managed dict and (3.11) values pointers below it */
    uint32_t pre =
        (uint32_t)(-l->managed_dict_offset > -l->managed_values_offset ? -l->managed_dict_offset
                                                                       : -l->managed_values_offset);
    pre = (pre + 15u) & ~15u;
    p->bar = pf_object_pre(p, a, 16 + l->dv_values + 8, pre, PF_REACHABLE, "bar");
    switch (l->dicts) {
    case PY_DICT_MANAGED_311:
        p->bar_values = pf_alloc(p, l->dv_values + 8);
        pf_put64(p->bar + (uint64_t)(int64_t)l->managed_values_offset, p->bar_values);
        break;
    case PY_DICT_MANAGED_312:
        p->bar_values = pf_alloc(p, l->dv_values + 8);
        pf_put64(p->bar + (uint64_t)(int64_t)l->managed_dict_offset, p->bar_values - 1);
        break;
    default:   /* 3.13: inline, {capacity, size, embedded, valid, ...} then the values */
        p->bar_values = p->bar + 16;
        pf_put8(p->bar_values, 1);
        pf_put8(p->bar_values + 1, 1);
        pf_put8(p->bar_values + 2, 1);
        pf_put8(p->bar_values + 3, 1);
        break;
    }
    pf_put64(p->bar_values + l->dv_values, p->bar_w);
}

/* g, a suspended generator whose embedded frame has the local y. */
static inline void pf_build_generator(struct pf *p)
{
    const struct py_layout *l = p->l;
    static const char *const names[] = {"y"};
    static const uint8_t kinds[] = {0x20};   /* CO_FAST_LOCAL */
    p->code_g = pf_code(p, "gen", 1, names, kinds, PF_REACHABLE);   /* its frame's code */
    p->in_g = pf_str(p, "in g", PF_REACHABLE);
    p->g = pf_object(p, p->t_gen, l->gen_iframe + l->if_localsplus + 8, 1, PF_REACHABLE, "g");
    pf_put8(p->g + l->gen_frame_state, (uint8_t)-1);   /* FRAME_SUSPENDED, below COMPLETED */
    uint64_t frame = p->g + l->gen_iframe;
    pf_put64(frame + l->if_code, p->code_g);
    pf_put8(frame + l->if_owner, 1);   /* FRAME_OWNED_BY_GENERATOR */
    pf_put64(frame + l->if_localsplus, p->in_g);
}

static inline void pf_build_objects(struct pf *p)
{
    const struct py_layout *l = p->l;
    p->none = pf_object(p, p->t_none, 16, 0, PF_ABSENT, "None");
    p->rt.none = p->none;
    p->str_a = pf_str(p, "a", PF_REACHABLE);
    p->int_42 = pf_int(p, 42, PF_REACHABLE, "42");
    uint64_t xs[2] = {p->str_a, p->int_42};
    p->xs = pf_list(p, 2, xs, PF_REACHABLE, "xs", &p->xs_items);
    p->str_b = pf_str(p, "b", PF_REACHABLE);
    uint64_t t[2] = {p->int_42, p->str_b};
    p->t = pf_tuple(p, 2, t, PF_REACHABLE, "t");
    p->int_3 = pf_int(p, 3, PF_REACHABLE, "3");
    p->str_v = pf_str(p, "v", PF_REACHABLE);
    uint64_t in_d = pf_str(p, "in d", PF_REACHABLE);
    p->in_d = pf_list(p, 1, &in_d, PF_REACHABLE, "['in d']", NULL);
    p->str_k = pf_str(p, "k", PF_REACHABLE);
    uint64_t dk[2] = {p->int_3, p->str_k}, dv[2] = {p->str_v, p->in_d};
    p->d = pf_dict(p, 2, dk, dv, 1, PF_REACHABLE, "d", &p->d_keys);
    pf_build_class(p);
    p->foo = pf_object(p, p->t_foo, 24, 1, PF_REACHABLE, "foo");
    uint64_t pk = pf_str(p, "payload", PF_REACHABLE);
    p->payload = pf_bytes(p, "\0\0\0\0", 4, PF_REACHABLE, "payload");
    p->foo_dict =
        pf_dict(p, 1, &pk, &p->payload, 0, PF_REACHABLE, "foo.__dict__", &p->foo_dict_keys);
    pf_put64(p->foo + 16, p->foo_dict);
    /* f and its closure */
    p->captured = pf_list(p, 0, NULL, PF_REACHABLE, "captured", NULL);
    p->cell = pf_object(p, p->t_cell, l->cell_ref + 8, 1, PF_REACHABLE, "cell");
    pf_put64(p->cell + l->cell_ref, p->captured);
    p->closure = pf_tuple(p, 1, &p->cell, PF_REACHABLE, "f.__closure__");
    static const char *const names[] = {"x", "c"};
    static const uint8_t kinds[] = {0x20 | 0x02, 0x80};   /* CO_FAST_LOCAL|ARG, CO_FAST_FREE */
    p->code_f = pf_code(p, "f", 2, names, kinds, PF_REACHABLE);
    p->f = pf_object(p, p->t_function, pf_function_size(l), 1, PF_REACHABLE, "f");
    pf_put64(p->f + l->fn_code, p->code_f);
    pf_put64(p->f + l->fn_closure, p->closure);
    /* the garbage cycle */
    p->garbage = pf_list(p, 1, NULL, PF_GARBAGE, "garbage", NULL);
    pf_put64(pf_get64(p->garbage + l->list_items), p->garbage);
    pf_build_managed(p);
    pf_build_generator(p);
    /* __main__ */
    const char *keys[8] = {"xs", "t", "d", "foo", "f", "Foo", "bar", "g"};
    uint64_t k[8], v[8] = {p->xs, p->t, p->d, p->foo, p->f, p->t_foo, p->bar, p->g};
    for (int i = 0; i < 8; i++)
        k[i] = pf_str(p, keys[i], PF_REACHABLE);
    p->k_xs = k[0], p->k_t = k[1], p->k_d = k[2], p->k_foo = k[3], p->k_f = k[4], p->k_Foo = k[5];
    p->k_bar = k[6], p->k_g = k[7];
    p->main_dict = pf_dict(p, 8, k, v, 0, PF_REACHABLE, "__main__.__dict__", NULL);
    pf_put64(p->f + l->fn_globals, p->main_dict);
    p->main_mod = pf_object(p, p->t_module, l->module_name + 8, 1, PF_REACHABLE, "__main__");
    pf_put64(p->main_mod + l->module_dict, p->main_dict);
    /* sys.modules is read, not a node; its key is the module's name, which the module holds */
    p->main_name = pf_str(p, "__main__", PF_REACHABLE);
    pf_put64(p->main_mod + l->module_name, p->main_name);
    p->modules = pf_dict(p, 1, &p->main_name, &p->main_mod, 0, PF_ABSENT, "sys.modules", NULL);
}

/* The runtime, its interpreter (its GC state and sys.modules) and one thread with f's frame on
 * top of the module's (and, where the table has them, a C-stack shim frame at the bottom). */
static inline void pf_build_runtime(struct pf *p)
{
    const struct py_layout *l = p->l;
    p->runtime = pf_alloc(p, 1024);
    p->interp =
        pf_alloc(p, l->is_modules + 64u > l->is_gc + 256u ? l->is_modules + 64u : l->is_gc + 256u);
    p->gc = p->interp + l->is_gc;
    for (unsigned g = 0; g <= PY_GC_GENERATIONS; g++) {   /* empty lists: heads to themselves */
        uint64_t head = py_gc_list_head(l, p->gc, g);
        pf_put64(head, head);
        pf_put64(head + 8, head);
    }
    pf_put64(p->gc + l->gc_generation0, p->gc + l->gc_generations);
    pf_put64(p->runtime + l->rt_interpreters_head, p->interp);
    pf_put64(p->runtime + l->rt_main_thread, 1);
    pf_put64(p->interp + l->is_modules, p->modules);
    p->tstate = pf_alloc(p, 512);
    pf_put64(p->interp + l->is_threads_head, p->tstate);
    pf_put64(p->tstate + l->ts_interp, p->interp);
    pf_put64(p->tstate + l->ts_thread_id, 1);
    if (l->ts_native_thread_id != PY_NONE)
        pf_put64(p->tstate + l->ts_native_thread_id, 4242);
}

static inline void pf_build_frames(struct pf *p)
{
    const struct py_layout *l = p->l;
    p->code_mod = pf_code(p, "<module>", 0, NULL, NULL, PF_ABSENT);
    uint64_t slots[2] = {p->t, p->cell};
    p->frame_f = pf_frame(p, p->code_f, 2, slots, 0);
    p->frame_mod = pf_frame(p, p->code_mod, 0, NULL, 0);
    pf_put64(p->frame_f + l->if_previous, p->frame_mod);
    if (l->owner_cstack != 0xff) {
        p->frame_shim = pf_frame(p, p->code_mod, 0, NULL, l->owner_cstack);
        pf_put64(p->frame_mod + l->if_previous, p->frame_shim);
    }
    if (l->frames == PY_FRAMES_CFRAME) {
        p->cframe = pf_alloc(p, 64);
        pf_put64(p->tstate + l->ts_cframe, p->cframe);
        pf_put64(p->cframe + l->cf_current_frame, p->frame_f);
    } else {
        pf_put64(p->tstate + l->ts_current_frame, p->frame_f);
    }
}

/* Writes the scene for the table named `layout` into pf_img; false when the table is gone, is
 * one the builder does not lay out (3.9/3.10 frame objects and dict keys, 3.14 stack refs), or
 * the scene does not fit. */
static inline int pf_build(struct pf *p, const char *layout)
{
    const struct py_layout *l = py_layout_named(layout);
    memset(pf_img, 0, sizeof pf_img);
    memset(p, 0, sizeof *p);
    if (!l || l->frames == PY_FRAMES_OBJECTS || l->keys != PY_KEYS_311 || l->stackref_tag_mask)
        return 0;
    p->l = l;
    p->rt.table = l;
    p->rt.layout = *l;
    p->rt.l = &p->rt.layout;
    p->next = 64;   /* nothing at PF_BASE itself */
    pf_build_types(p);
    pf_build_objects(p);
    pf_build_runtime(p);
    pf_build_frames(p);
    p->rt.runtime = p->runtime;
    p->rt.interp = p->interp;
    pf_gc_track(p, p->xs, 0);
    pf_gc_track(p, p->d, 0);
    pf_gc_track(p, p->garbage, 0);
    return !p->overflow;
}

/* A target serving pf_img at PF_BASE (one writable mapping), set as p's runtime target; NULL on
 * allocation failure. */
static inline struct cl_target *pf_target(struct pf *p)
{
    struct cl_open_options opt = {.cache_pages = 16};
    struct cl_target *t = tu_image_target(&pf_image, CL_TARGET_GDB, &opt, NULL, 0);
    p->rt.t = t;
    return t;
}

#endif
