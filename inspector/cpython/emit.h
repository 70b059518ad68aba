/* What the referent readers (cpython/referents.c, cpython/frames.c) give each strong reference
 * they find to: an emitter, which is an object reader and a sink. They read through the reader and
 * know nothing of what the sink does with an edge: the heap builder (cpython/heap.c) records it in
 * the object graph, a lookup that builds nothing (a thread's name) looks at it and drops it. So the
 * readers depend on the object model alone, and the heap on them, never the other way round. */
#ifndef CULEAK_CPYTHON_EMIT_H
#define CULEAK_CPYTHON_EMIT_H

#include <stdint.h>

#include "cpython/object.h"

/* How an edge is printed; the payload's meaning depends on the kind. */
enum py_edge {
    PY_E_SELF,        /* the root itself: prints nothing */
    PY_E_NAMED,       /* payload: a static C string of culeak's, e.g. ".__closure__" */
    PY_E_ATTR,        /* payload: a str object; prints ".name" */
    PY_E_CATTR,       /* payload: a C string in the target (a PyMemberDef name); ".name" */
    PY_E_KEY,         /* payload: the key object; prints "['k']", "[3]" */
    PY_E_INDEX,       /* payload: the index; prints "[i]" */
    PY_E_FRAMELOCAL,  /* payload: a str object; prints ".f_locals['name']" */
    PY_E_GENLOCAL,    /* payload: a str object; prints ".gi_frame.f_locals['name']" */
    PY_E_DICTKEY,     /* a dict key as such; prints "[*d][i]", its position in the dict */
    PY_E_SETITEM,     /* payload: the item's position in iteration order; prints "[*s][i]" */
    PY_E_CXX,         /* an edge through C++ (the autograd graph); payload: a C string owned by
                         whoever built the edge, printed as is (" → AddBackward0", ".grad") */
    PY_E_HIDDEN,      /* a step that prints nothing (a tensor to its TensorImpl) */
    PY_E_STACK,       /* a frame's evaluation stack entry; payload: its depth, plus
                         PY_STACK_GENERATOR for a generator's, PY_STACK_INFERRED for one read
                         above a stack pointer the frame did not save; prints ".<stack[i]>"
                         (".<stack[i]?>" when inferred) */
    PY_E_BOOKS,       /* a reference the books count that is no edge: its target is named
                         another way (an lru cache's ring of links, which its dict names) */
};

/* Or'd into an edge's kind by a reader, for the balance (cpython/balance.h): a reference that
 * holds no count of its own, a name only (a cell's content named through its frame, whose count
 * the cell holds; a frame's slot read from a context that does not own the frame; a 3.14
 * borrowed stack reference). */
#define PY_E_UNCOUNTED 0x80
/* Or'd likewise: a counted reference that is no step of a path (a running frame's function and
 * code: naming through them would name nothing a user wrote). */
#define PY_E_COUNT_ONLY 0x40
/* Or'd likewise: a word that may be a reference, read where a frame did not say how deep its
 * stack is; the sink keeps it apart, for the balance to confirm (cpython/balance.h), and makes
 * no node of it. */
#define PY_E_INFERRED 0x20
/* Or'd likewise: a reference the collector's traverse does not visit, nor gc.collect() follow
 * (3.13+: an object's materialized __dict__ while its inline values are valid, and that dict's
 * values, which the object visits); one that holds a count is from outside, to gc. */
#define PY_E_UNTRAVERSED 0x10
#define PY_E_KIND_MASK 0x0f
_Static_assert(PY_E_BOOKS <= PY_E_KIND_MASK, "edge kinds fit below the flags");

#define PY_STACK_GENERATOR (1ull << 32)
#define PY_STACK_INFERRED (1ull << 33)

/* The label of a class edge, a PY_E_NAMED payload. */
extern const char py_class_label[];

/* What a sink does with what the readers find. Only edge is required. */
struct py_emit_ops {
    void (*edge)(void *sink, uint64_t dst, enum py_edge edge, uint64_t payload);
    /* the object's class (.__class__); NULL: an edge to ty->addr like any other */
    void (*klass)(void *sink, const struct py_type *ty);
    /* dst will be emitted soon: start loading what edge() looks up first; NULL: nothing */
    void (*prefetch)(void *sink, uint64_t dst);
    /* something of family whose contents could not be read; NULL: not counted */
    void (*skipped)(void *sink, enum py_family family);
};

struct py_emitter {
    struct py_objects *o;     /* what the readers read through */
    const struct py_emit_ops *ops;
    void *sink;
};

static inline void py_emit(const struct py_emitter *e, uint64_t dst, enum py_edge edge,
                           uint64_t payload)
{
    e->ops->edge(e->sink, dst, edge, payload);
}

static inline void py_emit_class(const struct py_emitter *e, const struct py_type *ty)
{
    if (e->ops->klass)
        e->ops->klass(e->sink, ty);
    else
        e->ops->edge(e->sink, ty->addr, PY_E_NAMED, (uint64_t)(uintptr_t)py_class_label);
}

static inline void py_emit_prefetch(const struct py_emitter *e, uint64_t dst)
{
    if (e->ops->prefetch)
        e->ops->prefetch(e->sink, dst);
}

/* A library that keeps objects in a slot of code objects' co_extra (torch.compile's cache): the
 * walk hands it every code object whose co_extra is set, and it emits what its slot holds as the
 * code object's references, which is what the slot's free function drops with the code. */
struct py_code_extra_reader {
    void (*emit)(void *ctx, const struct py_emitter *e, uint64_t code, uint64_t co_extra);
    void *ctx;
};

/* A library's reader of one of its C types (torch's CapturedTraceback), whose references lie past
 * its object, in C++: the walk hands it every object of the type named tp_name, with the
 * basicsize given, and it emits the object's references. */
struct py_type_reader {
    const char *tp_name;
    int64_t basicsize;
    void (*emit)(void *ctx, const struct py_emitter *e, uint64_t obj);
    void *ctx;
};

/* Counts a container of family whose contents could not be read, so that the walk can say what
 * it skipped (py_referents_note_skipped). */
static inline void py_emit_skipped(const struct py_emitter *e, enum py_family family)
{
    if (e->ops->skipped)
        e->ops->skipped(e->sink, family);
}

#endif
