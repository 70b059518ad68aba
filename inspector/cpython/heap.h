/* The object graph of a CPython heap: every object reachable from a root, each with the edge it
 * was first reached by in a multi-source breadth-first search (so following parents gives the
 * shortest chain from a root), then every GC-tracked object no root reaches. */
#ifndef CULEAK_CPYTHON_HEAP_H
#define CULEAK_CPYTHON_HEAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cpython/emit.h"
#include "cpython/object.h"
#include "cpython/pybind11_types.h"
#include "util/nodemap.h"

#define PY_NO_NODE UINT32_MAX


/* One step of a path: how an object refers to the next, and the object it lands on (0 for a
 * C++ step), which naming needs: a dict key's position, whether an object is an nn.Module. */
struct py_step {
    uint8_t edge;             /* enum py_edge */
    uint64_t payload;
    uint64_t obj;
};

/* What a root is, in the order its names are preferred (stable naming: a user's module globals
 * over a library's, over frame locals, over the rest). "User" code lies outside the standard
 * library and every site-packages/dist-packages. */
enum py_root_kind {
    PY_ROOT_USER_MODULE,
    PY_ROOT_LIBRARY_MODULE,
    PY_ROOT_USER_FRAME,
    PY_ROOT_LIBRARY_FRAME,
    PY_ROOT_OTHER,            /* exceptions, thread state, sys, builtins, gc.garbage */
};

#define PY_NO_EDGE UINT32_MAX

struct py_node {   /* 24 bytes: there is one per object of the target */
    uint64_t addr;
    uint32_t parent;          /* PY_NO_NODE for a root's own referents */
    uint32_t root;            /* index into roots, or PY_NO_NODE for unreachable objects */
    uint32_t type : 31;       /* index into objects.types (py_node_type) */
    uint32_t tracked : 1;     /* on a GC list (_gc_next != 0) */
    uint32_t via;             /* the edge that found it: into root_edges when parent is
                                 PY_NO_NODE, else an edge id (py_node_edge); PY_NO_EDGE for
                                 none */
};

/* Node i's edges: the recorded ones, ids [first, the next node's first), then its class edge
 * (.__class__) to class_dst, PY_NO_NODE for none. Side by side, so that a search over the
 * graph finds both in one cache line. */
struct py_node_edges {
    uint32_t first, class_dst;
};

/* Every reference between nodes, grouped by source. A node's class edge is not recorded: every
 * object has one, to its type's node, so keeping its target beside the node's first edge saves
 * 9 of its 13 bytes, a seventh of the graph's memory. Its id is n + i for node i, n the recorded
 * edges' count; py_edge_ids ids in all. The accessors below answer for both kinds. Recorded
 * edges are kept as parallel arrays (13 bytes an edge) since a heap has several per object. */
struct py_edges {
    struct py_node_edges *of; /* by node: n + 1 entries once the build is done */
    uint32_t *dst;
    uint64_t *payload;
    uint8_t *kind;            /* enum py_edge */
    size_t n, cap;
    uint32_t *by_dst;         /* edge ids, class edges too, by dst: built by py_heap_paths */
    uint32_t *by_dst_first;   /* by node: where the ids of edges into it start in by_dst */
};

/* A reference straight out of a root (a frame's local, a module root's module and dict).
 * Counted when it is a reference the root itself holds (a frame's slot); a module root's edges
 * name references sys.modules and the module hold, which the walk counts there. */
struct py_root_edge {
    uint32_t root, dst;
    struct py_step step;
    bool counted;
};

/* A reference the interpreter's C state holds to an object, which no path goes through: the
 * balance counts it and, for an object no root reaches, names it as what holds the object
 * (interp->modules, a running frame's function). */
struct py_c_ref {
    uint64_t addr;
    char *name;               /* "sys", "<thread main: f() at x.py:3>": what holds it */
};

/* A word of a running frame's stack, read above a stack pointer the frame did not save: a
 * reference, or a stale one. The balance confirms it (cpython/balance.h) before it is an edge. */
struct py_inferred {
    uint64_t addr, payload;   /* payload: the PY_E_STACK edge's */
    uint32_t root;            /* the frame's root */
};

/* The books of the heap (cpython/balance.c): every object's reference count against the
 * references found to it, and, as CPython's collector decides, what no root reaches split into
 * garbage and what something outside the walk holds. */
#define PY_UNBALANCED INT32_MIN   /* an object whose count is not balanced (immortal, unread) */
struct py_books {
    int32_t *unexplained;     /* by node: its reference count less the references found to it
                                 (read into it as the walk adds the node), or PY_UNBALANCED */
    uint32_t *held_from;      /* by node no root reaches: the node with references not explained
                                 (or a C reference) that holds it, itself included; PY_NO_NODE:
                                 garbage, which gc.collect() would free */
    uint32_t *c_ref_of;       /* by node no root reaches: the index into c_refs of a C reference
                                 to its held_from, or PY_NO_NODE */
    uint8_t *collected;       /* by node no root reaches: 1 when gc.collect() finds it
                                 unreachable itself (what DEBUG_SAVEALL saves in gc.garbage) */
    uint8_t *frozen;          /* 3.11, a bit by node: a deep-frozen object, whose references
                                 were never counted (NULL in other versions) */
    uint64_t balanced, unbalanced;          /* objects whose counts were (not) balanced */
    uint64_t short_objects, short_refs;     /* objects with references not explained */
    uint64_t over_objects, over_refs;       /* objects with more references found than counted */
    uint64_t garbage, garbage_bytes, held, held_bytes;   /* of the objects no root reaches */
    bool done;
};

struct py_heap {
    struct py_objects objects;
    struct py_pybind11_types pybind11; /* the C++ class of each pybind11 type */
    struct py_node *nodes;
    uint32_t n, cap;
    uint32_t nreachable;      /* nodes [0, nreachable) are reachable from a root, and so are
                                 npromoted more past them (py_node_reachable) */
    struct cl_nodemap index;  /* address -> node */
    uint64_t *type_bytes;     /* by type index: the bytes of its objects, summed by the walk */
    uint32_t *type_nodes;     /* by type index: the type object's node, once an instance met it */
    size_t types_cap;         /* of both */
    char **roots;
    uint8_t *root_kinds;      /* enum py_root_kind, per root */
    uint32_t nroots;
    size_t roots_cap, root_kinds_cap;
    struct py_edges edges;
    struct py_root_edge *root_edges;
    size_t nroot_edges, root_edges_cap;
    struct py_c_ref *c_refs;
    size_t nc_refs, c_refs_cap;
    uint64_t interned;        /* the interned dict (3.12+), whose references count nothing */
    /* the main thread's outermost Python frame, __main__ and its __file__ (0: none): what
     * CPython's entry holds (heap.c: entry_roots) */
    uint64_t entry_frame, main_module, main_file;
    struct py_inferred *inferred;
    size_t ninferred, inferred_cap;
    uint64_t *books_refs;     /* targets of PY_E_BOOKS references, counted by the balance */
    size_t nbooks_refs, books_refs_cap;
    /* The libraries' static words (at, object) to objects the build left references not
     * explained, by object: a reader after it takes them with its own (torch/cxxrefs.h), where
     * numpy's static and torch's argument parsers hold one name together. */
    struct py_word_at {
        uint64_t at, object;
    } *statics_left;
    size_t nstatics_left;
    uint32_t npromoted;       /* nodes past nreachable that a confirmed stack word reaches */
    struct py_books books;
    size_t books_cap;         /* of books.unexplained, grown with the nodes */
    bool gc_collecting;       /* stopped inside a collection: GC lists may be inconsistent */
    uint64_t gc_listed;       /* objects found on the GC lists */
    uint64_t edges_dropped;   /* references not recorded for lack of memory */
    uint64_t nodes_dropped;   /* objects not recorded for lack of memory */
    uint64_t roots_dropped;   /* roots not recorded for lack of memory */
    uint64_t max_objects;     /* the build's bound on n (py_walk_options.max_objects) */
    char *warnings;
};

struct py_walk_options {
    uint64_t max_objects;     /* 0: as many as the memory available holds (heap.c) */
    FILE *progress;           /* a terminal for progress lines (util/progress.h), or NULL */
    const struct py_code_extra_reader *code_extra;   /* NULL: co_extra is not read */
    const struct py_type_reader *type_readers;       /* libraries' C types (emit.h) */
    size_t ntype_readers;
};

/* Builds the graph. On error the heap is freed. */
int py_heap_build(struct py_runtime *rt, const struct py_walk_options *opt, struct py_heap *h,
                  struct cl_error *err);
void py_heap_free(struct py_heap *h);

/* Node i's type. */
static inline struct py_type *py_node_type(const struct py_heap *h, uint32_t i)
{
    return h->objects.types[h->nodes[i].type];
}

/* The class edge's target: the node of node i's type, or PY_NO_NODE where it has none (no
 * class edge). */
static inline uint32_t py_class_node(const struct py_heap *h, uint32_t i)
{
    return h->edges.of[i].class_dst;
}

/* How many edge ids there are, recorded and class: ids at and past it are free for callers'
 * own edges (the holders' C++ links). */
static inline uint32_t py_edge_ids(const struct py_heap *h)
{
    return (uint32_t)h->edges.n + h->n;
}

/* How many edges node i has; py_node_edge(h, i, p) is the id of the p-th. */
static inline uint32_t py_node_nedges(const struct py_heap *h, uint32_t i)
{
    return h->edges.of[i + 1].first - h->edges.of[i].first + (py_class_node(h, i) != PY_NO_NODE);
}

static inline uint32_t py_node_edge(const struct py_heap *h, uint32_t i, uint32_t p)
{
    uint32_t e = h->edges.of[i].first + p;
    return e < h->edges.of[i + 1].first ? e : (uint32_t)h->edges.n + i;
}

static inline uint32_t py_edge_dst(const struct py_heap *h, uint32_t e)
{
    return e < h->edges.n ? h->edges.dst[e] : py_class_node(h, e - (uint32_t)h->edges.n);
}

/* Edge e as a step onto obj. */
static inline struct py_step py_edge_step(const struct py_heap *h, uint32_t e, uint64_t obj)
{
    if (e < h->edges.n)
        return (struct py_step){h->edges.kind[e] & PY_E_KIND_MASK, h->edges.payload[e], obj};
    return (struct py_step){PY_E_NAMED, (uint64_t)(uintptr_t)py_class_label, obj};
}

/* Whether node i is reachable from a root: found from one, or found on the GC lists and then
 * reached from a running frame's stack word the balance confirmed. */
static inline bool py_node_reachable(const struct py_heap *h, uint32_t i)
{
    return i < h->nreachable || h->nodes[i].root != PY_NO_NODE;
}

#define PY_OPAQUE_WORDS 64 /* of an object's first 512 bytes, the words scanned */

/* The words of ty's instances that no reader reads, as a mask (bit k: the word at 8k): past
 * the header (and ob_size), not a member, nor the dict or weak-reference slot. Empty for the
 * families culeak reads and for a class statement's instances, whose every word is one of
 * those; C types' own fields are the rest, which the walk follows only where the balance
 * confirms a word. Computed once a type. */
uint64_t py_opaque_words(struct py_objects *o, struct py_type *ty);
/* Whether culeak reads every field of ty's instances: no opaque words, and no C metaclass
 * (ctypes' types), whose own traverse the type reader does not know. */
bool py_fields_read(struct py_objects *o, struct py_type *ty);

/* Records a reference the interpreter's (or a library's) C state holds to the object at addr,
 * named after what holds it (struct py_c_ref). False when out of memory. */
bool py_heap_add_c_ref(struct py_heap *h, uint64_t addr, const char *name);

/* The node of an object, or PY_NO_NODE. */
uint32_t py_heap_find(const struct py_heap *h, uint64_t addr);
/* The static words the build left to the object at addr: h->statics_left[*first, return). */
size_t py_heap_statics_left(const struct py_heap *h, uint64_t addr, size_t *first);
/* The shortest chain from a root to node i as a Python-like path; false when unreachable. */
bool py_heap_path(struct py_heap *h, uint32_t i, char *out, size_t cap);
/* Up to max paths to node i, shortest first, each through a different referrer. Returns how many
 * were written to out[k] (each cap bytes). */
size_t py_heap_paths(struct py_heap *h, uint32_t i, size_t max, char (*out)[4096]);

/* root followed by the steps, as a Python-like path. */
void py_heap_render(struct py_heap *h, const char *root, const struct py_step *steps, size_t n,
                    char *out, size_t cap);

/* A type's qualified name as Python spells it: "torch.nn.parameter.Parameter" (a class:
 * __module__ and __qualname__), "collections.OrderedDict" (a C type's dotted tp_name),
 * "builtins.dict". */
void py_type_qualified_name(struct py_heap *h, const struct py_type *ty, char *out, size_t cap);

/* The value of obj's attribute name from its own attributes (instance dict, managed values, as the
 * referent walker reads them; not the class's), or 0. */
uint64_t py_heap_attr(struct py_objects *o, uint64_t obj, const char *name);
/* Whether ty is the class called qualified (py_type_qualified_name) or derives from it along
 * its bases (tp_base, the first of each). */
bool py_type_derives(struct py_heap *h, const struct py_type *ty, const char *qualified);
/* py_type_derives for node i's class, answered once a type: cache holds an entry a type index
 * (h->objects.ntypes, zeroed before the first question). */
bool py_node_derives(struct py_heap *h, uint32_t i, unsigned char *cache, const char *qualified);

/* sys.modules[module].attr when it is a str (e.g. torch.version.__version__); false otherwise. */
bool py_heap_module_str(struct py_heap *h, const char *module, const char *attr, char *out,
                        size_t cap);

#endif
