/* The holders' graph: which heap nodes are holders and barriers, the edges of every vertex by
 * kind, and the subgraph of what reaches a storage. */
#include "holders/graph.h"

#include <stdlib.h>
#include <string.h>

#include "cpython/balance.h"
#include "graph/reach.h"
#include "util/vec.h"

static bool is_dict_step(const struct py_step *s)
{
    return s->edge == PY_E_NAMED && strcmp((const char *)(uintptr_t)s->payload, ".__dict__") == 0;
}

static bool add_holder(struct holder_graph *g, struct hg_holder p)
{
    if (!CL_VEC_RESERVE(g->holders, g->nholders, g->holders_cap))
        return false;
    g->holders[g->nholders++] = p;
    return true;
}

/* Roots' namespace dicts give a holder per entry; a root's other references are holders
 * themselves; module objects only pass through. */
static int find_holders(struct holder_graph *g)
{
    struct py_heap *h = g->h;
    if (!(g->flags = calloc(h->n ? h->n : 1, 1)) ||
        !(g->root_edge_holder = malloc((h->nroot_edges + 1) * sizeof *g->root_edge_holder)))
        return CL_E_INTERNAL;
    for (uint32_t i = 0; i < h->n; i++) {
        if (py_node_type(h, i)->family == PY_F_MODULE)
            g->flags[i] = HG_MODULE;
    }
    for (size_t k = 0; k < h->nroot_edges; k++) {
        const struct py_root_edge *r = &h->root_edges[k];
        g->root_edge_holder[k] = HG_NOT_HOLDER;
        if (g->flags[r->dst])
            continue;
        if (is_dict_step(&r->step)) {
            g->flags[r->dst] = HG_NAMESPACE;
            bool inserted;
            if (cl_addrmap_put(&g->ns_first, cl_addrmap_number_key(r->dst), (uint32_t)g->nholders,
                               &inserted) == UINT32_MAX)
                return CL_E_INTERNAL;
            for (uint32_t p = 0, m = py_node_nedges(h, r->dst); p < m; p++)
                if (!add_holder(g, (struct hg_holder){(uint32_t)k, py_node_edge(h, r->dst, p)}))
                    return CL_E_INTERNAL;
            continue;
        }
        g->root_edge_holder[k] = (uint32_t)g->nholders;
        if (!add_holder(g, (struct hg_holder){(uint32_t)k, HG_NONE}))
            return CL_E_INTERNAL;
    }
    return 0;
}

/* The heap nodes whose counts hold references nothing the walk found explains: something outside
 * the walk (C, or what culeak cannot read) holds each, so deleting a holder never frees it. */
static int find_held_from_c(struct holder_graph *g)
{
    size_t cap = 0;
    for (uint32_t i = 0; i < g->h->n; i++) {
        if (py_books_unexplained(g->h, i) <= 0)
            continue;
        if (!CL_VEC_RESERVE(g->held_from_c, g->nheld_from_c, cap))
            return CL_E_INTERNAL;
        g->held_from_c[g->nheld_from_c++] = i;
    }
    return 0;
}

/* Root edges grouped by root (a counting sort), so that a root's are found at once. */
static int group_root_edges(struct holder_graph *g)
{
    const struct py_heap *h = g->h;
    if (!(g->by_root = malloc((h->nroot_edges + 1) * sizeof *g->by_root)) ||
        !(g->root_first = calloc((size_t)h->nroots + 2, sizeof *g->root_first)))
        return CL_E_INTERNAL;
    for (size_t k = 0; k < h->nroot_edges; k++)
        g->root_first[h->root_edges[k].root + 2]++;
    for (uint32_t r = 0; r < h->nroots; r++)
        g->root_first[r + 2] += g->root_first[r + 1];
    for (size_t k = 0; k < h->nroot_edges; k++)
        g->by_root[g->root_first[h->root_edges[k].root + 1]++] = (uint32_t)k;
    return 0;
}

/* Tensors' Python objects and the sources of C++ links among heap nodes, so that the edges of
 * the others need no lookup. */
static int flag_torch_objects(struct holder_graph *g)
{
    const struct torch_tensors *tt = g->tt;
    for (uint32_t k = 0; k < tt->n; k++) {
        bool inserted;
        if (!tt->v[k].pyobj || tt->v[k].node >= g->h->n)
            continue;
        if (cl_addrmap_put(&g->tensor_of, cl_addrmap_number_key(tt->v[k].node), k, &inserted) ==
            UINT32_MAX)
            return CL_E_INTERNAL;
        g->flags[tt->v[k].node] |= HG_TENSOR_OBJECT;
    }
    for (size_t k = 0; k < tt->nlinks; k++)
        if (tt->links[k].src_end == TORCH_END_PYOBJ && tt->links[k].src < g->h->n)
            g->flags[tt->links[k].src] |= HG_LINKED;
    return 0;
}

uint32_t holder_graph_target(const struct holder_graph *g, uint32_t j)
{
    const struct hg_holder *p = &g->holders[j];
    return p->entry != HG_NONE ? py_edge_dst(g->h, p->entry) : g->h->root_edges[p->root_edge].dst;
}

static uint32_t heap_vertex(const struct holder_graph *g, uint32_t i)
{
    return g->at.heap + i;
}

/* The kind of end a heap, tensor or node vertex is, and where that kind's range starts. */
static enum torch_end vertex_end(const struct holder_graph *g, uint32_t v)
{
    return v >= g->at.nodes     ? TORCH_END_NODE
           : v >= g->at.tensors ? TORCH_END_TENSOR
                                : TORCH_END_PYOBJ;
}

static uint32_t end_base(const struct holder_graph *g, enum torch_end end)
{
    return end == TORCH_END_STORAGE  ? g->at.storages
           : end == TORCH_END_NODE   ? g->at.nodes
           : end == TORCH_END_TENSOR ? g->at.tensors
                                     : g->at.heap;
}

static uint32_t end_vertex(const struct holder_graph *g, uint8_t end, uint32_t i)
{
    return end_base(g, (enum torch_end)end) + i;
}

/* Edge p out of a heap vertex, or CL_GRAPH_END past its heap edges (and *nmain: how many). A
 * namespace dict's entries lead to their holders. An edge into a namespace dict is left out: the
 * dict's root reaches it straight from the super-root, so no other way in can make a holder
 * dominate anything it would not dominate anyway (every path through that edge has a twin
 * through the root with the same tail), and without them every function's __globals__ would
 * reach every storage its module's globals reach. */
__attribute__((always_inline)) static inline uint32_t heap_edge(const struct holder_graph *g,
                                                                uint32_t i, uint32_t p,
                                                                uint32_t *origin, uint32_t *nmain)
{
    const struct py_edges *he = &g->h->edges;
    const struct py_node_edges *of = &he->of[i];
    uint32_t recorded = of[1].first - of->first, e, dst;
    if (p < recorded) {   /* py_node_edge and py_edge_dst, spelled out for the search's sake */
        e = of->first + p;
        dst = he->dst[e];
    } else if (p == recorded && of->class_dst != PY_NO_NODE) {
        e = (uint32_t)he->n + i;
        dst = of->class_dst;
    } else {
        *nmain = recorded + (of->class_dst != PY_NO_NODE);
        return CL_GRAPH_END;
    }
    *origin = e;
    uint32_t j = g->flags[i] & HG_NAMESPACE ? cl_addrmap_get(&g->ns_first, cl_addrmap_number_key(i))
                                            : HG_NOT_HOLDER;
    if (j != HG_NOT_HOLDER)
        return g->at.holders + j + p;
    return g->flags[dst] & HG_NAMESPACE ? CL_GRAPH_SKIP : heap_vertex(g, dst);
}

/* Edge p out of vertex v, with its origin; CL_GRAPH_SKIP or CL_GRAPH_END as cl_graph_out_fn.
 * Each vertex's edges are those of its kind, then its C++ links. */
static uint32_t out_edge(const struct holder_graph *g, uint32_t v, uint32_t p, uint32_t *origin)
{
    const struct hg_layout *at = &g->at;
    *origin = HG_ORIGIN_HIDDEN;
    uint32_t nmain = 0;
    if (v == 0)
        return p < g->h->nroots ? at->roots + p
               : p - g->h->nroots < g->nheld_from_c
                   ? heap_vertex(g, g->held_from_c[p - g->h->nroots])
                   : CL_GRAPH_END;
    if (v < at->holders) { /* a root: its namespaces, modules and holders */
        size_t r = v - at->roots, i = g->root_first[r] + p;
        if (i >= g->root_first[r + 1])
            return CL_GRAPH_END;
        uint32_t k = g->by_root[i];
        return g->root_edge_holder[k] != HG_NOT_HOLDER ? at->holders + g->root_edge_holder[k]
                                                       : heap_vertex(g, g->h->root_edges[k].dst);
    }
    if (v < at->heap)
        return p ? CL_GRAPH_END : heap_vertex(g, holder_graph_target(g, v - at->holders));
    if (v < at->tensors) {
        uint32_t i = v - at->heap, w = heap_edge(g, i, p, origin, &nmain);
        if (w != CL_GRAPH_END)
            return w;
        if (g->flags[i] & HG_TENSOR_OBJECT) {
            if (p == nmain) {
                uint32_t k = cl_addrmap_get(&g->tensor_of, cl_addrmap_number_key(i));
                return k < g->tt->n ? at->tensors + k : CL_GRAPH_SKIP;
            }
            nmain++;
        }
        if (!(g->flags[i] & HG_LINKED))
            return CL_GRAPH_END;
    } else if (v < at->nodes) {
        uint32_t s = g->tt->v[v - at->tensors].storage_index;
        if (s != UINT32_MAX) {
            if (p == 0)
                return at->storages + s;
            nmain = 1;
        }
    } else if (v >= at->storages) {
        return CL_GRAPH_END;
    }
    size_t nlinks = 0; /* C++ references out of v */
    enum torch_end end = vertex_end(g, v);
    const struct torch_link *l = torch_links_from(g->tt, end, v - end_base(g, end), &nlinks);
    if (p - nmain >= nlinks)
        return CL_GRAPH_END;
    l += p - nmain;
    *origin = py_edge_ids(g->h) + (uint32_t)(l - g->tt->links);
    return end_vertex(g, l->dst_end, l->dst);
}

/* out_edge without the origin, for the search over the whole graph: millions of calls, most of
 * them for a heap vertex with no flag, whose edges are its heap edges alone. */
static uint32_t whole_out(void *arg, uint32_t v, uint32_t p)
{
    const struct holder_graph *g = arg;
    uint32_t i = v - g->at.heap, origin, nmain;
    if (v >= g->at.heap && v < g->at.tensors && !g->flags[i])
        return heap_edge(g, i, p, &origin, &nmain);
    return out_edge(g, v, p, &origin);
}

/* Appends an edge out of the sub-vertex being built; dst and origin grow together. */
static bool edge(struct hg_subgraph *s, uint32_t dst, uint32_t origin)
{
    if (s->nedges >= UINT32_MAX - 1)
        return false;
    if (s->nedges == s->edges_cap) {
        size_t cap = s->edges_cap;
        if (!cl_vec_grow((void **)&s->dst, &cap, sizeof *s->dst) ||
            !cl_vec_resize((void **)&s->origin, cap, sizeof *s->origin))
            return false;
        s->edges_cap = cap;
    }
    s->dst[s->nedges] = dst;
    s->origin[s->nedges++] = origin;
    return true;
}

/* The vertices the super-root reaches that reach a storage, and the edges between them in the
 * order out_edge gives them. */
static int build_subgraph(struct holder_graph *g)
{
    const struct hg_layout *at = &g->at;
    struct hg_subgraph *s = &g->sub;
    uint8_t *mark = calloc(at->n, 1);
    if (!mark)
        return CL_E_INTERNAL;
    memset(mark + at->storages, 1, at->n - at->storages);
    int rc = cl_graph_reaching(at->n, 0, whole_out, g, mark);
    if (!rc && !cl_rankset_build(&s->in, mark, at->n))
        rc = CL_E_INTERNAL;
    s->n = s->in.count;
    if (rc || !(s->vertex = malloc(((size_t)s->n + 1) * sizeof *s->vertex)) ||
        !(s->first = malloc(((size_t)s->n + 1) * sizeof *s->first))) {
        free(mark);
        return CL_E_INTERNAL;
    }
    for (uint32_t v = 0, x = 0; v < at->n; v++)
        if (mark[v])
            s->vertex[x++] = v;
    free(mark);
    for (uint32_t x = 0; x < s->n; x++) {
        s->first[x] = (uint32_t)s->nedges;
        uint32_t origin, w;
        for (uint32_t p = 0; (w = out_edge(g, s->vertex[x], p, &origin)) != CL_GRAPH_END; p++)
            if (w != CL_GRAPH_SKIP && (w = hg_sub_vertex(s, w)) != HG_NONE && !edge(s, w, origin))
                return CL_E_INTERNAL;
    }
    s->first[s->n] = (uint32_t)s->nedges;
    return 0;
}

static void subgraph_free(struct hg_subgraph *s)
{
    free(s->vertex);
    cl_rankset_free(&s->in);
    free(s->first);
    free(s->dst);
    free(s->origin);
    *s = (struct hg_subgraph){0};
}

bool holder_graph_barrier(const struct holder_graph *g, uint32_t v)
{
    const struct hg_layout *at = &g->at;
    return v < at->holders || (v >= at->heap && v < at->tensors &&
                               g->flags[v - at->heap] & (HG_NAMESPACE | HG_MODULE));
}

int holder_graph_build(struct holder_graph *g, struct py_heap *h, const struct torch_tensors *tt)
{
    *g = (struct holder_graph){.h = h, .tt = tt};
    int rc = find_holders(g);
    struct hg_layout *at = &g->at;
    at->roots = 1;
    at->holders = at->roots + h->nroots;
    at->heap = at->holders + (uint32_t)g->nholders;
    at->tensors = at->heap + h->n;
    at->nodes = at->tensors + tt->n;
    at->storages = at->nodes + tt->nnodes;
    at->n = at->storages + tt->nstorages;
    if (!rc && ((uint64_t)h->n + g->nholders + tt->n + tt->nnodes + tt->nstorages + h->nroots >=
                CL_GRAPH_SKIP - 1))
        rc = CL_E_INTERNAL;
    if (!rc)
        rc = flag_torch_objects(g);
    if (!rc)
        rc = group_root_edges(g);
    if (!rc)
        rc = find_held_from_c(g);
    if (!rc)
        rc = build_subgraph(g);
    return rc;
}

void holder_graph_free(struct holder_graph *g)
{
    free(g->flags);
    free(g->holders);
    free(g->root_edge_holder);
    free(g->by_root);
    free(g->root_first);
    cl_addrmap_free(&g->ns_first);
    cl_addrmap_free(&g->tensor_of);
    free(g->held_from_c);
    subgraph_free(&g->sub);
    *g = (struct holder_graph){0};
}
