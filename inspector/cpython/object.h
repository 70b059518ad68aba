/* Reading objects: validating that an address holds an object, what its type is (cached per
 * type), and decoding the small values paths are made of (str, int). */
#ifndef CULEAK_CPYTHON_OBJECT_H
#define CULEAK_CPYTHON_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/runtime.h"
#include "target/target.h"
#include "util/addrmap.h"

/* An object-typed member (a __slots__ slot or a C struct member) of instances of a type. */
struct py_member {
    uint64_t offset;
    uint64_t name;             /* C string in the target */
};

struct py_type {
    uint64_t addr;
    uint32_t index;            /* in py_objects.types */
    uint64_t flags;
    int64_t basicsize, itemsize, dictoffset, weaklistoffset;
    uint64_t members;          /* tp_members */
    uint64_t dict;             /* tp_dict */
    enum py_family family;     /* of the nearest builtin base */
    const struct py_fixed_type *fixed; /* PY_F_FIXED: that base's fields; PY_F_DICT: a C
                                          subclass's own (fixed_types.h), or NULL */
    const struct py_type_reader *reader; /* PY_F_READER: the library's reader of that base */
    bool heap;
    bool odict;                /* PY_F_DICT: collections.OrderedDict or a subclass */
    char name[80];             /* tp_name, truncated */
    struct py_member *slots;   /* object members along the base chain, computed on first use */
    int nslots;                /* -1 until computed */
    int8_t nn_module;          /* derives from torch.nn.Module: -1 until known, then 0 or 1 */
    bool opaque_known;         /* opaque_mask computed (cpython/heap.c) */
    int16_t real_size;         /* a struct sequence's fields, hidden ones too (n_fields);
                                  0: not one; -1 until known */
    uint64_t opaque_mask;      /* the words of its instances no reader reads, bit k at 8k */
};

#define PY_SHARED_KEYS_KEPT 64 /* 3.11+ share at most 30 keys (SHARED_KEYS_MAX_SIZE) */

#define PY_RECENT_TYPES 64

struct py_objects {
    struct py_runtime *rt;
    struct cl_addrmap type_index;
    struct py_type **types; /* individually allocated: pointers stay valid as types are added */
    size_t ntypes, cap;
    /* Types last looked up, by a hash of their address: a walk meets a few types' objects in
     * turn (an instance, its dict's str keys and int values), more than one slot kept hits. */
    struct py_type *recent_types[PY_RECENT_TYPES];
    /* Containers the graph walk could not read the contents of (a list's item array, a dict's
     * entries, a frame's locals: PY_F_FRAME also counts the frames of threads' stacks), by
     * family: what they hold is missing from the graph, so the walk says so
     * (py_emit_skipped counts, py_referents_note_skipped says). */
    uint64_t unreadable[PY_F_COUNT];
    /* What reads a library's slot of co_extra (cpython/emit.h), or NULL. */
    const struct py_code_extra_reader *code_extra;
    /* Libraries' readers of their C types (cpython/emit.h), by name. */
    const struct py_type_reader *type_readers;
    size_t ntype_readers;
    /* Allocations that failed here (a type not cached, a slot not recorded): each makes the
     * graph miss something, so the walk that uses these says so (py_heap_build's warnings). */
    uint64_t oom;
    /* The last shared keys table of a split dict or of instances' values read (referents.c):
     * instances of one class share one, and the walk meets them in a row. The memory a walk
     * reads does not change under it, so the keys stay valid; addr is 0 when none is kept. */
    struct {
        uint64_t addr;
        uint32_t n;
        uint64_t key[PY_SHARED_KEYS_KEPT];
    } shared_keys;
};

void py_objects_init(struct py_objects *o, struct py_runtime *rt);
void py_objects_free(struct py_objects *o);

/* The pointer at addr, or 0 when it is NULL or unreadable (cl_read_ptr_or_0 on o's target): the
 * walkers' one reading policy for pointer fields. */
static inline uint64_t py_word(const struct py_objects *o, uint64_t addr)
{
    return cl_read_ptr_or_0(o->rt->t, addr);
}

/* The type of the object at addr, or NULL if addr does not hold a valid object header. */
struct py_type *py_object_type(struct py_objects *o, uint64_t addr);
/* The same for a reader not sure addr is an object (a pointer read from a C++ structure): NULL
 * also where the target does not hold its header (cl_target_holds_range), as a dump an older
 * culeak wrote may not. */
struct py_type *py_held_object_type(struct py_objects *o, uint64_t addr);
/* The same, with the header's reference count word in *refcnt: one read of the header. */
struct py_type *py_object_header(struct py_objects *o, uint64_t addr, uint64_t *refcnt);
/* Type info for a type object, or NULL if addr is not one. */
struct py_type *py_type_at(struct py_objects *o, uint64_t addr);

/* Whether the type at type is base or derives from it (along tp_base). */
bool py_type_derives_from(struct py_objects *o, uint64_t type, uint64_t base);
/* The object members of a type's instances (T_OBJECT / T_OBJECT_EX along tp_base). */
const struct py_member *py_type_slots(struct py_objects *o, struct py_type *ty, int *n);

/* A str's text as UTF-8 (non-ASCII code points encoded; truncated to cap-1 bytes). False if addr
 * is not a readable str. */
bool py_str_read(struct py_objects *o, uint64_t addr, char *out, size_t cap);
/* Where a compact str's characters start (what PyUnicode_AsUTF8 returns for an ASCII one); 0
 * for another object, or a str whose characters lie apart. */
uint64_t py_str_chars(struct py_objects *o, uint64_t addr);
/* Where the characters of a str (unless interned: a name) or the bytes of a bytes object lie,
 * for `culeak dump --redact` (cpython/redact.h); false for any other object. */
bool py_text_range(struct py_objects *o, uint64_t addr, uint64_t *start, uint64_t *len);
/* An int's value when it fits in 64 bits. */
bool py_int_read(struct py_objects *o, uint64_t addr, int64_t *value);
/* |ob_size| without overflow: a corrupt ob_size may be INT64_MIN. */
static inline uint64_t py_ob_size_magnitude(int64_t n)
{
    return n < 0 ? 0 - (uint64_t)n : (uint64_t)n;
}
/* The shallow size of an object (basicsize + items), like sys.getsizeof without the GC header. */
uint64_t py_object_size(struct py_objects *o, uint64_t addr, const struct py_type *ty);

#endif
