/* Strong references held by each kind of object: the out-of-process counterpart of tp_traverse.
 * Weak references (weakref targets, __weakref__ lists) are never edges. */
#include <stdlib.h>
#include <string.h>

#include "cpython/heap.h"

#define MAX_ITEMS (1u << 26)   /* a container claiming more entries is corrupt */

static uint64_t word(struct py_objects *o, uint64_t addr)
{
    uint64_t v = 0;
    return cl_read_u64(o->rt->t, addr, &v) == 0 ? v : 0;
}

static void emit_named(struct py_emitter *e, uint64_t addr, const char *label)
{
    uint64_t v = word(&e->h->objects, addr);
    if (v)
        py_emit(e, v, PY_E_NAMED, (uint64_t)(uintptr_t)label);
}

/* Items of an array of object pointers, each as [i]. */
static void emit_array(struct py_emitter *e, uint64_t items, int64_t n)
{
    if (n <= 0 || (uint64_t)n > MAX_ITEMS)
        return;
    uint64_t buf[512];
    for (int64_t i = 0; i < n;) {
        size_t chunk = (size_t)(n - i) < 512 ? (size_t)(n - i) : 512;
        if (cl_read(e->h->objects.rt->t, items + 8 * (uint64_t)i, buf, chunk * 8) != 0)
            return;
        for (size_t j = 0; j < chunk; j++)
            if (buf[j])
                py_emit(e, buf[j], PY_E_INDEX, (uint64_t)(i + (int64_t)j));
        i += (int64_t)chunk;
    }
}

/* ---- dicts ---- */

struct dict_keys {
    uint64_t entries;          /* address of the first entry */
    int64_t nentries;
    unsigned entry_size, key_at, value_at;
};

static bool read_keys(struct py_objects *o, uint64_t keys, struct dict_keys *k)
{
    const struct py_layout *l = o->rt->l;
    struct cl_target *t = o->rt->t;
    if (cl_read(t, keys + l->dk_nentries, &k->nentries, 8) || k->nentries < 0 ||
        (uint64_t)k->nentries > MAX_ITEMS)
        return false;
    if (l->keys == PY_KEYS_310) {
        int64_t size;
        if (cl_read(t, keys + l->dk_size, &size, 8) || size <= 0 || (size & (size - 1)) ||
            size > (1 << 28) || k->nentries > size)
            return false;
        unsigned width = size <= 0xff ? 1 : size <= 0xffff ? 2 : size <= 0xffffffffll ? 4 : 8;
        k->entries = keys + l->dk_indices + (uint64_t)size * width;
        *k = (struct dict_keys){k->entries, k->nentries, 24, 8, 16};
        return true;
    }
    uint8_t hdr[3];
    if (cl_read(t, keys + l->dk_log2_size, hdr, 3) || hdr[0] > 30 || hdr[1] > 34 || hdr[2] > 2 ||
        (uint64_t)k->nentries > (1ull << hdr[0]))
        return false;
    k->entries = keys + l->dk_indices + (1ull << hdr[1]);
    bool general = hdr[2] == 0;
    k->entry_size = general ? 24 : 16;
    k->key_at = general ? 8 : 0;
    k->value_at = general ? 16 : 8;
    return true;
}

/* Calls fn(key, value) for each live entry; values from `values` (a split table) when given. */
static void keys_foreach(struct py_objects *o, uint64_t keys, uint64_t values,
                         bool (*fn)(void *arg, uint64_t key, uint64_t value), void *arg)
{
    struct dict_keys k;
    if (!keys || !read_keys(o, keys, &k) || k.nentries == 0)
        return;
    size_t bytes = (size_t)k.nentries * k.entry_size;
    unsigned char *buf = malloc(bytes);
    uint64_t *vals = values ? malloc((size_t)k.nentries * 8) : NULL;
    struct cl_target *t = o->rt->t;
    if (buf && cl_read(t, k.entries, buf, bytes) == 0 &&
        (!values || (vals && cl_read(t, values, vals, (size_t)k.nentries * 8) == 0))) {
        for (int64_t i = 0; i < k.nentries; i++) {
            uint64_t key, value;
            memcpy(&key, buf + (size_t)i * k.entry_size + k.key_at, 8);
            memcpy(&value, buf + (size_t)i * k.entry_size + k.value_at, 8);
            if (values)
                value = vals[i];
            if (key && value && !fn(arg, key, value))
                break;
        }
    }
    free(buf);
    free(vals);
}

void py_dict_items(struct py_objects *o, uint64_t dict,
                   bool (*fn)(void *arg, uint64_t key, uint64_t value), void *arg)
{
    const struct py_layout *l = o->rt->l;
    uint64_t keys = word(o, dict + l->dict_keys), values = word(o, dict + l->dict_values);
    if (values && l->dv_values != PY_NONE)
        values += l->dv_values;
    keys_foreach(o, keys, values, fn, arg);
}

struct emit_arg { struct py_emitter *e; enum py_edge edge; };

static bool emit_item(void *arg, uint64_t key, uint64_t value)
{
    struct emit_arg *a = arg;
    py_emit(a->e, value, a->edge, key);
    if (a->edge == PY_E_KEY)
        py_emit(a->e, key, PY_E_DICTKEY, 0);
    return true;
}

/* ---- instance attributes ---- */

/* Values stored apart from any dict object (3.11+ managed values), keyed by the type's shared keys. */
static void emit_values(struct py_emitter *e, const struct py_type *ty, uint64_t values)
{
    struct py_objects *o = &e->h->objects;
    const struct py_layout *l = o->rt->l;
    uint64_t keys = word(o, ty->addr + l->ht_cached_keys);
    struct emit_arg a = {e, PY_E_ATTR};
    keys_foreach(o, keys, values + l->dv_values, emit_item, &a);
}

static void emit_instance_dict(struct py_emitter *e, uint64_t obj, const struct py_type *ty)
{
    struct py_objects *o = &e->h->objects;
    const struct py_layout *l = o->rt->l;
    static const char dict_label[] = ".__dict__";
    if (l->dicts != PY_DICT_OFFSET && (ty->flags & PY_TPFLAGS_MANAGED_DICT)) {
        uint64_t w = word(o, obj + (uint64_t)(int64_t)l->managed_dict_offset);
        switch (l->dicts) {
        case PY_DICT_MANAGED_311:
            if (w)
                py_emit(e, w, PY_E_NAMED, (uint64_t)(uintptr_t)dict_label);
            else if ((w = word(o, obj + (uint64_t)(int64_t)l->managed_values_offset)))
                emit_values(e, ty, w);
            return;
        case PY_DICT_MANAGED_312:
            if (w & 1)
                emit_values(e, ty, w + 1);   /* stored as values - 1, tagged */
            else if (w)
                py_emit(e, w, PY_E_NAMED, (uint64_t)(uintptr_t)dict_label);
            return;
        case PY_DICT_MANAGED_313: {
            uint8_t valid = 0;
            if (w)
                py_emit(e, w, PY_E_NAMED, (uint64_t)(uintptr_t)dict_label);
            else if ((ty->flags & PY_TPFLAGS_INLINE_VALUES) &&
                     cl_read(o->rt->t, obj + (uint64_t)ty->basicsize + 3, &valid, 1) == 0 && valid)
                emit_values(e, ty, obj + (uint64_t)ty->basicsize);
            return;
        }
        default:
            return;
        }
    }
    int64_t off = ty->dictoffset;
    if (off < 0) {   /* var-sized objects keep the dict after their items */
        int64_t n;
        if (cl_read(o->rt->t, obj + l->ob_size, &n, 8) != 0)
            return;
        n = n < 0 ? -n : n;
        off += (ty->basicsize + n * ty->itemsize + 7) & ~7;
    }
    if (off > 0)
        emit_named(e, obj + (uint64_t)off, dict_label);
}

static void emit_slots(struct py_emitter *e, uint64_t obj, struct py_type *ty)
{
    int n;
    const struct py_member *m = py_type_slots(&e->h->objects, ty, &n);
    for (int i = 0; i < n; i++) {
        uint64_t v = word(&e->h->objects, obj + m[i].offset);
        if (v)
            py_emit(e, v, PY_E_CATTR, m[i].name);
    }
}

/* ---- per family ---- */

static void emit_set(struct py_emitter *e, uint64_t obj)
{
    struct py_objects *o = &e->h->objects;
    int64_t mask = 0;
    uint64_t table = word(o, obj + o->rt->l->set_table);
    if (cl_read(o->rt->t, obj + o->rt->l->set_mask, &mask, 8) || mask < 0 || (uint64_t)mask >= MAX_ITEMS || !table)
        return;
    for (int64_t i = 0; i <= mask; i++) {
        uint64_t key = word(o, table + 16 * (uint64_t)i);
        const struct py_type *kt = key ? py_object_type(o, key) : NULL;
        if (kt && strcmp(kt->name, "<dummy key> type") != 0)   /* the deleted-entry marker */
            py_emit(e, key, PY_E_SETITEM, 0);
    }
}

static void emit_deque(struct py_emitter *e, uint64_t obj)
{
    struct py_objects *o = &e->h->objects;
    int64_t len, index;
    const struct py_layout *l = o->rt->l;
    uint64_t block = word(o, obj + l->deque_leftblock);
    if (cl_read(o->rt->t, obj + l->ob_size, &len, 8) || cl_read(o->rt->t, obj + l->deque_leftindex, &index, 8) ||
        len < 0 || (uint64_t)len > MAX_ITEMS || index < 0 || index >= 64)
        return;
    /* Blocks of 64 items: {leftlink @0, data[64] @8, rightlink @520}. */
    for (int64_t i = 0; i < len && block; i++) {
        uint64_t v = word(o, block + l->deque_block_data + 8 * (uint64_t)index);
        if (v)
            py_emit(e, v, PY_E_INDEX, (uint64_t)i);
        if (++index == 64) {
            index = 0;
            block = word(o, block + l->deque_block_next);
        }
    }
}

static void emit_generator(struct py_emitter *e, uint64_t obj)
{
    struct py_objects *o = &e->h->objects;
    const struct py_layout *l = o->rt->l;
    if (l->gen_frame != PY_NONE) {
        emit_named(e, obj + l->gen_frame, ".gi_frame");
        return;
    }
    int8_t state;
    if (cl_read(o->rt->t, obj + l->gen_frame_state, &state, 1) == 0 && state < l->gen_completed)
        py_frame_locals(e, obj + l->gen_iframe, PY_E_GENLOCAL);
}

static void emit_frame_object(struct py_emitter *e, uint64_t obj)
{
    struct py_objects *o = &e->h->objects;
    const struct py_layout *l = o->rt->l;
    emit_named(e, obj + l->f_back, ".f_back");
    if (l->f_frame == PY_NONE) {   /* 3.9/3.10: the frame object is the frame */
        emit_named(e, obj + l->f_code, ".f_code");
        emit_named(e, obj + l->f_locals, ".f_locals");
        py_frame_locals(e, obj, PY_E_FRAMELOCAL);
    } else {
        uint64_t iframe = word(o, obj + l->f_frame);
        if (iframe)
            py_frame_locals(e, iframe, PY_E_FRAMELOCAL);
    }
}

/* 3.12+ static builtin types have no tp_dict of their own: the interpreter keeps it. */
static void emit_static_type_dict(struct py_emitter *e, uint64_t type)
{
    struct py_objects *o = &e->h->objects;
    const struct py_layout *l = o->rt->l;
    uint64_t flags = word(o, type + l->tp_flags), index = word(o, type + l->tp_subclasses);
    if (l->is_static_types == PY_NONE || !(flags & PY_TPFLAGS_STATIC_BUILTIN) ||
        (flags & PY_TPFLAGS_HEAPTYPE) || index == 0 || index > 1024)
        return;
    uint64_t slot = o->rt->interp + l->is_static_types + (index - 1) * l->static_type_size;
    if (word(o, slot) != type)   /* the slot names its type: a cheap check of the index */
        return;
    emit_named(e, slot + l->static_type_dict, ".__dict__");
    emit_named(e, slot + l->static_type_dict + 8, ".__subclasses__()");   /* tp_subclasses follows */
}

void py_referents(struct py_emitter *e, uint64_t obj, const struct py_type *cty)
{
    struct py_objects *o = &e->h->objects;
    const struct py_layout *l = o->rt->l;
    struct py_type *ty = (struct py_type *)cty;
    struct emit_arg items = {e, PY_E_KEY};
    int64_t size = 0;
    switch (ty->family) {
    case PY_F_DICT:
        py_dict_items(o, obj, emit_item, &items);
        break;
    case PY_F_LIST:
        if (cl_read(o->rt->t, obj + l->ob_size, &size, 8) == 0)
            emit_array(e, word(o, obj + l->list_items), size);
        break;
    case PY_F_TUPLE:
        if (cl_read(o->rt->t, obj + l->ob_size, &size, 8) == 0)
            emit_array(e, obj + l->tuple_items, size);
        break;
    case PY_F_SET:
        emit_set(e, obj);
        break;
    case PY_F_CELL:
        emit_named(e, obj + l->cell_ref, ".cell_contents");
        break;
    case PY_F_FUNCTION:
        emit_named(e, obj + l->fn_closure, ".__closure__");
        emit_named(e, obj + l->fn_defaults, ".__defaults__");
        emit_named(e, obj + l->fn_kwdefaults, ".__kwdefaults__");
        emit_named(e, obj + l->fn_code, ".__code__");
        emit_named(e, obj + l->fn_globals, ".__globals__");
        break;
    case PY_F_METHOD:
        emit_named(e, obj + l->method_self, ".__self__");
        emit_named(e, obj + l->method_func, ".__func__");
        break;
    case PY_F_CODE:
        emit_named(e, obj + l->co_consts, ".co_consts");
        break;
    case PY_F_FRAME:
        emit_frame_object(e, obj);
        break;
    case PY_F_GEN:
        emit_generator(e, obj);
        break;
    case PY_F_PROPERTY:
        emit_named(e, obj + l->prop_get, ".fget");
        emit_named(e, obj + l->prop_set, ".fset");
        emit_named(e, obj + l->prop_del, ".fdel");
        break;
    case PY_F_STATICMETHOD:
    case PY_F_CLASSMETHOD:   /* the same struct as staticmethod */
        emit_named(e, obj + l->sm_callable, ".__func__");
        break;
    case PY_F_TRACEBACK:
        emit_named(e, obj + l->tb_frame, ".tb_frame");
        emit_named(e, obj + l->tb_next, ".tb_next");
        break;
    case PY_F_CFUNCTION:
        emit_named(e, obj + l->cfunc_self, ".__self__");
        break;
    case PY_F_WEAKREF:
        emit_named(e, obj + l->weakref_callback, ".__callback__");   /* wr_object: weak, no edge */
        break;
    case PY_F_EXCEPTION:
        emit_named(e, obj + l->exc_traceback, ".__traceback__");
        emit_named(e, obj + l->exc_context, ".__context__");
        emit_named(e, obj + l->exc_cause, ".__cause__");
        emit_named(e, obj + l->exc_args, ".args");
        break;
    case PY_F_DEQUE:
        emit_deque(e, obj);
        break;
    case PY_F_PARTIAL:
        emit_named(e, obj + l->partial_fn, ".func");
        emit_named(e, obj + l->partial_args, ".args");
        emit_named(e, obj + l->partial_kw, ".keywords");
        break;
    case PY_F_LRU_CACHE:
        emit_named(e, obj + l->lru_func, ".__wrapped__");
        emit_named(e, obj + l->lru_cache, ".<lru_cache>");
        break;
    case PY_F_TYPE:
        emit_named(e, obj + l->tp_mro, ".__mro__");
        emit_named(e, obj + l->tp_bases, ".__bases__");
        emit_named(e, obj + l->tp_subclasses, ".__subclasses__()");   /* a dict of weakrefs */
        emit_static_type_dict(e, obj);
        break;
    case PY_F_LRU_ELEM:
        emit_named(e, obj + l->lru_elem_result, ".result");
        emit_named(e, obj + l->lru_elem_key, ".key");
        break;
    default:
        break;
    }
    /* Every type: its instances' dict (module, function, class and instance namespaces) and
     * object members (__slots__, C members), then the class. */
    emit_instance_dict(e, obj, ty);
    emit_slots(e, obj, ty);
    py_emit(e, ty->addr, PY_E_NAMED, (uint64_t)(uintptr_t)".__class__");
}
