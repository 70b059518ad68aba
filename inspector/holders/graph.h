/* The graph holders are computed on (private to holders/): vertex 0 a super-root, then one per
 * root, holder, heap node, tensor, autograd node and storage. The super-root leads to every root
 * and to every heap node with references its count holds and nothing explains (cpython/
 * balance.h): what such an object holds, no holder's deletion frees. It joins the Python object graph
 * (cpython/heap.h) and the C++ references of torch/tensors.h, and is read through a function
 * rather than copied; only the part of it that reaches a storage, the part retained bytes and
 * paths need, is copied and renumbered (a heap of millions of objects holds a few that do). */
#ifndef CULEAK_HOLDERS_GRAPH_H
#define CULEAK_HOLDERS_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/heap.h"
#include "graph/dominators.h"
#include "torch/tensors.h"
#include "util/addrmap.h"
#include "util/rankset.h"

#define HG_NONE CL_GRAPH_NONE
#define HG_NOT_HOLDER UINT32_MAX
#define HG_ORIGIN_HIDDEN UINT32_MAX   /* an edge that prints nothing (tensor -> storage) */

/* What a heap node is to the graph. A namespace dict or a module is a barrier: walks from a
 * holder stop there. */
enum {
    HG_NAMESPACE = 1,       /* a root's namespace dict: its entries are holders */
    HG_MODULE = 2,
    HG_TENSOR_OBJECT = 4,   /* a tensor's Python object: an edge to the tensor follows its own */
    HG_LINKED = 8,          /* the source of C++ links (a custom Function's ctx) */
};

/* Vertex numbering: 0 the super-root, then roots, holders, heap nodes, tensors, graph nodes and
 * storages, each a contiguous range. */
struct hg_layout {
    uint32_t roots, holders, heap, tensors, nodes, storages, n;
};

/* A holder: the root edge it leaves by, and when that edge leads into a namespace dict, the
 * dict's entry it is. */
struct hg_holder {
    uint32_t root_edge;
    uint32_t entry;          /* a heap edge, or HG_NONE */
};

/* The vertices the super-root reaches that reach a storage, numbered 0..n-1 in the whole graph's
 * order, and the edges between them with each one's origin: a heap edge's id, py_edge_ids(h) +
 * a torch link's index, or HG_ORIGIN_HIDDEN. */
struct hg_subgraph {
    uint32_t n;
    uint32_t *vertex;        /* per sub-vertex: its vertex */
    struct cl_rankset in;    /* the vertices in it, numbered as sub-vertices (hg_sub_vertex) */
    uint32_t *first, *dst, *origin;
    size_t nedges, edges_cap;
};

/* Vertex v's sub-vertex, or HG_NONE. */
static inline uint32_t hg_sub_vertex(const struct hg_subgraph *s, uint32_t v)
{
    return cl_rankset_number(&s->in, v);
}

struct holder_graph {
    struct py_heap *h;
    const struct torch_tensors *tt;
    struct hg_layout at;
    uint8_t *flags;              /* per heap node: HG_NAMESPACE, HG_MODULE, ... */
    struct hg_holder *holders;
    size_t nholders, holders_cap;
    uint32_t *root_edge_holder;  /* per root edge: its holder, or HG_NOT_HOLDER */
    uint32_t *by_root;           /* root edges grouped by root: r's are [root_first[r], [r+1]) */
    size_t *root_first;
    struct cl_addrmap ns_first;  /* namespace heap node (number key) -> its first holder */
    struct cl_addrmap tensor_of; /* heap node (number key) -> tensor */
    uint32_t *held_from_c;       /* heap nodes with references not explained */
    size_t nheld_from_c;
    struct hg_subgraph sub;
};

/* Finds the holders, lays the graph out and copies the subgraph. Returns 0 or CL_E_INTERNAL (out
 * of memory, or more vertices than 32 bits number); g is freed by holder_graph_free either way. */
int holder_graph_build(struct holder_graph *g, struct py_heap *h, const struct torch_tensors *tt);
void holder_graph_free(struct holder_graph *g);

/* The heap node holder j points at. */
uint32_t holder_graph_target(const struct holder_graph *g, uint32_t j);

/* Whether vertex v is a root, a namespace dict or a module. */
bool holder_graph_barrier(const struct holder_graph *g, uint32_t v);

#endif
