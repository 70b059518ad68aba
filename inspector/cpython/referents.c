/* Strong references held by each kind of object: the out-of-process counterpart of tp_traverse.
 * Weak references (weakref targets, __weakref__ lists) are never edges. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/emit.h"
#include "cpython/fixed_types.h"
#include "cpython/frames.h"
#include "cpython/pybind11.h"
#include "cpython/referents.h"
#include "cpython/strkeys.h"
#include "util/notes.h"
#include "util/text.h"

#define MAX_ITEMS (1u << 26)   /* a container claiming more entries is corrupt */

/* The fields of the object being read that a family's reader has emitted, so that its C
 * members (emit_slots) do not emit them again: each reference counts once (cpython/balance.h).
 * A function's __globals__ is both a field the reader names and a PyMemberDef. */
#define MAX_FIELDS 32
static _Thread_local struct {
    uint64_t addr[MAX_FIELDS];
    unsigned n;
} fields;

static void mark_field(uint64_t addr)
{
    if (fields.n < MAX_FIELDS)
        fields.addr[fields.n++] = addr;
}

static void emit_named(struct py_emitter *e, uint64_t addr, const char *label)
{
    uint64_t v = py_word(e->o, addr);
    mark_field(addr);
    if (v)
        py_emit(e, v, PY_E_NAMED, (uint64_t)(uintptr_t)label);
}

static void emit_fixed(struct py_emitter *e, uint64_t obj, const struct py_fixed_type *row)
{
    for (size_t k = 0; k < PY_FIXED_FIELDS && row->fields[k].label; k++)
        emit_named(e, obj + row->fields[k].offset, row->fields[k].label);
}

static bool field_emitted(uint64_t addr)
{
    for (unsigned k = 0; k < fields.n; k++)
        if (fields.addr[k] == addr)
            return true;
    return false;
}

/* Items of an array of object pointers, each as [i]; false when they cannot be read (a corrupt
 * length, a NULL or unreadable array). */
/* How many items ahead of the one emitted a list's items are looked up in the object index: enough
 * for their cache misses to overlap, few enough that the lines are still there when used. */
#define PREFETCH_AHEAD 8

static bool emit_array(struct py_emitter *e, uint64_t items, int64_t n)
{
    if (n == 0)
        return true;
    if (n < 0 || (uint64_t)n > MAX_ITEMS || !items)
        return false;
    uint64_t buf[512];
    for (int64_t i = 0; i < n;) {
        size_t chunk = (size_t)(n - i) < 512 ? (size_t)(n - i) : 512;
        if (cl_read(e->o->rt->t, items + sizeof *buf * (uint64_t)i, buf, chunk * sizeof *buf) != 0)
            return false;
        for (size_t j = 0; j < chunk; j++) {
            if (j + PREFETCH_AHEAD < chunk)
                py_emit_prefetch(e, buf[j + PREFETCH_AHEAD]);
            if (buf[j])
                py_emit(e, buf[j], PY_E_INDEX, (uint64_t)(i + (int64_t)j));
        }
        i += (int64_t)chunk;
    }
    return true;
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
    if (cl_read(t, keys + l->dk_nentries, &k->nentries, sizeof k->nentries) || k->nentries < 0 ||
        (uint64_t)k->nentries > MAX_ITEMS)
        return false;
    if (l->keys == PY_KEYS_310) {
        int64_t size;
        if (cl_read(t, keys + l->dk_size, &size, sizeof size) || size <= 0 || (size & (size - 1)) ||
            size > (1 << 28) || k->nentries > size)
            return false;
        unsigned width = size <= 0xff ? 1 : size <= 0xffff ? 2 : size <= 0xffffffffll ? 4 : 8;
        k->entries = keys + l->dk_indices + (uint64_t)size * width;
        *k = (struct dict_keys){k->entries, k->nentries, 24, 8, 16};
        return true;
    }
    uint8_t hdr[3];
    if (cl_read(t, keys + l->dk_log2_size, hdr, sizeof hdr) || hdr[0] > 30 || hdr[1] > 34 ||
        hdr[2] > 2 || (uint64_t)k->nentries > (1ull << hdr[0]))
        return false;
    k->entries = keys + l->dk_indices + (1ull << hdr[1]);
    bool general = hdr[2] == 0;
    k->entry_size = general ? 24 : 16;
    k->key_at = general ? 8 : 0;
    k->value_at = general ? 16 : 8;
    return true;
}

/* The keys of a split table's shared keys object, read once for all the instances of a class
 * the walk meets in a row; NULL when they cannot be read or are too many to keep. */
static const uint64_t *shared_keys(struct py_objects *o, uint64_t keys, uint32_t *n)
{
    if (keys != o->shared_keys.addr) {
        struct dict_keys k;
        unsigned char buf[PY_SHARED_KEYS_KEPT * 24];
        o->shared_keys.addr = 0;
        if (!keys || !read_keys(o, keys, &k) || k.nentries > PY_SHARED_KEYS_KEPT ||
            cl_read(o->rt->t, k.entries, buf, (size_t)k.nentries * k.entry_size) != 0)
            return NULL;
        for (int64_t i = 0; i < k.nentries; i++)
            memcpy(&o->shared_keys.key[i], buf + (size_t)i * k.entry_size + k.key_at,
                   sizeof *o->shared_keys.key);
        o->shared_keys.n = (uint32_t)k.nentries;
        o->shared_keys.addr = keys;
    }
    *n = o->shared_keys.n;
    return o->shared_keys.key;
}

/* Calls fn(key, value) for each live entry; values from `values` (a split table) when given.
 * False when the entries cannot be read (nor allocated: then they are not read either). */
static bool keys_foreach(struct py_objects *o, uint64_t keys, uint64_t values,
                         bool (*fn)(void *arg, uint64_t key, uint64_t value), void *arg)
{
    uint32_t nkeys;
    const uint64_t *shared = values ? shared_keys(o, keys, &nkeys) : NULL;
    if (shared) {
        uint64_t vals[PY_SHARED_KEYS_KEPT];
        if (cl_read(o->rt->t, values, vals, nkeys * sizeof *vals) != 0)
            return false;
        for (uint32_t i = 0; i < nkeys; i++)
            if (shared[i] && vals[i] && !fn(arg, shared[i], vals[i]))
                break;
        return true;
    }
    struct dict_keys k;
    if (!keys || !read_keys(o, keys, &k))
        return false;
    if (k.nentries == 0)
        return true;
    size_t bytes = (size_t)k.nentries * k.entry_size;
    struct cl_target *t = o->rt->t;
    uint8_t last;
    /* A corrupt count (up to MAX_ITEMS: 1.5 GiB of entries) must not cost its allocation: the
     * tables' last bytes are read first. */
    if (cl_read(t, k.entries + bytes - 1, &last, sizeof last) != 0 ||
        (values && cl_read(t, values + (uint64_t)k.nentries * 8 - 1, &last, sizeof last) != 0))
        return false;
    unsigned char *buf = malloc(bytes);
    uint64_t *vals = values ? malloc((size_t)k.nentries * sizeof *vals) : NULL;
    bool readable =
        buf && cl_read(t, k.entries, buf, bytes) == 0 &&
        (!values || (vals && cl_read(t, values, vals, (size_t)k.nentries * sizeof *vals) == 0));
    if (readable) {
        for (int64_t i = 0; i < k.nentries; i++) {
            uint64_t key, value;
            memcpy(&key, buf + (size_t)i * k.entry_size + k.key_at, sizeof key);
            memcpy(&value, buf + (size_t)i * k.entry_size + k.value_at, sizeof value);
            if (values)
                value = vals[i];
            if (key && value && !fn(arg, key, value))
                break;
        }
    }
    free(buf);
    free(vals);
    return readable;
}

bool py_dict_items(struct py_objects *o, uint64_t dict,
                   bool (*fn)(void *arg, uint64_t key, uint64_t value), void *arg)
{
    const struct py_layout *l = o->rt->l;
    uint64_t keys = py_word(o, dict + l->dict_keys), values = py_word(o, dict + l->dict_values);
    if (values && l->dv_values != PY_NONE)
        values += l->dv_values;
    return keys_foreach(o, keys, values, fn, arg);
}

struct emit_arg {
    struct py_emitter *e;
    enum py_edge edge;
    uint8_t key_count;        /* PY_E_UNCOUNTED: a split table's keys, which its shared keys
                                 object holds once for every dict that uses it */
    uint8_t value_flags;      /* PY_E_UNCOUNTED | PY_E_UNTRAVERSED: values embedded in their
                                 object (3.13+), whose references the object holds and visits */
};

static bool emit_item(void *arg, uint64_t key, uint64_t value)
{
    struct emit_arg *a = arg;
    py_emit(a->e, value, a->edge | a->value_flags, key);
    if (a->edge == PY_E_KEY)
        py_emit(a->e, key, PY_E_DICTKEY | a->key_count, 0);
    return true;
}

/* A heap type's own references that are fields of every type: its base (a static type borrows
 * its own), its names, __slots__ and module (PyType_FromModuleAndSpec's), and the keys its
 * instances' dicts share, counted here once (ht_cached_keys). */
static void emit_type_fields(struct py_emitter *e, uint64_t type)
{
    struct py_objects *o = e->o;
    const struct py_layout *l = o->rt->l;
    if (!(py_word(o, type + l->tp_flags) & PY_TPFLAGS_HEAPTYPE)) {
        mark_field(type + l->tp_base);   /* a borrowed reference, not read as __base__ */
        return;
    }
    emit_named(e, type + l->tp_base, ".__base__");
    emit_named(e, type + l->ht_name, ".__name__");
    emit_named(e, type + l->ht_qualname, ".__qualname__");
    emit_named(e, type + l->ht_slots, ".__slots__");
    emit_named(e, type + l->ht_module, ".<module>");
    uint32_t n = 0;
    uint64_t keys = py_word(o, type + l->ht_cached_keys);
    const uint64_t *key = keys ? shared_keys(o, keys, &n) : NULL;
    for (uint32_t i = 0; key && i < n; i++)
        if (key[i])
            py_emit(e, key[i], PY_E_NAMED, (uint64_t)(uintptr_t)".<shared keys>");
}

/* ---- instance attributes ---- */

/* Values stored apart from any dict object (3.11+ managed values), keyed by the type's shared
 * keys. */
static bool emit_values(struct py_emitter *e, const struct py_type *ty, uint64_t values)
{
    struct py_objects *o = e->o;
    const struct py_layout *l = o->rt->l;
    uint64_t keys = py_word(o, ty->addr + l->ht_cached_keys);
    struct emit_arg a = {e, PY_E_ATTR, 0, 0};
    return keys_foreach(o, keys, values + l->dv_values, emit_item, &a);
}

/* False when the instance's attributes are there but cannot be read. */
static bool emit_instance_dict(struct py_emitter *e, uint64_t obj, const struct py_type *ty)
{
    struct py_objects *o = e->o;
    const struct py_layout *l = o->rt->l;
    static const char dict_label[] = ".__dict__";
    if (l->dicts != PY_DICT_OFFSET && (ty->flags & PY_TPFLAGS_MANAGED_DICT)) {
        uint64_t w = py_word(o, obj + (uint64_t)(int64_t)l->managed_dict_offset);
        switch (l->dicts) {
        case PY_DICT_MANAGED_311:
            if (w)
                py_emit(e, w, PY_E_NAMED, (uint64_t)(uintptr_t)dict_label);
            else if ((w = py_word(o, obj + (uint64_t)(int64_t)l->managed_values_offset)))
                return emit_values(e, ty, w);
            return true;
        case PY_DICT_MANAGED_312:
            if (w & 1)
                return emit_values(e, ty, w + 1);   /* stored as values - 1, tagged */
            if (w)
                py_emit(e, w, PY_E_NAMED, (uint64_t)(uintptr_t)dict_label);
            return true;
        case PY_DICT_MANAGED_313: {
            /* 3.13's PyObject_VisitManagedDict visits valid inline values, and then not the
             * dict made of them (a materialized __dict__ shares them, and does not visit
             * them): the values are the object's references, the dict's a reference from
             * outside the collector's view */
            uint8_t valid = 0;
            bool inline_values = (ty->flags & PY_TPFLAGS_INLINE_VALUES) &&
                                 cl_read(o->rt->t, obj + (uint64_t)ty->basicsize + l->dv_valid,
                                         &valid, sizeof valid) == 0 &&
                                 valid;
            if (!w)
                return !inline_values || emit_values(e, ty, obj + (uint64_t)ty->basicsize);
            if (!inline_values || !l->gc_visits_inline_values) {
                py_emit(e, w, PY_E_NAMED, (uint64_t)(uintptr_t)dict_label);
                return true;
            }
            py_emit(e, w, PY_E_NAMED | PY_E_UNTRAVERSED, (uint64_t)(uintptr_t)dict_label);
            return emit_values(e, ty, obj + (uint64_t)ty->basicsize);
        }
        default: return true;
        }
    }
    int64_t off = ty->dictoffset;
    if (off < 0) { /* var-sized objects keep the dict after their items */
        int64_t n;
        uint64_t items;
        if (cl_read(o->rt->t, obj + l->ob_size, &n, sizeof n) != 0 ||
            (items = py_ob_size_magnitude(n)) > MAX_ITEMS)
            return false;
        off += (ty->basicsize + (int64_t)items * ty->itemsize + 7) & ~7;
    }
    if (off > 0)
        emit_named(e, obj + (uint64_t)off, dict_label);
    return true;
}

/* The object members of obj not read already: by its family's reader, or as a tuple's items (a
 * struct sequence's fields are members over its items). */
static void emit_slots(struct py_emitter *e, uint64_t obj, struct py_type *ty)
{
    int n;
    const struct py_member *m = py_type_slots(e->o, ty, &n);
    uint64_t items = ty->family == PY_F_TUPLE ? e->o->rt->l->tuple_items : UINT64_MAX;
    for (int i = 0; i < n; i++) {
        if (m[i].offset >= items || field_emitted(obj + m[i].offset))
            continue;
        uint64_t v = py_word(e->o, obj + m[i].offset);
        if (v)
            py_emit(e, v, PY_E_CATTR, m[i].name);
    }
}

/* ---- per family ---- */

/* False when the table cannot be read. */
static bool emit_set(struct py_emitter *e, uint64_t obj)
{
    struct py_objects *o = e->o;
    int64_t mask = 0;
    uint64_t table = py_word(o, obj + o->rt->l->set_table), first;
    if (cl_read(o->rt->t, obj + o->rt->l->set_mask, &mask, sizeof mask) || mask < 0 ||
        (uint64_t)mask >= MAX_ITEMS || !table)
        return false;
    if (cl_read_u64(o->rt->t, table, &first)) /* the table itself (py_word reads fail empty) */
        return false;
    uint64_t position = 0; /* iteration order is table order */
    for (int64_t i = 0; i <= mask; i++) {
        uint64_t key = py_word(o, table + o->rt->l->set_entry_size * (uint64_t)i);
        const struct py_type *kt = key ? py_object_type(o, key) : NULL;
        if (!key || (kt && strcmp(kt->name, "<dummy key> type") == 0)) /* empty, deleted */
            continue;
        py_emit(e, key, PY_E_SETITEM, position++);
    }
    return true;
}

/* False when the deque's length or blocks cannot be read. */
static bool emit_deque(struct py_emitter *e, uint64_t obj)
{
    struct py_objects *o = e->o;
    int64_t len, index;
    const struct py_layout *l = o->rt->l;
    uint64_t block = py_word(o, obj + l->deque_leftblock);
    if (cl_read(o->rt->t, obj + l->ob_size, &len, sizeof len) ||
        cl_read(o->rt->t, obj + l->deque_leftindex, &index, sizeof index) || len < 0 ||
        (uint64_t)len > MAX_ITEMS || index < 0 || index >= 64)
        return false;
    /* Blocks of 64 items: {leftlink @0, data[64] @8, rightlink @520}. */
    int64_t i = 0;
    for (; i < len && block; i++) {
        uint64_t v = py_word(o, block + l->deque_block_data + 8 * (uint64_t)index);
        if (v)
            py_emit(e, v, PY_E_INDEX, (uint64_t)i);
        if (++index == 64) {
            index = 0;
            block = py_word(o, block + l->deque_block_next);
        }
    }
    return i == len; /* else the block chain ended (or could not be read) before the items */
}

/* A field the table marks absent in this version (PY_NONE) is skipped. */
static void emit_field(struct py_emitter *e, uint64_t obj, uint16_t offset, const char *label)
{
    if (offset != PY_NONE)
        emit_named(e, obj + offset, label);
}

/* 3.12+ static builtin types have no tp_dict of their own: the interpreter keeps it, in the
 * builtin types' slot of the type's index, or (3.13+: a stdlib extension's) in the extensions'.
 * The slot's address, or 0 for any other type. */
static uint64_t static_type_slot(struct py_objects *o, uint64_t type)
{
    const struct py_layout *l = o->rt->l;
    uint64_t flags = py_word(o, type + l->tp_flags), index = py_word(o, type + l->tp_subclasses);
    if (l->is_static_types == PY_NONE || !(flags & PY_TPFLAGS_STATIC_BUILTIN) ||
        (flags & PY_TPFLAGS_HEAPTYPE) || index == 0 || index > PY_STATIC_TYPES)
        return 0;
    uint64_t slot = o->rt->interp + l->is_static_types + (index - 1) * l->static_type_size;
    /* the slot names its type: a cheap check of the index */
    if (py_word(o, slot) != type && l->is_static_ext_types != PY_NONE &&
        index <= PY_STATIC_EXT_TYPES)
        slot = o->rt->interp + l->is_static_ext_types + (index - 1) * l->static_type_size;
    return py_word(o, slot) == type ? slot : 0;
}

/* A type's __dict__: tp_dict, or a static builtin type's slot's. */
static uint64_t type_dict(struct py_objects *o, const struct py_type *ty)
{
    uint64_t slot = ty->dict ? 0 : static_type_slot(o, ty->addr);
    return slot ? py_word(o, slot + o->rt->l->static_type_dict) : ty->dict;
}

#define MAX_STRUCT_SEQ 256 /* fields of a struct sequence: os.stat_result has 19 */

/* A tuple's items as tp_traverse visits them: a struct sequence's (os.stat_result) are its
 * n_fields, past its length (n_sequence_fields) too, as structseq.c's REAL_SIZE reads them off
 * the type's dict; any other tuple's, its length. */
static int64_t struct_seq_size(struct py_objects *o, struct py_type *ty, int64_t size)
{
    if (ty->real_size < 0) {
        int64_t n = 0;
        uint64_t dict = ty->addr != o->rt->family_type[PY_F_TUPLE] ? type_dict(o, ty) : 0;
        uint64_t v = dict ? py_dict_get_str(o, dict, "n_fields") : 0;
        ty->real_size = v && py_int_read(o, v, &n) && n > 0 && n <= MAX_STRUCT_SEQ ? (int16_t)n : 0;
    }
    return ty->real_size > size ? ty->real_size : size;
}

/* A bounded lru cache's links: its dict holds each once, and so does the ring the cache keeps
 * them in, recently used last, which starts and ends at the cache itself (its root link is the
 * head of the object). The ring's references are counted, not followed: the dict names each
 * link by its key. An unbounded cache keeps no ring (root.next is the cache). A ring that loops
 * without coming back (corrupt, or mid-update) is left where the loop shows: a second pointer at
 * half the speed meets the first. */
static void emit_lru_ring(struct py_emitter *e, uint64_t obj)
{
    const struct py_layout *l = e->o->rt->l;
    uint64_t link = py_word(e->o, obj + l->lru_elem_next), slow = link;
    for (uint32_t n = 0; link && link != obj && n < MAX_ITEMS; n++) {
        py_emit(e, link, PY_E_BOOKS, 0);
        link = py_word(e->o, link + l->lru_elem_next);
        if (n & 1)
            slow = py_word(e->o, slow + l->lru_elem_next);
        if (link == slow)
            break;
    }
}

/* An OrderedDict's keys a second time: each node of its ordered list holds a reference to its key
 * (Objects/odictobject.c: _odict_add_new_node, odict_traverse), counted, not followed: the dict
 * names each key. Bounded, and stopped where a list that loops without ending shows it. */
static void emit_odict_nodes(struct py_emitter *e, uint64_t obj)
{
    const struct py_layout *l = e->o->rt->l;
    uint64_t node = py_word(e->o, obj + l->odict_first), slow = node;
    for (uint32_t n = 0; node && n < MAX_ITEMS; n++) {
        py_emit(e, py_word(e->o, node), PY_E_BOOKS, 0); /* _odictnode.key, its first field */
        node = py_word(e->o, node + l->odict_node_next);
        if (n & 1)
            slow = py_word(e->o, slow + l->odict_node_next);
        if (node == slow)
            break;
    }
}

/* False when the generator's frame or its locals cannot be read. The shared origin-or-finalizer
 * field is read for async generators only (their finalizer, which async_gen_traverse visits): a
 * coroutine's origin is a tuple gen_traverse leaves out, and 3.11 leaves a generator's unset. */
static bool emit_generator(struct py_emitter *e, uint64_t obj, const struct py_type *ty)
{
    struct py_objects *o = e->o;
    const struct py_layout *l = o->rt->l;
    emit_field(e, obj, l->gen_name, ".__name__");
    emit_field(e, obj, l->gen_qualname, ".__qualname__");
    if (strcmp(ty->name, "async_generator") == 0)
        emit_field(e, obj, l->gen_origin, ".<finalizer>");
    if (l->gen_frame != PY_NONE) {
        emit_named(e, obj + l->gen_frame, ".gi_frame");
        return true;
    }
    int8_t state;
    if (cl_read(o->rt->t, obj + l->gen_frame_state, &state, sizeof state) != 0)
        return false;
    return state >= l->gen_completed || py_frame_locals(e, obj + l->gen_iframe, PY_E_GENLOCAL);
}

/* False when the frame's locals cannot be read. */
static bool emit_frame_object(struct py_emitter *e, uint64_t obj)
{
    struct py_objects *o = e->o;
    const struct py_layout *l = o->rt->l;
    emit_named(e, obj + l->f_back, ".f_back");
    if (l->f_frame == PY_NONE) { /* 3.9/3.10: the frame object is the frame */
        emit_named(e, obj + l->f_code, ".f_code");
        emit_named(e, obj + l->f_locals, ".f_locals");
        return py_frame_locals(e, obj, PY_E_FRAMELOCAL);
    }
    uint64_t iframe = py_word(o, obj + l->f_frame);
    return !iframe || py_frame_locals(e, iframe, PY_E_FRAMELOCAL);
}

/* A class namespace (tp_dict) that is set but is no object that can be read: what the class
 * defines is missing. NULL is no namespace (3.12+ static builtin types keep theirs elsewhere). */
static bool type_dict_readable(struct py_objects *o, uint64_t type)
{
    uint64_t dict = py_word(o, type + o->rt->l->tp_dict);
    return !dict || py_object_type(o, dict) != NULL;
}

/* ---- C types whose references only their tp_traverse knows ---- */

/* A code object's references: its constants, names and tables (code_dealloc's). */
static void emit_code(struct py_emitter *e, uint64_t obj)
{
    const struct py_layout *l = e->o->rt->l;
    emit_field(e, obj, l->co_consts, ".co_consts");
    emit_field(e, obj, l->co_names, ".co_names");
    emit_field(e, obj, l->co_varnames, ".co_varnames");
    emit_field(e, obj, l->co_freevars, ".co_freevars");
    emit_field(e, obj, l->co_cellvars, ".co_cellvars");
    emit_field(e, obj, l->co_localsplusnames, ".<co_localsplusnames>");
    emit_field(e, obj, l->co_localspluskinds, ".<co_localspluskinds>");
    emit_field(e, obj, l->co_filename, ".co_filename");
    emit_field(e, obj, l->co_name, ".co_name");
    emit_field(e, obj, l->co_qualname, ".co_qualname");
    emit_field(e, obj, l->co_linetable, ".co_linetable");
    emit_field(e, obj, l->co_exceptiontable, ".co_exceptiontable");
    emit_field(e, obj, l->co_code, ".co_code");
    /* co_extra may lie on a page a dump an older culeak wrote never read */
    const struct py_code_extra_reader *r = e->o->code_extra;
    uint64_t extra;
    if (r && l->co_extra != PY_NONE &&
        !cl_read_held(e->o->rt->t, obj + l->co_extra, &extra, sizeof extra) && extra)
        r->emit(r->ctx, e, obj, extra);
}

/* proxy['k'] reads the dict's own item, so a dict behind a mappingproxy is a step that prints
 * nothing: the path stays one Python accepts. Other mappings are named. */
static void emit_mappingproxy(struct py_emitter *e, uint64_t obj)
{
    struct py_objects *o = e->o;
    uint64_t mapping = py_word(o, obj + o->rt->l->proxy_mapping);
    const struct py_type *mt = mapping ? py_object_type(o, mapping) : NULL;
    if (mt && mt->family == PY_F_DICT)
        py_emit(e, mapping, PY_E_HIDDEN, 0);
    else if (mt)
        py_emit(e, mapping, PY_E_NAMED, (uint64_t)(uintptr_t)".<mapping>");
}

static bool emit_thread_dict(void *arg, uint64_t key, uint64_t value)
{
    (void)key; /* the thread's dummy (3.13) or a weak reference to it */
    py_emit(arg, value, PY_E_NAMED | PY_E_UNCOUNTED, (uint64_t)(uintptr_t)".__dict__");
    return true;
}

/* threading.local: each thread's attribute dict is a value of one dict the local keeps, keyed by
 * (a weak reference to) a per-thread dummy. Each is also emitted straight from the local as its
 * __dict__, so a value prints as `local.name`, what that thread reads: a name only, whose count
 * that dict's entry holds. */
static void emit_thread_local(struct py_emitter *e, uint64_t obj)
{
    struct py_objects *o = e->o;
    const struct py_layout *l = o->rt->l;
    emit_field(e, obj, l->local_key, ".<key>");
    emit_field(e, obj, l->local_args, ".<args>");
    emit_field(e, obj, l->local_kw, ".<kw>");
    emit_field(e, obj, l->local_wr_callback, ".<wr_callback>");
    emit_field(e, obj, l->local_watchdogs, ".<thread_watchdogs>");
    uint64_t dicts = py_word(o, obj + l->local_dicts);
    const struct py_type *dt = dicts ? py_object_type(o, dicts) : NULL;
    if (!dt || dt->family != PY_F_DICT)
        return;
    py_emit(e, dicts, PY_E_NAMED, (uint64_t)(uintptr_t)".<thread_dicts>");
    py_dict_items(o, dicts, emit_thread_dict, e);
}

/* 32-bit hashes, 5 bits a level: at most 7 levels of bitmap or array nodes, and a collision
 * node (keys whose hashes are equal) at the end of a branch. */
#define MAX_HAMT_DEPTH 8
#define MAX_BITMAP_ITEMS 64 /* a (key or NULL, value or node) pair per bit of a 32-bit map */

struct hamt_walk {
    struct py_emitter *e;
    int64_t count; /* the HAMT's own item count */
    uint64_t budget; /* nodes left to visit */
};

/* The item array of a bitmap or collision node, its length (ob_size) bounded by cap: in small
 * when it fits, else malloc'ed (the caller frees what is not small). NULL when unreadable. */
static uint64_t *hamt_items(struct py_objects *o, uint64_t node, enum py_family family, int64_t cap,
                            uint64_t *small, int64_t *n)
{
    const struct py_layout *l = o->rt->l;
    if (cl_read(o->rt->t, node + l->ob_size, n, sizeof *n) != 0 || *n < 0 || *n > cap || (*n & 1))
        return NULL;
    uint16_t at = family == PY_F_HAMT_BITMAP ? l->hamt_bitmap_items : l->hamt_collision_items;
    /* A collision node's count is bounded only by the map's: before allocating for it, its last
     * item must be there to read (a corrupt count would otherwise cost a huge allocation). */
    uint64_t last;
    if (*n > MAX_BITMAP_ITEMS &&
        cl_read(o->rt->t, node + at + (uint64_t)(*n - 1) * sizeof last, &last, sizeof last) != 0)
        return NULL;
    uint64_t *buf = *n <= MAX_BITMAP_ITEMS ? small : malloc((size_t)*n * sizeof *buf);
    if (buf && *n && cl_read(o->rt->t, node + at, buf, (size_t)*n * sizeof *buf) != 0) {
        if (buf != small)
            free(buf);
        return NULL;
    }
    return buf;
}

/* Emits every (key, value) of the subtree at node as context[key] = value, uncounted (the
 * nodes' own references are counted). */
static void hamt_walk_node(struct hamt_walk *w, uint64_t node, int depth)
{
    struct py_objects *o = w->e->o;
    const struct py_layout *l = o->rt->l;
    const struct py_type *ty = node ? py_object_type(o, node) : NULL;
    if (!ty || depth > MAX_HAMT_DEPTH || w->budget == 0)
        return;
    w->budget--;
    if (ty->family == PY_F_HAMT_ARRAY) {
        uint64_t nodes[32];
        size_t slots = (size_t)(l->hamt_array_count - l->hamt_array_nodes) / sizeof *nodes;
        if (slots > 32 ||
            cl_read(o->rt->t, node + l->hamt_array_nodes, nodes, slots * sizeof *nodes) != 0)
            return;
        for (size_t i = 0; i < slots; i++)
            hamt_walk_node(w, nodes[i], depth + 1);
        return;
    }
    if (ty->family != PY_F_HAMT_BITMAP && ty->family != PY_F_HAMT_COLLISION)
        return;
    bool bitmap = ty->family == PY_F_HAMT_BITMAP;
    uint64_t small[MAX_BITMAP_ITEMS];
    int64_t n;
    uint64_t *buf =
        hamt_items(o, node, ty->family, bitmap ? MAX_BITMAP_ITEMS : 2 * w->count, small, &n);
    for (int64_t i = 0; buf && i + 1 < n; i += 2) {
        if (!buf[i] && bitmap) { /* no key: the value is a subtree */
            hamt_walk_node(w, buf[i + 1], depth + 1);
        } else if (buf[i] && buf[i + 1]) {
            py_emit(w->e, buf[i + 1], PY_E_KEY | PY_E_UNCOUNTED, buf[i]);
            py_emit(w->e, buf[i], PY_E_DICTKEY | PY_E_UNCOUNTED, 0);
        }
    }
    if (buf != small)
        free(buf);
}

/* A Context's variables live in a HAMT of nodes; each value is emitted as ctx[var] (how Python
 * reads it), uncounted: the HAMT, one more referent, holds the counted references. */
static void emit_context(struct py_emitter *e, uint64_t obj)
{
    struct py_objects *o = e->o;
    const struct py_layout *l = o->rt->l;
    emit_named(e, obj + l->ctx_prev, ".<prev>");
    uint64_t vars = py_word(o, obj + l->ctx_vars);
    const struct py_type *vt = vars ? py_object_type(o, vars) : NULL;
    if (!vt || vt->family != PY_F_HAMT)
        return;
    py_emit(e, vars, PY_E_NAMED, (uint64_t)(uintptr_t)".<vars>");
    struct hamt_walk w = {e, 0, 0};
    if (cl_read(o->rt->t, vars + l->hamt_count, &w.count, sizeof w.count) != 0 || w.count < 0 ||
        (uint64_t)w.count > MAX_ITEMS)
        return;
    /* each item adds at most one node a level (a chain of single-entry nodes down to a
     * collision node), and the root is one more */
    w.budget = (MAX_HAMT_DEPTH + 2) * ((uint64_t)w.count + 1);
    hamt_walk_node(&w, py_word(o, vars + l->hamt_root), 0);
}

/* A HAMT node's own references, as tp_traverse gives them: every non-NULL slot. */
static void emit_hamt_node(struct py_emitter *e, uint64_t obj, enum py_family family)
{
    struct py_objects *o = e->o;
    const struct py_layout *l = o->rt->l;
    int64_t n = 0;
    if (family == PY_F_HAMT_ARRAY) {
        (void)emit_array(e, obj + l->hamt_array_nodes,
                         (l->hamt_array_count - l->hamt_array_nodes) / 8);
        return;
    }
    if (cl_read(o->rt->t, obj + l->ob_size, &n, sizeof n) != 0 ||
        (family == PY_F_HAMT_BITMAP && n > MAX_BITMAP_ITEMS))
        return;
    (void)emit_array(
        e, obj + (family == PY_F_HAMT_BITMAP ? l->hamt_bitmap_items : l->hamt_collision_items), n);
}

/* _asyncio.Future, and the same head of _asyncio.Task. Names are the attributes the C types
 * expose where there is one. */
static void emit_future(struct py_emitter *e, uint64_t obj)
{
    const struct py_layout *l = e->o->rt->l;
    emit_field(e, obj, l->fut_loop, "._loop");
    emit_field(e, obj, l->fut_callback0, ".<callback0>");
    emit_field(e, obj, l->fut_context0, ".<context0>");
    emit_field(e, obj, l->fut_callbacks, ".<callbacks>");
    emit_field(e, obj, l->fut_result, "._result");
    emit_field(e, obj, l->fut_exception, "._exception");
    emit_field(e, obj, l->fut_exception_tb, ".<exception_tb>");
    emit_field(e, obj, l->fut_source_tb, "._source_traceback");
    emit_field(e, obj, l->fut_cancel_msg, "._cancel_message");
    emit_field(e, obj, l->fut_cancelled_exc, ".<cancelled_exc>");
    emit_field(e, obj, l->fut_awaited_by, ".<awaited by>"); /* 3.14: a task, or a set of them */
    if (l->fut_cancelled_exc_state == PY_NONE)
        return;
    uint64_t state = obj + l->fut_cancelled_exc_state; /* a _PyErr_StackItem (3.9/3.10) */
    emit_field(e, state, l->ei_exc_type, ".<cancelled_exc_type>");
    emit_field(e, state, l->ei_exc_value, ".<cancelled_exc>");
    emit_field(e, state, l->ei_exc_traceback, ".<cancelled_exc_tb>");
}

static void emit_task(struct py_emitter *e, uint64_t obj)
{
    const struct py_layout *l = e->o->rt->l;
    emit_future(e, obj);
    emit_field(e, obj, l->task_coro, "._coro");
    emit_field(e, obj, l->task_fut_waiter, "._fut_waiter");
    emit_field(e, obj, l->task_name, ".<name>");
    emit_field(e, obj, l->task_context, ".<context>");
}

/* An Element's children are what elem[i] gives; text and tail carry a flag in bit 0. */
static void emit_element(struct py_emitter *e, uint64_t obj)
{
    struct py_objects *o = e->o;
    const struct py_layout *l = o->rt->l;
    uint64_t text = py_word(o, obj + l->et_text) & ~(uint64_t)PY_ET_JOIN_FLAG;
    uint64_t tail = py_word(o, obj + l->et_tail) & ~(uint64_t)PY_ET_JOIN_FLAG;
    emit_named(e, obj + l->et_tag, ".tag");
    if (text)
        py_emit(e, text, PY_E_NAMED, (uint64_t)(uintptr_t)".text");
    if (tail)
        py_emit(e, tail, PY_E_NAMED, (uint64_t)(uintptr_t)".tail");
    uint64_t extra = py_word(o, obj + l->et_extra);
    int64_t length;
    if (!extra)
        return;
    emit_named(e, extra + l->etx_attrib, ".attrib");
    if (cl_read(o->rt->t, extra + l->etx_length, &length, sizeof length) == 0)
        (void)emit_array(e, py_word(o, extra + l->etx_children), length); /* bounded there */
}

static void emit_sqlite_connection(struct py_emitter *e, uint64_t obj)
{
    const struct py_layout *l = e->o->rt->l;
    emit_field(e, obj, l->sq_conn_statement_cache, ".<statement_cache>");
    emit_field(e, obj, l->sq_conn_cursors, ".<cursors>");
    emit_field(e, obj, l->sq_conn_blobs, ".<blobs>");
    emit_field(e, obj, l->sq_conn_statements, ".<statements>");
    emit_field(e, obj, l->sq_conn_collations, ".<collations>");
    emit_field(e, obj, l->sq_conn_isolation_level, ".isolation_level");
    emit_field(e, obj, l->sq_conn_text_factory, ".text_factory");
}

/* C types whose references are fields (iterators, dict views, itertools', operator's
 * callables): the objects each holds, as layout fields, in the order emitted. */
#define MAX_TYPE_FIELDS 5
#define FIELD(name, label) {offsetof(struct py_layout, name), label}
static const struct field_family {
    struct {
        size_t at; /* of the uint16_t offset in struct py_layout */
        const char *label; /* NULL: no more */
    } fields[MAX_TYPE_FIELDS];
} field_families[PY_F_COUNT] = {
    [PY_F_SEQ_ITER] = {{FIELD(seqiter_seq, ".<seq>")}},
    [PY_F_ENUMERATE] = {{FIELD(enum_sit, ".<iterator>"), FIELD(enum_result, ".<result>"),
                         FIELD(enum_longindex, ".<index>")}},
    [PY_F_ZIP] = {{FIELD(zip_ittuple, ".<iterators>"), FIELD(zip_result, ".<result>")}},
    [PY_F_MAP] = {{FIELD(map_func, ".<function>"), FIELD(map_iters, ".<iterators>")}},
    [PY_F_FUNC_ITER] = {{FIELD(funcit_func, ".<function>"), FIELD(funcit_it, ".<iterator>")}},
    [PY_F_CHAIN] = {{FIELD(chain_source, ".<source>"), FIELD(chain_active, ".<active>")}},
    [PY_F_ISLICE] = {{FIELD(islice_it, ".<iterator>")}},
    [PY_F_COMPRESS] = {{FIELD(compress_data, ".<data>"),
                        FIELD(compress_selectors, ".<selectors>")}},
    [PY_F_ACCUMULATE] = {{FIELD(acc_total, ".<total>"), FIELD(acc_it, ".<iterator>"),
                          FIELD(acc_binop, ".<function>"), FIELD(acc_initial, ".<initial>")}},
    [PY_F_CALL_ITER] = {{FIELD(calliter_callable, ".<callable>"),
                         FIELD(calliter_sentinel, ".<sentinel>")}},
    [PY_F_CYCLE] = {{FIELD(cycle_it, ".<iterator>"), FIELD(cycle_saved, ".<saved>")}},
    [PY_F_DICT_ITER] = {{FIELD(dictiter_dict, ".<dict>"), FIELD(dictiter_result, ".<result>")}},
    [PY_F_DICT_VIEW] = {{FIELD(dictview_dict, ".<dict>")}},
    [PY_F_SET_ITER] = {{FIELD(setiter_set, ".<set>")}},
    [PY_F_TEE] = {{FIELD(tee_dataobj, ".<data>")}},
    [PY_F_TEE_DATA] = {{FIELD(teedata_it, ".<iterator>"), FIELD(teedata_nextlink, ".<next>")}},
    [PY_F_GROUPBY] = {{FIELD(groupby_it, ".<iterator>"), FIELD(groupby_keyfunc, ".<key>"),
                       FIELD(groupby_tgtkey, ".<target key>"),
                       FIELD(groupby_currkey, ".<current key>"),
                       FIELD(groupby_currvalue, ".<current value>")}},
    [PY_F_GROUPER] = {{FIELD(grouper_parent, ".<groupby>"), FIELD(grouper_tgtkey, ".<key>")}},
    [PY_F_PRODUCT] = {{FIELD(product_pools, ".<pools>"), FIELD(product_result, ".<result>")}},
    [PY_F_METHODCALLER] = {{FIELD(mc_name, ".<name>"), FIELD(mc_args, ".<args>"),
                            FIELD(mc_kwds, ".<kwargs>"), FIELD(mc_kwnames, ".<kwnames>"),
                            FIELD(mc_vcargs, ".<vectorcall args>")}},
    [PY_F_ATTRGETTER] = {{FIELD(attrgetter_attr, ".<attrs>")}},
    [PY_F_ITEMGETTER] = {{FIELD(itemgetter_item, ".<items>")}},
    [PY_F_SIMPLE_QUEUE] = {{FIELD(sq_list, ".<items>")}},
};
#undef FIELD

static void emit_fields(struct py_emitter *e, uint64_t obj, enum py_family family)
{
    const struct py_layout *l = e->o->rt->l;
    const struct field_family *f = &field_families[family];
    for (size_t k = 0; k < MAX_TYPE_FIELDS && f->fields[k].label; k++) {
        uint16_t offset;
        memcpy(&offset, (const char *)l + f->fields[k].at, sizeof offset);
        emit_field(e, obj, offset, f->fields[k].label);
    }
}

#define TEE_LINKCELLS 57 /* teedataobject.values' length (LINKCELLS) */

/* tee's shared data: its iterator, the next link, and the values read so far. False when they
 * cannot be read. */
static bool emit_tee_data(struct py_emitter *e, uint64_t obj)
{
    const struct py_layout *l = e->o->rt->l;
    int32_t numread;
    emit_fields(e, obj, PY_F_TEE_DATA);
    if (cl_read(e->o->rt->t, obj + l->teedata_numread, &numread, sizeof numread) || numread < 0 ||
        numread > TEE_LINKCELLS)
        return false;
    return emit_array(e, obj + l->teedata_values, numread);
}

#define MAX_QUEUE (1ll << 26)

/* A SimpleQueue's items: 3.9-3.12 a list; 3.13+ a ring buffer {put_idx, get_idx, items,
 * items_cap, num_items} whose num_items live items start at get_idx, wrapping at items_cap,
 * each printed by its place in the queue. False when they cannot be read. */
static bool emit_simple_queue(struct py_emitter *e, uint64_t obj)
{
    const struct py_layout *l = e->o->rt->l;
    emit_fields(e, obj, PY_F_SIMPLE_QUEUE);
    if (l->sq_ring == PY_NONE)
        return true;
    int64_t ring[5];
    if (cl_read(e->o->rt->t, obj + l->sq_ring, ring, sizeof ring))
        return false;
    int64_t get = ring[1], cap = ring[3], n = ring[4];
    uint64_t items = (uint64_t)ring[2];
    if (cap < 0 || cap > MAX_QUEUE || n < 0 || n > cap || get < 0 || (cap && get >= cap))
        return false;
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = py_word(e->o, items + 8 * (uint64_t)((get + i) % cap));
        if (v)
            py_emit(e, v, PY_E_INDEX, (uint64_t)i);
    }
    return true;
}

/* The C types above whose references only their tp_traverse knows. */
static void emit_c_type(struct py_emitter *e, uint64_t obj, enum py_family family)
{
    const struct py_layout *l = e->o->rt->l;
    switch (family) {
    case PY_F_MODULE: /* its name, which module_traverse does not visit but module_dealloc drops */
        emit_named(e, obj + l->module_name, ".__name__");
        break;
    case PY_F_MAPPINGPROXY: emit_mappingproxy(e, obj); break;
    case PY_F_THREAD_LOCAL: emit_thread_local(e, obj); break;
    case PY_F_CONTEXT: emit_context(e, obj); break;
    case PY_F_CONTEXTVAR: /* the name is a member; var_cached is a borrowed reference */
        emit_named(e, obj + l->cv_default, ".<default>");
        break;
    case PY_F_CONTEXT_TOKEN:
        emit_named(e, obj + l->tok_var, ".var");
        emit_named(e, obj + l->tok_oldval, ".old_value");
        emit_named(e, obj + l->tok_ctx, ".<context>");
        break;
    case PY_F_HAMT: emit_named(e, obj + l->hamt_root, ".<root>"); break;
    case PY_F_HAMT_BITMAP:
    case PY_F_HAMT_ARRAY:
    case PY_F_HAMT_COLLISION: emit_hamt_node(e, obj, family); break;
    case PY_F_FUTURE: emit_future(e, obj); break;
    case PY_F_TASK: emit_task(e, obj); break;
    case PY_F_TASK_STEP:
        emit_named(e, obj + l->step_task, ".__self__");
        emit_named(e, obj + l->step_arg, ".<arg>");
        break;
    case PY_F_TASK_WAKEUP: emit_named(e, obj + l->wakeup_task, ".__self__"); break;
    case PY_F_FUTURE_ITER: emit_named(e, obj + l->futiter_future, ".<future>"); break;
    case PY_F_ELEMENT: emit_element(e, obj); break;
    case PY_F_SQLITE_CONN: emit_sqlite_connection(e, obj); break;
    case PY_F_SQLITE_CACHE: /* its factory is the connection, borrowed */
        emit_field(e, obj, l->sq_cache_mapping, ".<mapping>");
        break;
    case PY_F_SQLITE_NODE: /* prev and next are borrowed: the mapping owns the nodes */
        emit_field(e, obj, l->sq_node_key, ".<key>");
        emit_field(e, obj, l->sq_node_data, ".<data>");
        break;
    case PY_F_SQLITE_STMT: emit_field(e, obj, l->sq_stmt_sql, ".<sql>"); break;
    case PY_F_TEE_DATA:
        if (!emit_tee_data(e, obj))
            py_emit_skipped(e, family);
        break;
    case PY_F_SIMPLE_QUEUE:
        if (!emit_simple_queue(e, obj))
            py_emit_skipped(e, family);
        break;
    default: emit_fields(e, obj, family); break;
    }
}

static void emit_static_type_dict(struct py_emitter *e, uint64_t type)
{
    const struct py_layout *l = e->o->rt->l;
    uint64_t slot = static_type_slot(e->o, type);
    if (!slot)
        return;
    emit_named(e, slot + l->static_type_dict, ".__dict__");
    emit_named(e, slot + l->static_type_subclasses, ".__subclasses__()");
}

void py_referents(struct py_emitter *e, uint64_t obj, struct py_type *ty)
{
    struct py_objects *o = e->o;
    const struct py_layout *l = o->rt->l;
    struct emit_arg items = {e, PY_E_KEY, 0, 0};
    int64_t size = 0;
    bool readable = true; /* false: some of obj's contents could not be read (counted once) */
    fields.n = 0;
    switch (ty->family) {
    case PY_F_DICT: {
        uint64_t values = py_word(o, obj + l->dict_values);
        uint8_t embedded = 0;
        if (values)
            items.key_count = PY_E_UNCOUNTED;
        if (values && l->gc_visits_inline_values &&
            cl_read(o->rt->t, values + l->dv_embedded, &embedded, sizeof embedded) == 0 && embedded)
            items.value_flags = PY_E_UNCOUNTED | PY_E_UNTRAVERSED;
        readable = py_dict_items(o, obj, emit_item, &items);
        if (ty->odict)
            emit_odict_nodes(e, obj);
        if (ty->fixed) /* a C subclass's own fields (fixed_types.h) */
            emit_fixed(e, obj, ty->fixed);
        break;
    }
    case PY_F_LIST:
        readable = cl_read(o->rt->t, obj + l->ob_size, &size, sizeof size) == 0 &&
                   emit_array(e, py_word(o, obj + l->list_items), size);
        break;
    case PY_F_TUPLE:
        readable =
            cl_read(o->rt->t, obj + l->ob_size, &size, sizeof size) == 0 &&
            emit_array(e, obj + l->tuple_items, size > 0 ? struct_seq_size(o, ty, size) : size);
        break;
    case PY_F_SET: readable = emit_set(e, obj); break;
    case PY_F_CELL: emit_named(e, obj + l->cell_ref, ".cell_contents"); break;
    case PY_F_FUNCTION:
        emit_named(e, obj + l->fn_closure, ".__closure__");
        emit_named(e, obj + l->fn_defaults, ".__defaults__");
        emit_named(e, obj + l->fn_kwdefaults, ".__kwdefaults__");
        emit_named(e, obj + l->fn_code, ".__code__");
        emit_named(e, obj + l->fn_globals, ".__globals__");
        emit_field(e, obj, l->fn_name, ".__name__");
        emit_field(e, obj, l->fn_qualname, ".__qualname__");
        emit_field(e, obj, l->fn_annotations, ".__annotations__");
        emit_field(e, obj, l->fn_annotate, ".__annotate__");
        emit_field(e, obj, l->fn_typeparams, ".__type_params__");
        emit_field(e, obj, l->fn_doc, ".__doc__");
        emit_field(e, obj, l->fn_module, ".__module__"); /* 3.14: no member either */
        break;
    case PY_F_METHOD:
        emit_named(e, obj + l->method_self, ".__self__");
        emit_named(e, obj + l->method_func, ".__func__");
        break;
    case PY_F_CODE: emit_code(e, obj); break;
    case PY_F_FRAME: readable = emit_frame_object(e, obj); break;
    case PY_F_GEN: readable = emit_generator(e, obj, ty); break;
    case PY_F_PROPERTY:
        emit_named(e, obj + l->prop_get, ".fget");
        emit_named(e, obj + l->prop_set, ".fset");
        emit_named(e, obj + l->prop_del, ".fdel");
        emit_field(e, obj, l->prop_name, ".__name__");
        break;
    case PY_F_STATICMETHOD:
    case PY_F_CLASSMETHOD: /* the same struct as staticmethod */
        emit_named(e, obj + l->sm_callable, ".__func__");
        break;
    case PY_F_TRACEBACK:
        emit_named(e, obj + l->tb_frame, ".tb_frame");
        emit_named(e, obj + l->tb_next, ".tb_next");
        break;
    case PY_F_CFUNCTION:
        emit_named(e, obj + l->cfunc_self, ".__self__");
        if (ty->basicsize >= l->cfunc_class + 8) /* a PyCMethodObject: its defining class */
            emit_named(e, obj + l->cfunc_class, ".<defining class>");
        py_pybind11_defaults(e, obj);
        break;
    case PY_F_WEAKREF:
        emit_named(e, obj + l->weakref_callback, ".__callback__"); /* wr_object: weak, no edge */
        break;
    case PY_F_EXCEPTION:
        emit_named(e, obj + l->exc_traceback, ".__traceback__");
        emit_named(e, obj + l->exc_context, ".__context__");
        emit_named(e, obj + l->exc_cause, ".__cause__");
        emit_named(e, obj + l->exc_args, ".args");
        break;
    case PY_F_DEQUE: readable = emit_deque(e, obj); break;
    case PY_F_PARTIAL:
        emit_named(e, obj + l->partial_fn, ".func");
        emit_named(e, obj + l->partial_args, ".args");
        emit_named(e, obj + l->partial_kw, ".keywords");
        break;
    case PY_F_LRU_CACHE:
        emit_named(e, obj + l->lru_func, ".__wrapped__");
        emit_named(e, obj + l->lru_cache, ".<lru_cache>");
        emit_field(e, obj, l->lru_kwd_mark, ".<kwd_mark>");
        emit_field(e, obj, l->lru_elem_type, ".<link type>");
        emit_field(e, obj, l->lru_info_type, ".<cache_info type>");
        emit_lru_ring(e, obj);
        break;
    case PY_F_TYPE:
        emit_named(e, obj + l->tp_mro, ".__mro__");
        emit_named(e, obj + l->tp_bases, ".__bases__");
        emit_named(e, obj + l->tp_subclasses, ".__subclasses__()"); /* a dict of weakrefs */
        emit_static_type_dict(e, obj);
        emit_type_fields(e, obj);
        readable = type_dict_readable(o, obj);
        break;
    case PY_F_LRU_ELEM:
        emit_named(e, obj + l->lru_elem_result, ".result");
        emit_named(e, obj + l->lru_elem_key, ".key");
        break;
    case PY_F_FIXED: emit_fixed(e, obj, ty->fixed); break;
    case PY_F_READER: ty->reader->emit(ty->reader->ctx, e, obj); break;
    default: emit_c_type(e, obj, ty->family); break;
    }
    /* Every type: its instances' dict (module, function, class and instance namespaces) and
     * object members (__slots__, C members), then the class. */
    if (!emit_instance_dict(e, obj, ty))
        readable = false;
    emit_slots(e, obj, ty);
    py_emit_class(e, ty);
    if (!readable)
        py_emit_skipped(e, ty->family);
}

/* The kinds a warning names; the rest are counted as "other". */
static const char *skipped_kind(enum py_family f)
{
    switch (f) {
    case PY_F_DICT: return "dict";
    case PY_F_LIST: return "list";
    case PY_F_TUPLE: return "tuple";
    case PY_F_SET: return "set";
    case PY_F_DEQUE: return "deque";
    case PY_F_OBJECT: return "instance";
    case PY_F_TYPE: return "type";
    case PY_F_FRAME: return "frame"; /* frame objects, and the frames of threads' stacks */
    case PY_F_GEN: return "generator";
    case PY_F_READER: return "library C type";
    default: return NULL;
    }
}

void py_referents_note_skipped(const struct py_objects *o, char **notes)
{
    char kinds[256] = "";
    size_t used = 0;
    uint64_t total = 0, other = 0;
    for (int f = 0; f < PY_F_COUNT; f++) {
        uint64_t n = o->unreadable[f];
        const char *kind = skipped_kind((enum py_family)f);
        total += n;
        if (n && !kind)
            other += n;
        else if (n)
            cl_appendf(kinds, sizeof kinds, &used, "%s%llu %s", used ? ", " : "",
                       (unsigned long long)n, kind);
    }
    if (other)
        cl_appendf(kinds, sizeof kinds, &used, "%s%llu other", used ? ", " : "",
                   (unsigned long long)other);
    if (total)
        cl_note_add(notes,
                    "could not read the contents of %llu objects (%s): what they hold is "
                    "missing from the walk, and what only they hold is held from C",
                    (unsigned long long)total, kinds);
}
