#include "cpython/object.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/emit.h"
#include "cpython/fixed_types.h"
#include "util/bytes.h"
#include "util/vec.h"

#define MAX_BASES 64   /* tp_base chains are short; corrupt ones are cut here */

void py_objects_init(struct py_objects *o, struct py_runtime *rt)
{
    memset(o, 0, sizeof *o);
    o->rt = rt;
}

void py_objects_free(struct py_objects *o)
{
    cl_addrmap_free(&o->type_index);
    for (size_t i = 0; i < o->ntypes; i++) {
        free(o->types[i]->slots);
        free(o->types[i]);
    }
    free(o->types);
    memset(o, 0, sizeof *o);
}

static void read_name(struct cl_target *t, uint64_t p, char *out, size_t cap)
{
    out[0] = '\0';
    for (size_t got = 0; got + 1 < cap;) {
        size_t n = 16 < cap - 1 - got ? 16 : cap - 1 - got;
        if (cl_read(t, p + got, out + got, n) != 0)
            break;
        out[got + n] = '\0';
        if (memchr(out + got, '\0', n))
            return;
        got += n;
    }
}

/* Types found by their fixed tp_name: extension types (static types before 3.12, heap types from
 * PyType_FromSpec after) and core types that export no symbol. A class statement cannot make a
 * dotted name; an undotted one must also be a static type, which only C code makes. `size` is
 * the py_layout field that equals the type's tp_basicsize (the struct's size, or for the
 * variable-size HAMT nodes the offset of their items; 0: not checked): a type whose
 * tp_basicsize differs is not the struct culeak knows (another release's), and gets no referent
 * rule of its own. */
static const struct named_family {
    const char *name;
    enum py_family family;
    size_t size;
} named_families[] = {
    {"collections.deque", PY_F_DEQUE, 0},
    {"functools.partial", PY_F_PARTIAL, 0},
    {"functools._lru_cache_wrapper", PY_F_LRU_CACHE, 0},
    /* weakref.proxy: a PyWeakReference as weakref.ref is, known by name (3.9 spells it without
     * its module) rather than by symbol, which dumps written before it was read do not hold */
    {"weakproxy", PY_F_WEAKREF, 0},
    {"weakcallableproxy", PY_F_WEAKREF, 0},
    {"weakref.ProxyType", PY_F_WEAKREF, 0},
    {"weakref.CallableProxyType", PY_F_WEAKREF, 0},
    {"functools._lru_list_elem", PY_F_LRU_ELEM, 0},
    {"itertools.cycle", PY_F_CYCLE, 0},
    {"itertools.takewhile", PY_F_FUNC_ITER, 0},
    {"itertools.dropwhile", PY_F_FUNC_ITER, 0},
    {"itertools.starmap", PY_F_FUNC_ITER, 0},
    {"itertools.filterfalse", PY_F_FUNC_ITER, 0},
    {"itertools.chain", PY_F_CHAIN, 0},
    {"itertools.islice", PY_F_ISLICE, 0},
    {"itertools.compress", PY_F_COMPRESS, 0},
    {"itertools.accumulate", PY_F_ACCUMULATE, 0},
    {"itertools._tee", PY_F_TEE, offsetof(struct py_layout, tee_size)},
    {"itertools._tee_dataobject", PY_F_TEE_DATA, offsetof(struct py_layout, teedata_size)},
    {"itertools.groupby", PY_F_GROUPBY, offsetof(struct py_layout, groupby_size)},
    {"itertools._grouper", PY_F_GROUPER, offsetof(struct py_layout, grouper_size)},
    {"itertools.product", PY_F_PRODUCT, offsetof(struct py_layout, product_size)},
    {"operator.methodcaller", PY_F_METHODCALLER, offsetof(struct py_layout, mc_size)},
    {"operator.attrgetter", PY_F_ATTRGETTER, offsetof(struct py_layout, attrgetter_size)},
    {"operator.itemgetter", PY_F_ITEMGETTER, offsetof(struct py_layout, itemgetter_size)},
    {"_queue.SimpleQueue", PY_F_SIMPLE_QUEUE, offsetof(struct py_layout, sq_size)},
    {"_thread._local", PY_F_THREAD_LOCAL, offsetof(struct py_layout, local_size)},
    {"hamt", PY_F_HAMT, 0},
    {"hamt_bitmap_node", PY_F_HAMT_BITMAP, offsetof(struct py_layout, hamt_bitmap_items)},
    {"hamt_array_node", PY_F_HAMT_ARRAY, 0},
    {"hamt_collision_node", PY_F_HAMT_COLLISION, offsetof(struct py_layout, hamt_collision_items)},
    {"_asyncio.Future", PY_F_FUTURE, offsetof(struct py_layout, fut_size)},
    {"_asyncio.Task", PY_F_TASK, offsetof(struct py_layout, task_size)},
    {"TaskStepMethWrapper", PY_F_TASK_STEP, offsetof(struct py_layout, step_size)},
    {"_asyncio.TaskStepMethWrapper", PY_F_TASK_STEP, offsetof(struct py_layout, step_size)},
    {"TaskWakeupMethWrapper", PY_F_TASK_WAKEUP, offsetof(struct py_layout, wakeup_size)},
    {"_asyncio.FutureIter", PY_F_FUTURE_ITER, offsetof(struct py_layout, futiter_size)},
    {"xml.etree.ElementTree.Element", PY_F_ELEMENT, offsetof(struct py_layout, et_size)},
    {"sqlite3.Connection", PY_F_SQLITE_CONN, offsetof(struct py_layout, sq_conn_size)},
    {"sqlite3.Cache", PY_F_SQLITE_CACHE, offsetof(struct py_layout, sq_cache_size)},
    {"sqlite3.Node", PY_F_SQLITE_NODE, offsetof(struct py_layout, sq_node_size)},
    {"sqlite3Node", PY_F_SQLITE_NODE, offsetof(struct py_layout, sq_node_size)},   /* 3.9 */
    {"sqlite3.Statement", PY_F_SQLITE_STMT, offsetof(struct py_layout, sq_stmt_size)},
};

/* The family of type by its own tp_name (its bases are the caller's), or PY_F_OTHER; a
 * PY_F_FIXED type's row into ty->fixed, a PY_F_READER type's reader into ty->reader. */
static enum py_family named_family_of(struct py_objects *o, uint64_t type, struct py_type *ty)
{
    struct cl_target *t = o->rt->t;
    const struct py_layout *l = o->rt->l;
    uint64_t np, flags;
    int64_t basicsize;
    char name[64];
    if (cl_read_u64(t, type + l->tp_name, &np) != 0 ||
        cl_read_u64(t, type + l->tp_flags, &flags) != 0 ||
        cl_read(t, type + l->tp_basicsize, &basicsize, sizeof basicsize) != 0)
        return PY_F_OTHER;
    read_name(t, np, name, sizeof name);
    if (!strchr(name, '.') && (flags & PY_TPFLAGS_HEAPTYPE))
        return PY_F_OTHER; /* a class statement's name, which no C type of either table has */
    for (size_t i = 0; i < sizeof named_families / sizeof *named_families; i++) {
        const struct named_family *nf = &named_families[i];
        if (strcmp(name, nf->name) != 0)
            continue;
        if (nf->size) {
            uint16_t size;
            memcpy(&size, (const char *)l + nf->size, sizeof size);
            if (size == PY_NONE || basicsize != size)
                return PY_F_OTHER;
        }
        return nf->family;
    }
    for (size_t i = 0; i < o->ntype_readers; i++)
        if (o->type_readers[i].basicsize == basicsize &&
            strcmp(name, o->type_readers[i].tp_name) == 0) {
            ty->reader = &o->type_readers[i];
            return PY_F_READER;
        }
    ty->fixed = py_fixed_type(name, l->minor, basicsize);
    return ty->fixed ? PY_F_FIXED : PY_F_OTHER;
}

static enum py_family family_of(struct py_objects *o, uint64_t type, uint64_t flags,
                                struct py_type *ty)
{
    struct py_runtime *rt = o->rt;
    uint64_t base = type;
    for (int i = 0; i < MAX_BASES && base; i++) {
        for (size_t k = 0; k < rt->nknown; k++)
            if (rt->known[k].type == base && rt->known[k].family != PY_F_OBJECT)
                return rt->known[k].family;
        enum py_family f = named_family_of(o, base, ty);
        if (f != PY_F_OTHER)
            return f;
        if (cl_read_u64(rt->t, base + rt->l->tp_base, &base) != 0)
            break;
    }
    return flags & PY_TPFLAGS_BASE_EXC_SUBCLASS ? PY_F_EXCEPTION : PY_F_OTHER;
}

bool py_type_derives_from(struct py_objects *o, uint64_t type, uint64_t base)
{
    for (int i = 0; i < MAX_BASES && type && base; i++) {
        if (type == base)
            return true;
        if (cl_read_u64(o->rt->t, type + o->rt->l->tp_base, &type) != 0)
            break;
    }
    return false;
}

/* A type object is an object whose own type is `type` or a subclass of it (a metaclass). */
static bool is_type_object(struct py_objects *o, uint64_t addr)
{
    struct py_runtime *rt = o->rt;
    uint64_t meta = 0, flags;
    if (cl_read_u64(rt->t, addr + rt->l->ob_type, &meta) != 0 || !meta)
        return false;
    if (meta == rt->family_type[PY_F_TYPE])
        return true;
    uint64_t metameta;
    return cl_read_u64(rt->t, meta + rt->l->tp_flags, &flags) == 0 &&
           (flags & PY_TPFLAGS_TYPE_SUBCLASS) &&
           cl_read_u64(rt->t, meta + rt->l->ob_type, &metameta) == 0 &&
           (metameta == rt->family_type[PY_F_TYPE] || metameta == meta);
}

struct py_type *py_type_at(struct py_objects *o, uint64_t addr)
{
    struct py_type **recent = &o->recent_types[(addr >> 4 ^ addr >> 10) % PY_RECENT_TYPES];
    struct py_type *hit = *recent;
    if (hit && hit->addr == addr)
        return hit;
    uint32_t i = cl_addrmap_get(&o->type_index, addr);
    if (i != UINT32_MAX)
        return *recent = o->types[i];
    if (!addr || (addr & 7) || !is_type_object(o, addr))
        return NULL;
    const struct py_layout *l = o->rt->l;
    struct cl_target *t = o->rt->t;
    struct py_type ty = {.addr = addr, .nslots = -1, .nn_module = -1, .real_size = -1};
    uint64_t np = 0;
    if (cl_read_u64(t, addr + l->tp_flags, &ty.flags) || cl_read_u64(t, addr + l->tp_name, &np) ||
        cl_read(t, addr + l->tp_basicsize, &ty.basicsize, sizeof ty.basicsize) ||
        cl_read(t, addr + l->tp_itemsize, &ty.itemsize, sizeof ty.itemsize) ||
        cl_read(t, addr + l->tp_dictoffset, &ty.dictoffset, sizeof ty.dictoffset) ||
        cl_read(t, addr + l->tp_weaklistoffset, &ty.weaklistoffset, sizeof ty.weaklistoffset) ||
        cl_read_u64(t, addr + l->tp_members, &ty.members) ||
        cl_read_u64(t, addr + l->tp_dict, &ty.dict))
        return NULL;
    if (ty.basicsize < 16 || ty.basicsize > (1 << 20) || ty.itemsize < 0 || ty.itemsize > (1 << 16))
        return NULL;
    read_name(t, np, ty.name, sizeof ty.name);
    ty.heap = (ty.flags & PY_TPFLAGS_HEAPTYPE) != 0;
    ty.family = family_of(o, addr, ty.flags, &ty);
    ty.odict = ty.family == PY_F_DICT && py_type_derives_from(o, addr, o->rt->odict_type);
    if (ty.family == PY_F_DICT) /* a C subclass's own fields, read beside its items */
        ty.fixed = py_fixed_dict_fields(ty.name, o->rt->l->minor, ty.basicsize);
    struct py_type *copy =
        CL_VEC_RESERVE(o->types, o->ntypes, o->cap) ? malloc(sizeof *copy) : NULL;
    bool inserted;
    if (!copy ||
        cl_addrmap_put(&o->type_index, addr, (uint32_t)o->ntypes, &inserted) == UINT32_MAX) {
        free(copy);
        o->oom++;
        return NULL;
    }
    ty.index = (uint32_t)o->ntypes;
    *copy = ty;
    o->types[o->ntypes++] = copy;
    return copy;
}

struct py_type *py_object_header(struct py_objects *o, uint64_t addr, uint64_t *refcnt)
{
    uint64_t header[2];   /* ob_refcnt, then ob_type: every version's PyObject */
    if (!addr || (addr & 7) || o->rt->l->ob_type != 8 ||
        cl_read(o->rt->t, addr, header, sizeof header) != 0)
        return NULL;
    *refcnt = header[0];
    return py_type_at(o, header[1]);
}

struct py_type *py_object_type(struct py_objects *o, uint64_t addr)
{
    uint64_t type;
    if (!addr || (addr & 7) || cl_read_u64(o->rt->t, addr + o->rt->l->ob_type, &type) != 0)
        return NULL;
    return py_type_at(o, type);
}

struct py_type *py_held_object_type(struct py_objects *o, uint64_t addr)
{
    return addr && cl_target_holds_range(o->rt->t, addr, 16) ? py_object_type(o, addr) : NULL;
}

#define T_OBJECT 6
#define T_OBJECT_EX 16
#define PY_RELATIVE_OFFSET 8
#define MAX_SLOTS 256

const struct py_member *py_type_slots(struct py_objects *o, struct py_type *ty, int *n)
{
    if (ty->nslots >= 0) {
        *n = ty->nslots;
        return ty->slots;
    }
    struct cl_target *t = o->rt->t;
    const struct py_layout *l = o->rt->l;
    ty->nslots = 0;
    size_t cap = 0;   /* of ty->slots, which starts empty */
    uint64_t base = ty->addr;
    for (int depth = 0; depth < MAX_BASES && base; depth++) {
        uint64_t members;
        if (cl_read_u64(t, base + l->tp_members, &members) != 0)
            break;
        /* PyMemberDef (its offsets in the layout table): name @0, type and flags ints, offset
         * a Py_ssize_t. */
        for (int i = 0; members && i < MAX_SLOTS; i++) {
            uint64_t md = members + (uint64_t)l->member_size * (unsigned)i, name, offset;
            int32_t type, flags;
            if (cl_read_u64(t, md, &name) != 0 || !name ||
                cl_read(t, md + l->member_type, &type, sizeof type) != 0 ||
                cl_read_u64(t, md + l->member_offset, &offset) != 0 ||
                cl_read(t, md + l->member_flags, &flags, sizeof flags) != 0)
                break;
            if ((type != T_OBJECT && type != T_OBJECT_EX) || (flags & PY_RELATIVE_OFFSET) ||
                offset < 16 || offset > (1u << 20))
                continue;
            char mname[16];
            read_name(t, name, mname, sizeof mname);
            if (strcmp(mname, "__weakref__") == 0 || strcmp(mname, "__dict__") == 0)
                continue; /* weak, or handled as the instance dict */
            bool dup = false;
            for (int j = 0; j < ty->nslots && !dup; j++)
                dup = ty->slots[j].offset == offset;
            if (dup)
                continue;
            if (!CL_VEC_RESERVE(ty->slots, (size_t)ty->nslots, cap)) {
                o->oom++;
                continue;
            }
            ty->slots[ty->nslots++] = (struct py_member){offset, name};
        }
        if (cl_read_u64(t, base + l->tp_base, &base) != 0)
            break;
    }
    *n = ty->nslots;
    return ty->slots;
}

/* Appends code point cp as UTF-8. */
static size_t put_utf8(char *out, size_t room, uint32_t cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xc0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3f));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xe0 | cp >> 12);
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[2] = (char)(0x80 | (cp & 0x3f));
        n = 3;
    } else {
        b[0] = (char)(0xf0 | (cp >> 18 & 0x07));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[3] = (char)(0x80 | (cp & 0x3f));
        n = 4;
    }
    if (n > room)
        return 0;
    memcpy(out, b, n);
    return n;
}

/* What a str's header says of its characters. */
struct str_header {
    uint64_t length; /* code points */
    unsigned kind; /* bytes a code point: 1, 2 or 4 */
    uint32_t data_offset; /* where they start in the object (compact), or 0: apart (legacy) */
    bool interned; /* state.interned (its low two bits, 3.9-3.14): a name, as a rule */
};

/* False for a length or kind no str has, and for a not-ready (wstr-only) legacy str: rare, not
 * decoded. */
static bool str_header(struct py_objects *o, uint64_t addr, struct str_header *s)
{
    const struct py_layout *l = o->rt->l;
    int64_t length;
    uint32_t state;
    if (cl_read(o->rt->t, addr + l->str_length, &length, sizeof length) ||
        cl_read_u32(o->rt->t, addr + l->str_state, &state) || length < 0 || length >= 1ll << 40)
        return false;
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (kind != 1 && kind != 2 && kind != 4)
        return false;
    *s = (struct str_header){(uint64_t)length, kind,
                             compact ? (ascii ? l->ascii_data : l->compact_data) : 0,
                             (state & 3) != 0};
    return true;
}

bool py_text_range(struct py_objects *o, uint64_t addr, uint64_t *start, uint64_t *len)
{
    const struct py_type *ty = py_object_type(o, addr);
    const struct py_layout *l = o->rt->l;
    struct str_header s;
    int64_t size;
    if (ty && ty->family == PY_F_BYTES &&
        !cl_read(o->rt->t, addr + l->ob_size, &size, sizeof size) && size > 0 && size < 1ll << 40) {
        *start = addr + l->bytes_data;
        *len = (uint64_t)size;
        return true;
    }
    if (!ty || ty->family != PY_F_STR || !str_header(o, addr, &s) || s.interned || !s.length)
        return false;
    *start = addr + s.data_offset;
    if (!s.data_offset && cl_read_u64(o->rt->t, addr + l->unicode_legacy_data, start))
        return false;
    *len = s.length * s.kind;
    return true;
}

uint64_t py_str_chars(struct py_objects *o, uint64_t addr)
{
    const struct py_type *ty = py_object_type(o, addr);
    struct str_header s;
    return ty && ty->family == PY_F_STR && str_header(o, addr, &s) && s.data_offset
               ? addr + s.data_offset
               : 0;
}

bool py_str_read(struct py_objects *o, uint64_t addr, char *out, size_t cap)
{
    const struct py_type *ty = py_object_type(o, addr);
    const struct py_layout *l = o->rt->l;
    struct cl_target *t = o->rt->t;
    if (!ty || ty->family != PY_F_STR || cap == 0)
        return false;
    struct str_header s;
    if (!str_header(o, addr, &s))
        return false;
    size_t length = (size_t)s.length, kind = s.kind;
    uint64_t data = addr + s.data_offset;
    if (!s.data_offset && cl_read_u64(t, addr + l->unicode_legacy_data, &data))
        return false;
    /* Each code point takes at least one byte of out: read no more than fit. */
    size_t w = 0, limit = length < cap - 1 ? length : cap - 1;
    if (limit > 4096)
        limit = 4096;
    unsigned char buf[4096 * 4];
    if (cl_read(t, data, buf, limit * kind))
        return false;
    /* a dump made with --redact: its characters were left out (cpython/redact.h) */
    if (t->redacted && limit && !s.interned && cl_all_zero(buf, limit * kind)) {
        char said[64];
        snprintf(said, sizeof said, "<redacted: %llu characters>", (unsigned long long)s.length);
        size_t n = strlen(said) < cap - 1 ? strlen(said) : cap - 1;
        memcpy(out, said, n);
        out[n] = '\0';
        return true;
    }
    for (size_t i = 0; i < limit; i++) {
        uint32_t cp;
        if (kind == 1) {
            cp = buf[i];
        } else if (kind == 2) {
            uint16_t u;
            memcpy(&u, buf + sizeof u * i, sizeof u);
            cp = u;
        } else {
            memcpy(&cp, buf + sizeof cp * i, sizeof cp);
        }
        size_t n = put_utf8(out + w, cap - 1 - w, cp);
        if (!n)
            break;
        w += n;
    }
    out[w] = '\0';
    return true;
}

bool py_int_read(struct py_objects *o, uint64_t addr, int64_t *value)
{
    const struct py_type *ty = py_object_type(o, addr);
    struct cl_target *t = o->rt->t;
    int64_t head;
    const struct py_layout *l = o->rt->l;
    if (!ty || ty->family != PY_F_INT || cl_read(t, addr + l->ob_size, &head, sizeof head))
        return false;
    uint64_t ndigits;
    int64_t sign;
    if (l->long_tagged) {
        ndigits = (uint64_t)head >> 3;
        sign = 1 - (head & 3);
    } else {
        ndigits = py_ob_size_magnitude(head);
        sign = head < 0 ? -1 : head > 0;
    }
    if (ndigits > 2)
        return false; /* beyond 60 bits: not an index culeak prints */
    uint32_t d[2] = {0, 0};
    if (ndigits && cl_read(t, addr + l->long_digits, d, (size_t)ndigits * sizeof *d))
        return false;
    int64_t v = (int64_t)d[0] | (int64_t)d[1] << 30;
    *value = sign < 0 ? -v : v;
    return true;
}

uint64_t py_object_size(struct py_objects *o, uint64_t addr, const struct py_type *ty)
{
    uint64_t size = (uint64_t)ty->basicsize;
    int64_t n;
    struct str_header s;
    if (ty->family == PY_F_STR) /* its characters follow a compact str's header */
        return str_header(o, addr, &s) && s.data_offset ? s.data_offset + (s.length + 1) * s.kind
                                                        : size;
    if (ty->itemsize && cl_read(o->rt->t, addr + o->rt->l->ob_size, &n, sizeof n) == 0) {
        if (ty->family == PY_F_INT && o->rt->l->long_tagged)
            n = (int64_t)((uint64_t)n >> 3);
        uint64_t items = py_ob_size_magnitude(n);
        if (items < (1 << 28))
            size += items * (uint64_t)ty->itemsize;
    }
    return size;
}
