/* Frames: the named locals of a frame (cells unwrapped to their contents) and a frame's
 * description for root names. 3.9/3.10 frames are PyFrameObjects; 3.11+ frames are
 * _PyInterpreterFrames living on thread data stacks, in generators or in frame objects. */
#include <stdlib.h>
#include <string.h>

#include "cpython/emit.h"
#include "cpython/frames.h"
#include "cpython/linetable.h"

#define MAX_LINETABLE (1u << 20)

#define MAX_LOCALS 65536
#define CO_FAST_CELL 0x40
#define CO_FAST_FREE 0x80

#define MAX_FRAME_SLOTS 4096   /* locals of one frame culeak reports; frames have few */

/* The object a frame slot refers to, or 0; *borrowed when the slot holds no count of it. 3.14's
 * slots are _PyStackRefs: a tagged int is no object, the tag bits are not part of the pointer
 * (NULL reads as a bare tag), and Py_TAG_REFCNT marks a borrowed (or immortal) reference. */
static uint64_t slot_ref(struct py_objects *o, uint64_t addr, bool *borrowed)
{
    uint64_t bits = py_word(o, addr), mask = o->rt->l->stackref_tag_mask;
    *borrowed = false;
    if (mask && (bits & mask) == mask)
        return 0;
    *borrowed = (bits & mask) != 0;
    return bits & ~mask;
}

static uint64_t slot_object(struct py_objects *o, uint64_t addr)
{
    bool borrowed;
    return slot_ref(o, addr, &borrowed);
}

/* A frame's code object in *code (0 for frames that are not Python code: 3.12+ shim frames,
 * 3.14's interpreter entry frames, a code slot that holds no code object); false when the frame
 * or what its code slot points at cannot be read. */
static bool frame_code_of(struct py_objects *o, uint64_t frame, uint64_t *code)
{
    const struct py_layout *l = o->rt->l;
    struct cl_target *t = o->rt->t;
    uint64_t slot, type;
    *code = 0;
    if (l->if_owner != PY_NONE && l->frames != PY_FRAMES_OBJECTS) {
        uint8_t owner;
        if (cl_read(t, frame + l->if_owner, &owner, sizeof owner))
            return false;
        if (owner == l->owner_cstack || owner == l->owner_interpreter)
            return true;
    }
    uint16_t at = l->frames == PY_FRAMES_OBJECTS ? l->f_code : l->if_code;
    if (cl_read_u64(t, frame + at, &slot))
        return false;
    uint64_t c = l->frames == PY_FRAMES_OBJECTS ? slot : slot_object(o, frame + at);
    if (c && cl_read_u64(t, c + l->ob_type, &type))
        return false;   /* a pointer into memory that is not there */
    const struct py_type *ty = c ? py_object_type(o, c) : NULL;
    *code = ty && ty->family == PY_F_CODE ? c : 0;
    return true;
}

uint64_t py_frame_code(struct py_objects *o, uint64_t frame)
{
    uint64_t code;
    return frame_code_of(o, frame, &code) ? code : 0;
}

uint64_t py_frame_function(struct py_objects *o, uint64_t frame)
{
    const struct py_layout *l = o->rt->l;
    return l->frames == PY_FRAMES_OBJECTS || l->if_funcobj == PY_NONE
               ? 0
               : slot_object(o, frame + l->if_funcobj);
}

uint64_t py_frame_globals(struct py_objects *o, uint64_t frame)
{
    const struct py_layout *l = o->rt->l;
    return py_word(o, frame + (l->frames == PY_FRAMES_OBJECTS ? l->f_globals : l->if_globals));
}

static int64_t tuple_len(struct py_objects *o, uint64_t tuple)
{
    int64_t n = 0;
    const struct py_type *ty = tuple ? py_object_type(o, tuple) : NULL;
    if (!ty || ty->family != PY_F_TUPLE ||
        cl_read(o->rt->t, tuple + o->rt->l->ob_size, &n, sizeof n) || n < 0 || n > MAX_LOCALS)
        return 0;
    return n;
}

static uint64_t tuple_item(struct py_objects *o, uint64_t tuple, int64_t i)
{
    return py_word(o, tuple + o->rt->l->tuple_items + 8 * (uint64_t)i);
}

/* Locals i of a frame: its value, name and whether the slot holds a cell. */
struct slot {
    uint64_t value, name;
    bool cell, borrowed;
};

/* The frame's named locals into out (at most cap): how many were read. *whole is false when some
 * or all cannot be read (their count, names, kinds or slots). */
static int64_t frame_slots(struct py_objects *o, uint64_t frame, uint64_t code, struct slot *out,
                           int64_t cap, bool *whole)
{
    const struct py_layout *l = o->rt->l;
    struct cl_target *t = o->rt->t;
    int64_t n = 0;
    *whole = false;
    if (l->frames == PY_FRAMES_OBJECTS) {
        int32_t nlocals;
        uint64_t vars = py_word(o, code + l->co_varnames);
        uint64_t cells = py_word(o, code + l->co_cellvars),
                 frees = py_word(o, code + l->co_freevars);
        if (cl_read(t, code + l->co_nlocals, &nlocals, sizeof nlocals) || nlocals < 0 ||
            nlocals > MAX_LOCALS)
            return 0;
        int64_t nc = tuple_len(o, cells), nf = tuple_len(o, frees);
        for (int64_t i = 0; i < nlocals + nc + nf && n < cap; i++, n++) {
            out[n].name = i < nlocals        ? tuple_item(o, vars, i)
                          : i < nlocals + nc ? tuple_item(o, cells, i - nlocals)
                                             : tuple_item(o, frees, i - nlocals - nc);
            out[n].cell = i >= nlocals;
            out[n].borrowed = false;
            if (cl_read_u64(t, frame + l->f_localsplus + 8 * (uint64_t)i, &out[n].value))
                return n;
        }
        *whole = true;
        return n;
    }
    int32_t count;
    uint64_t names = py_word(o, code + l->co_localsplusnames);
    uint64_t kinds = py_word(o, code + l->co_localspluskinds);
    if (cl_read(t, code + l->co_nlocalsplus, &count, sizeof count) || count < 0 ||
        count > MAX_LOCALS || count > tuple_len(o, names))
        return 0;
    unsigned char kind[256];
    for (int64_t i = 0; i < count && n < cap; i++, n++) {
        if (i % 256 == 0 && cl_read(t, kinds + l->bytes_data + (uint64_t)i, kind,
                                    count - i < 256 ? (size_t)(count - i) : 256) != 0)
            return n;
        uint64_t at = frame + l->if_localsplus + 8 * (uint64_t)i, bits;
        if (cl_read_u64(t, at, &bits))
            return n;
        out[n].name = tuple_item(o, names, i);
        out[n].cell = (kind[i % 256] & (CO_FAST_CELL | CO_FAST_FREE)) != 0;
        out[n].value = slot_ref(o, at, &out[n].borrowed);
    }
    *whole = true;
    return n;
}

enum py_frame_kind py_frame_kind(struct py_objects *o, uint64_t frame)
{
    uint64_t code;
    if (!frame_code_of(o, frame, &code))
        return PY_FRAME_UNREADABLE;
    return code ? PY_FRAME_CODE : PY_FRAME_NOT_CODE;
}

/* Whether the context a frame is read from (edge: a thread's root, a generator, a frame object)
 * holds the counts of the frame's slots: the frame's owner does (balance.c's rules). */
static bool frame_owned_by(struct py_objects *o, uint64_t frame, enum py_edge edge)
{
    const struct py_layout *l = o->rt->l;
    if (l->frames == PY_FRAMES_OBJECTS)   /* 3.9/3.10: the frame object */
        return edge != PY_E_ATTR;
    uint8_t owner;
    if (cl_read(o->rt->t, frame + l->if_owner, &owner, sizeof owner))
        return false;
    switch (edge) {
    case PY_E_GENLOCAL: return owner == l->owner_generator;
    case PY_E_FRAMELOCAL: return owner == l->owner_frame_object;
    default: return owner != l->owner_generator && owner != l->owner_frame_object;
    }
}

/* Where a frame's evaluation stack starts, how deep it may go (co_stacksize) and how deep it is:
 * -1 when the frame did not save its stack pointer (it is running: a C function on 3.11-3.13,
 * anything on 3.9/3.10). False when the frame cannot be read. nslots: its locals and cells. */
static bool stack_extent(struct py_objects *o, uint64_t frame, uint64_t code, int64_t nslots,
                         uint64_t *base, int64_t *size, int64_t *depth)
{
    const struct py_layout *l = o->rt->l;
    struct cl_target *t = o->rt->t;
    int32_t stacksize;
    if (cl_read(t, code + l->co_stacksize, &stacksize, 4) || stacksize < 0 ||
        stacksize > MAX_LOCALS)
        return false;
    *size = stacksize;
    *depth = -1;
    if (l->frames == PY_FRAMES_OBJECTS) {
        *base = py_word(o, frame + l->f_valuestack);
        if (l->f_stackdepth != PY_NONE) {
            int32_t d;
            if (cl_read(t, frame + l->f_stackdepth, &d, sizeof d))
                return false;
            *depth = d;
        } else {
            uint64_t top = py_word(o, frame + l->f_stacktop);
            *depth =
                top && top >= *base && (top - *base) % 8 == 0 ? (int64_t)(top - *base) / 8 : -1;
        }
    } else {
        *base = frame + l->if_localsplus + 8 * (uint64_t)nslots;
        if (l->if_stackpointer != PY_NONE) {
            uint64_t sp = py_word(o, frame + l->if_stackpointer);
            *depth = sp >= *base && (sp - *base) % 8 == 0 ? (int64_t)(sp - *base) / 8 : -1;
        } else {
            int32_t top;
            if (cl_read(t, frame + l->if_stacktop, &top, sizeof top))
                return false;
            *depth = top >= nslots ? top - nslots : -1;
        }
    }
    if (*depth > *size)
        *depth = -1;   /* not a depth this code can reach: not to be trusted */
    return *base != 0;
}

/* The entries of a frame's evaluation stack: up to the depth the frame saved (a call, a yield,
 * 3.14's C calls), each a reference counted by the frame's owner (count) unless borrowed. A
 * thread's frame that saved none is running: each word of its stack's whole extent may be a
 * reference or stale, so it is sent inferred, for the balance to confirm. */
static void frame_stack(struct py_emitter *e, uint64_t frame, uint64_t code, int64_t nslots,
                        enum py_edge edge, uint8_t count)
{
    struct py_objects *o = e->o;
    uint64_t base, gen = edge == PY_E_GENLOCAL ? PY_STACK_GENERATOR : 0;
    int64_t size, depth;
    if (!stack_extent(o, frame, code, nslots, &base, &size, &depth))
        return;
    bool inferred = depth < 0;
    if (inferred && edge != PY_E_ATTR)
        return;   /* a generator or frame object running: its thread's root reads it */
    for (int64_t i = 0; i < (inferred ? size : depth); i++) {
        bool borrowed;
        uint64_t v = slot_ref(o, base + 8 * (uint64_t)i, &borrowed);
        if (!v)
            continue;
        if (inferred)
            py_emit(e, v, PY_E_STACK | PY_E_INFERRED, (uint64_t)i | PY_STACK_INFERRED);
        else
            py_emit(e, v, PY_E_STACK | (borrowed ? PY_E_UNCOUNTED : count), (uint64_t)i | gen);
    }
}

/* The references a 3.11+ frame holds besides its slots: its function, code, f_locals (class and
 * module bodies) and frame object. From a thread they are C references named after the frame;
 * from a generator or frame object, steps like any other. */
static void frame_fields(struct py_emitter *e, uint64_t frame, enum py_edge edge, uint8_t count)
{
    struct py_objects *o = e->o;
    const struct py_layout *l = o->rt->l;
    if (l->frames == PY_FRAMES_OBJECTS || count)
        return;   /* 3.9/3.10 frame objects read theirs; a context that does not own the frame */
    static const char *const names[] = {" (its function)", ".f_code", ".f_locals", ".gi_frame"};
    uint16_t at[] = {l->if_funcobj, l->if_code, l->if_locals, l->if_frame_obj};
    for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
        if (at[k] == PY_NONE || (k == 3 && edge != PY_E_GENLOCAL))
            continue;   /* a thread's or frame object's own frame object: below */
        uint64_t v = k < 2 ? slot_object(o, frame + at[k]) : py_word(o, frame + at[k]);
        if (v)
            py_emit(e, v, PY_E_NAMED | (edge == PY_E_ATTR ? PY_E_COUNT_ONLY : 0),
                    (uint64_t)(uintptr_t)names[k]);
    }
    uint64_t fo = py_word(o, frame + l->if_frame_obj);
    if (fo && edge == PY_E_ATTR)
        py_emit(e, fo, PY_E_SELF | PY_E_COUNT_ONLY, 0);
}

bool py_frame_locals(struct py_emitter *e, uint64_t frame, enum py_edge edge)
{
    struct py_objects *o = e->o;
    uint64_t code;
    if (!frame_code_of(o, frame, &code))
        return false;
    if (!code)
        return true;   /* no Python code: no locals */
    uint8_t count = frame_owned_by(o, frame, edge) ? 0 : PY_E_UNCOUNTED;
    if (o->rt->l->frames == PY_FRAMES_OBJECTS && edge == PY_E_ATTR)
        py_emit(e, frame, PY_E_SELF | PY_E_COUNT_ONLY, 0);   /* the C stack's reference */
    struct slot *slots = malloc(MAX_FRAME_SLOTS * sizeof *slots);
    if (!slots)
        return false;
    bool whole;
    int64_t n = frame_slots(o, frame, code, slots, MAX_FRAME_SLOTS, &whole);
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = slots[i].value;
        if (!v || !slots[i].name)
            continue;
        uint8_t slot_count = slots[i].borrowed ? PY_E_UNCOUNTED : count;
        if (slots[i].cell) {
            /* the frame holds the cell, named by its content */
            const struct py_type *ty = py_object_type(o, v);
            uint64_t cell = v;
            if (ty && ty->family == PY_F_CELL) {
                v = py_word(o, v + o->rt->l->cell_ref);
                if (v)   /* else an empty cell: the variable is unbound */
                    py_emit(e, v, edge | PY_E_UNCOUNTED, slots[i].name);
                if (!slot_count)   /* the cell itself: counted, named by the closures */
                    py_emit(e, cell, PY_E_HIDDEN | (edge == PY_E_ATTR ? PY_E_COUNT_ONLY : 0), 0);
                continue;
            }
        }
        py_emit(e, v, edge | slot_count, slots[i].name);
    }
    free(slots);
    frame_stack(e, frame, code, n, edge, count);
    frame_fields(e, frame, edge, count);
    return whole;
}

/* The line of the instruction at byte offset addr of code, or -1 when it cannot be told. */
static int code_line(struct py_objects *o, uint64_t code, uint64_t addr)
{
    const struct py_layout *l = o->rt->l;
    struct cl_target *t = o->rt->t;
    int32_t first;
    int64_t len;
    uint64_t table = py_word(o, code + l->co_linetable);
    if (cl_read(t, code + l->co_firstlineno, &first, sizeof first) || !table ||
        cl_read(t, table + l->ob_size, &len, sizeof len) || len < 0 ||
        (uint64_t)len > MAX_LINETABLE)
        return -1;
    uint8_t *bytes = malloc((size_t)len + 1);
    int line = -1;
    if (bytes && cl_read(t, table + l->bytes_data, bytes, (size_t)len) == 0)
        line = l->lines == PY_LINES_LNOTAB ? py_line_lnotab(bytes, (size_t)len, first, addr)
               : l->lines == PY_LINES_LINETABLE
                   ? py_line_linetable(bytes, (size_t)len, first, addr)
                   : py_line_locations(bytes, (size_t)len, first, addr);
    free(bytes);
    return line;
}

/* The line a frame is executing, or -1 when it cannot be told. */
static int frame_line(struct py_objects *o, uint64_t frame, uint64_t code)
{
    const struct py_layout *l = o->rt->l;
    if (l->lines == PY_LINES_LOCATIONS) {
        uint64_t instr = py_word(o, frame + l->if_instr), base = code + l->co_code_adaptive;
        return instr < base ? -1 : code_line(o, code, instr - base);
    }
    int32_t lasti;
    if (cl_read(o->rt->t, frame + l->f_lasti, &lasti, sizeof lasti) || lasti < 0)
        return -1;
    return code_line(o, code, (uint64_t)lasti * (l->lines == PY_LINES_LINETABLE ? 2 : 1));
}

bool py_code_locate(struct py_objects *o, uint64_t code, int64_t addr, struct py_code_location *out)
{
    const struct py_layout *l = o->rt->l;
    const struct py_type *ty = py_object_type(o, code);
    int32_t first;
    if (!ty || ty->family != PY_F_CODE ||
        !py_str_read(o, py_word(o, code + l->co_name), out->name, sizeof out->name) ||
        !py_str_read(o, py_word(o, code + l->co_filename), out->file, sizeof out->file) ||
        cl_read(o->rt->t, code + l->co_firstlineno, &first, sizeof first))
        return false;
    out->line = addr < 0 ? first : code_line(o, code, (uint64_t)addr);
    return true;
}

bool py_frame_describe(struct py_objects *o, uint64_t frame, char *out, size_t cap)
{
    const struct py_layout *l = o->rt->l;
    uint64_t code = py_frame_code(o, frame);
    char name[128], file[512];
    if (!code || !py_str_read(o, py_word(o, code + l->co_name), name, sizeof name))
        return false;
    if (!py_str_read(o, py_word(o, code + l->co_filename), file, sizeof file))
        strcpy(file, "?");
    const char *base = strrchr(file, '/');
    int line = frame_line(o, frame, code);
    if (line > 0)
        snprintf(out, cap, "%s() at %s:%d", name, base ? base + 1 : file, line);
    else
        snprintf(out, cap, "%s() at %s", name, base ? base + 1 : file);
    return true;
}

bool py_frame_file(struct py_objects *o, uint64_t frame, char *out, size_t cap)
{
    uint64_t code = py_frame_code(o, frame);
    return code && py_str_read(o, py_word(o, code + o->rt->l->co_filename), out, cap);
}
