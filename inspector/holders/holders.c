/* Building the holder model: one graph over Python objects, holders, tensors, autograd nodes and
 * storages; its dominator tree for retained bytes; a walk from every holder that reaches any
 * storage for reachable bytes and paths. */
#include "holders/holders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/path.h"
#include "graph/dominators.h"
#include "util/notes.h"
#include "util/vec.h"

#define NOT_HOLDER UINT32_MAX
#define ORIGIN_HIDDEN UINT32_MAX     /* an edge that prints nothing (tensor -> storage) */
#define MAX_VISITS 500000000ull      /* vertex visits over all holders' walks */

/* Vertex numbering: 0 the super-root, then roots, holders, heap nodes, tensors, graph nodes and
 * storages, each a contiguous range. */
struct layout {
    uint32_t roots, holders, heap, tensors, nodes, storages, n;
};

/* A holder before it is named: where it leaves from and what it points at. */
struct pending {
    uint32_t root, target;   /* heap root; heap node */
    struct py_step steps[2]; /* the step into a namespace dict (or none), then the reference */
    uint8_t nsteps;
};

struct builder {
    struct py_heap *h;
    const struct torch_tensors *tt;
    const struct cc_allocator *a;
    struct cl_holders *out;
    struct layout at;
    uint8_t *barrier;            /* per heap node: 1 a root's namespace dict, 2 a module */
    struct pending *holders;
    size_t nholders, holders_cap;
    uint32_t *root_edge_holder;  /* per root edge: its holder, or NOT_HOLDER */
    struct cl_addrmap ns_first;  /* namespace heap node (number key) -> its first holder */
    struct cl_addrmap tensor_of; /* heap node (number key) -> tensor */
    /* the graph */
    uint32_t *first, *dst, *origin;
    size_t nedges, edges_cap;
    char (*arrow)[64], (*grad_fn)[72];   /* per graph node: " → Name", ".grad_fn → Name" */
    uint64_t *bytes;             /* per storage */
    int *device;                 /* per storage: index into out->devices */
};

/* ---- holders ---- */

static bool is_dict_step(const struct py_step *s)
{
    return s->edge == PY_E_NAMED && strcmp((const char *)(uintptr_t)s->payload, ".__dict__") == 0;
}

static bool add_pending(struct builder *b, struct pending p)
{
    if (!CL_VEC_RESERVE(b->holders, b->nholders, b->holders_cap))
        return false;
    b->holders[b->nholders++] = p;
    return true;
}

/* Roots' namespace dicts give a holder per entry; a root's other references are holders
 * themselves; module objects only pass through. */
static int find_holders(struct builder *b)
{
    struct py_heap *h = b->h;
    if (!(b->barrier = calloc(h->n ? h->n : 1, 1)) ||
        !(b->root_edge_holder = malloc((h->nroot_edges + 1) * sizeof *b->root_edge_holder)))
        return CL_E_INTERNAL;
    for (uint32_t i = 0; i < h->n; i++) {
        if (py_node_type(h, i)->family == PY_F_MODULE)
            b->barrier[i] = 2;
    }
    for (size_t k = 0; k < h->nroot_edges; k++) {
        const struct py_root_edge *r = &h->root_edges[k];
        b->root_edge_holder[k] = NOT_HOLDER;
        if (b->barrier[r->dst])
            continue;
        if (is_dict_step(&r->step)) {
            b->barrier[r->dst] = 1;
            bool inserted;
            if (cl_addrmap_put(&b->ns_first, cl_addrmap_number_key(r->dst), (uint32_t)b->nholders,
                               &inserted) == UINT32_MAX)
                return CL_E_INTERNAL;
            for (uint32_t e = h->edges.first[r->dst]; e < h->edges.first[r->dst + 1]; e++) {
                uint32_t dst = h->edges.dst[e];
                struct pending p = {
                    r->root,
                    dst,
                    {r->step, {h->edges.kind[e], h->edges.payload[e], h->nodes[dst].addr}},
                    2};
                if (!add_pending(b, p))
                    return CL_E_INTERNAL;
            }
            continue;
        }
        b->root_edge_holder[k] = (uint32_t)b->nholders;
        if (!add_pending(b, (struct pending){r->root, r->dst, {r->step}, 1}))
            return CL_E_INTERNAL;
    }
    return 0;
}

/* ---- the graph ---- */

static uint32_t heap_vertex(const struct builder *b, uint32_t i)
{
    return b->at.heap + i;
}

/* The kind of end a heap, tensor or node vertex is, and where that kind's range starts. */
static enum torch_end vertex_end(const struct builder *b, uint32_t v)
{
    return v >= b->at.nodes     ? TORCH_END_NODE
           : v >= b->at.tensors ? TORCH_END_TENSOR
                                : TORCH_END_PYOBJ;
}

static uint32_t end_base(const struct builder *b, enum torch_end end)
{
    return end == TORCH_END_NODE     ? b->at.nodes
           : end == TORCH_END_TENSOR ? b->at.tensors
                                     : b->at.heap;
}

static uint32_t end_vertex(const struct builder *b, uint8_t end, uint32_t i)
{
    return end_base(b, (enum torch_end)end) + i;
}

/* Appends an edge out of the vertex being built; dst and origin grow together. */
static bool edge(struct builder *b, uint32_t dst, uint32_t origin)
{
    if (b->nedges >= UINT32_MAX - 1)
        return false;
    if (b->nedges == b->edges_cap) {
        size_t cap = b->edges_cap;
        if (!cl_vec_grow((void **)&b->dst, &cap, sizeof *b->dst) ||
            !cl_vec_resize((void **)&b->origin, cap, sizeof *b->origin))
            return false;
        b->edges_cap = cap;
    }
    b->dst[b->nedges] = dst;
    b->origin[b->nedges++] = origin;
    return true;
}

/* The out-edges of every vertex, in vertex order (so first[] fills as we go). */
static int build_graph(struct builder *b)
{
    struct py_heap *h = b->h;
    const struct torch_tensors *tt = b->tt;
    const struct layout *at = &b->at;
    /* root edges grouped by root (counting sort), so each root's are found once */
    uint32_t *by_root = malloc((h->nroot_edges + 1) * sizeof *by_root);
    size_t *root_first = calloc((size_t)h->nroots + 2, sizeof *root_first);
    if (!by_root || !root_first || !(b->first = malloc(((size_t)at->n + 1) * sizeof *b->first))) {
        free(by_root);
        free(root_first);
        return CL_E_INTERNAL;
    }
    for (size_t k = 0; k < h->nroot_edges; k++)
        root_first[h->root_edges[k].root + 2]++;
    for (uint32_t r = 0; r < h->nroots; r++)
        root_first[r + 2] += root_first[r + 1];
    for (size_t k = 0; k < h->nroot_edges; k++)
        by_root[root_first[h->root_edges[k].root + 1]++] = (uint32_t)k;
    bool ok = true;
    for (uint32_t v = 0; v < at->n && ok; v++) {
        b->first[v] = (uint32_t)b->nedges;
        if (v == 0) {
            for (uint32_t r = 0; r < h->nroots && ok; r++)
                ok = edge(b, at->roots + r, ORIGIN_HIDDEN);
        } else if (v < at->holders) {   /* a root: its namespaces, modules and holders */
            uint32_t r = v - at->roots;
            for (size_t i = root_first[r]; i < root_first[r + 1] && ok; i++) {
                uint32_t k = by_root[i];
                ok = edge(b,
                          b->root_edge_holder[k] != NOT_HOLDER
                              ? at->holders + b->root_edge_holder[k]
                              : heap_vertex(b, h->root_edges[k].dst),
                          ORIGIN_HIDDEN);
            }
        } else if (v < at->heap) {
            ok = edge(b, heap_vertex(b, b->holders[v - at->holders].target), ORIGIN_HIDDEN);
        } else if (v < at->tensors) {
            uint32_t i = v - at->heap, k;
            uint32_t holder = b->barrier[i] == 1
                                  ? cl_addrmap_get(&b->ns_first, cl_addrmap_number_key(i))
                                  : NOT_HOLDER;
            for (uint32_t e = h->edges.first[i]; e < h->edges.first[i + 1] && ok; e++)
                ok = edge(b,
                          holder != NOT_HOLDER ? at->holders + holder++
                                               : heap_vertex(b, h->edges.dst[e]),
                          e);
            if (ok && (k = cl_addrmap_get(&b->tensor_of, cl_addrmap_number_key(i))) != UINT32_MAX)
                ok = edge(b, at->tensors + k, ORIGIN_HIDDEN);
        } else if (v < at->nodes) {
            const struct torch_tensor *x = &tt->v[v - at->tensors];
            if (x->storage_index != UINT32_MAX)
                ok = edge(b, at->storages + x->storage_index, ORIGIN_HIDDEN);
        }
        size_t nlinks = 0;   /* C++ references out of v */
        const struct torch_link *l =
            v >= at->heap && v < at->storages
                ? torch_links_from(tt, vertex_end(b, v), v - end_base(b, vertex_end(b, v)), &nlinks)
                : NULL;
        for (size_t k = 0; ok && k < nlinks; k++)
            ok = edge(b, end_vertex(b, l[k].dst_end, l[k].dst),
                      (uint32_t)(h->edges.n + (size_t)(l + k - tt->links)));
    }
    free(by_root);
    free(root_first);
    b->first[at->n] = (uint32_t)b->nedges;
    return ok ? 0 : CL_E_INTERNAL;
}

/* ---- bytes per device ---- */

static int device_of(struct cl_holders *hs, int8_t type, int8_t index)
{
    int d = cl_holders_device(hs, type, index);
    if (d >= 0 || hs->ndevices == CL_MAX_DEVICES)
        return d;
    hs->devices[hs->ndevices] = (struct cl_device){type, index};
    return (int)hs->ndevices++;
}

/* What each storage counts for: its caching-allocator block on CUDA (the allocator hands out
 * whole blocks), else its own size. */
static int storage_bytes(struct builder *b)
{
    const struct torch_tensors *tt = b->tt;
    struct cl_addrmap blocks = {0};   /* block ptr -> (device, block) packed */
    if (!(b->bytes = calloc(tt->nstorages + 1, sizeof *b->bytes)) ||
        !(b->device = calloc(tt->nstorages + 1, sizeof *b->device)))
        return CL_E_INTERNAL;
    for (uint32_t d = 0; b->a && d < b->a->ndevices && d < 256; d++)
        for (uint32_t k = 0; k < b->a->devices[d].nblocks && k < (1u << 24); k++) {
            bool inserted;
            (void)cl_addrmap_put(&blocks, b->a->devices[d].blocks[k].ptr, d << 24 | k, &inserted);
        }
    unsigned unmatched = 0;
    for (uint32_t s = 0; s < tt->nstorages; s++) {
        const struct torch_storage *st = &tt->storages[s];
        b->device[s] = device_of(b->out, st->device_type, st->device_index);
        b->bytes[s] = st->nbytes;
        if (st->device_type != 1 || !b->a)
            continue;
        uint32_t k = cl_addrmap_get(&blocks, st->data);
        if (k != UINT32_MAX)
            b->bytes[s] = b->a->devices[k >> 24].blocks[k & 0xffffff].size;
        else
            unmatched++;
    }
    cl_addrmap_free(&blocks);
    if (unmatched)
        cl_note_add(&b->out->warnings,
                    "%u CUDA storages start at no allocator block: they count "
                    "their own size",
                    unmatched);
    else if (!b->a && tt->nstorages)
        for (uint32_t s = 0; s < tt->nstorages; s++)
            if (tt->storages[s].device_type == 1) {
                cl_note_add(&b->out->warnings, "the CUDA allocator was not walked: CUDA storages "
                                               "count their own size, not their blocks'");
                break;
            }
    return 0;
}

/* ---- retained bytes ---- */

static int retained(struct builder *b)
{
    const struct layout *at = &b->at;
    struct cl_graph g = {at->n, b->first, b->dst};
    uint32_t *idom = malloc((size_t)at->n * sizeof *idom),
             *order = malloc((size_t)at->n * sizeof *order);
    uint32_t nordered = 0;
    int rc = idom && order ? cl_dominators(&g, 0, idom, order, &nordered) : CL_E_INTERNAL;
    /* nearest holder above each vertex in the dominator tree, reusing order's preorder */
    uint32_t *near = rc ? NULL : malloc((size_t)at->n * sizeof *near);
    if (!rc && !near)
        rc = CL_E_INTERNAL;
    for (uint32_t k = 0; !rc && k < nordered; k++) {
        uint32_t v = order[k];
        bool holder = v >= at->holders && v < at->heap;
        near[v] = holder ? v : v == 0 ? NOT_HOLDER : near[idom[v]];
    }
    for (uint32_t s = 0; !rc && s < b->tt->nstorages; s++) {
        uint32_t v = at->storages + s;
        if (idom[v] != CL_GRAPH_NONE && near[v] != NOT_HOLDER && b->device[s] >= 0)
            b->out->v[near[v] - at->holders].retained[b->device[s]] += b->bytes[s];
    }
    free(idom);
    free(order);
    free(near);
    return rc;
}

/* ---- walks from each holder ---- */

struct walk {
    /* per vertex, for the current holder's walk: the edge that reached it and the vertex it left
     * from, how deep it is and how many of those steps are indices */
    uint32_t *stamp, *parent, *from, *depth, *indices, *queue;
    uint8_t *autograd; /* the path to it passes through an autograd node */
    uint8_t *relevant; /* reaches a storage without passing a barrier */
    uint64_t visits;
};

static bool is_barrier(const struct builder *b, uint32_t v)
{
    return v < b->at.holders ||
           (v >= b->at.heap && v < b->at.tensors && b->barrier[v - b->at.heap]);
}

/* Vertices that reach a storage, found backwards from the storages; barriers end the search. */
static int find_relevant(struct builder *b, struct walk *w)
{
    const struct layout *at = &b->at;
    uint32_t *rfirst = calloc((size_t)at->n + 2, sizeof *rfirst),
             *rsrc = malloc((b->nedges + 1) * sizeof *rsrc);
    if (!rfirst || !rsrc || !(w->relevant = calloc(at->n, 1))) {
        free(rfirst);
        free(rsrc);
        return CL_E_INTERNAL;
    }
    for (size_t e = 0; e < b->nedges; e++)
        rfirst[b->dst[e] + 2]++;
    for (uint32_t v = 0; v < at->n; v++)
        rfirst[v + 2] += rfirst[v + 1];
    for (uint32_t v = 0; v < at->n; v++)
        for (uint32_t e = b->first[v]; e < b->first[v + 1]; e++)
            rsrc[rfirst[b->dst[e] + 1]++] = v;
    size_t head = 0, tail = 0;
    for (uint32_t s = 0; s < b->tt->nstorages; s++) {
        w->relevant[at->storages + s] = 1;
        w->queue[tail++] = at->storages + s;
    }
    while (head < tail) {
        uint32_t v = w->queue[head++];
        if (is_barrier(b, v))
            continue;
        for (uint32_t k = rfirst[v]; k < rfirst[v + 1]; k++)
            if (!w->relevant[rsrc[k]]) {
                w->relevant[rsrc[k]] = 1;
                w->queue[tail++] = rsrc[k];
            }
    }
    free(rfirst);
    free(rsrc);
    return 0;
}

static struct py_step step_of(const struct builder *b, uint32_t origin, uint32_t dst)
{
    static const char saved[] = " (saved)", variable[] = ".variable", grad[] = ".grad",
                      base[] = "._base";
    const struct py_edges *e = &b->h->edges;
    uint64_t obj =
        dst >= b->at.heap && dst < b->at.tensors ? b->h->nodes[dst - b->at.heap].addr : 0;
    if (origin == ORIGIN_HIDDEN)
        return (struct py_step){PY_E_HIDDEN, 0, obj};
    if (origin < e->n)
        return (struct py_step){e->kind[origin], e->payload[origin], obj};
    const struct torch_link *l = &b->tt->links[origin - e->n];
    const char *text = NULL;
    switch ((enum torch_link_kind)l->kind) {
    case TORCH_LINK_GRAD_FN: text = b->grad_fn[dst - b->at.nodes]; break;
    case TORCH_LINK_NEXT:
    case TORCH_LINK_SAVED_NODE: text = b->arrow[dst - b->at.nodes]; break;
    case TORCH_LINK_SAVED: text = saved; break;
    case TORCH_LINK_VARIABLE: text = variable; break;
    case TORCH_LINK_GRAD: text = grad; break;
    case TORCH_LINK_VIEW_BASE: text = base; break;
    case TORCH_LINK_PYOBJ:
    case TORCH_LINK_CONTEXT: return (struct py_step){PY_E_HIDDEN, 0, obj};
    }
    return (struct py_step){PY_E_CXX, (uint64_t)(uintptr_t)text, obj};
}


/* Whether the edge with this origin reads as an index: [3], [*d][i], or a key that is not a str
 * (a str key is how attributes are stored: obj.__dict__['w'] and model._parameters['w'] read
 * as .w). */
static bool index_step(const struct builder *b, uint32_t origin)
{
    if (origin >= b->h->edges.n)
        return false;
    uint8_t kind = b->h->edges.kind[origin];
    if (kind != PY_E_KEY)
        return kind == PY_E_INDEX || kind == PY_E_DICTKEY || kind == PY_E_SETITEM;
    const struct py_type *ty = py_object_type(&b->h->objects, b->h->edges.payload[origin]);
    return !ty || ty->family != PY_F_STR;
}

/* How a path to v is preferred, lower first: its root's kind, then Python references over a
 * path through an autograd graph, then fewer indices, then its length. */
static uint64_t preference(const struct builder *b, const struct walk *w, uint32_t hv, uint32_t v)
{
    uint64_t indices = w->indices[v] < 0x7ffffff ? w->indices[v] : 0x7ffffff;
    const struct cl_holder *hd = &b->out->v[hv - b->at.holders];
    return (uint64_t)b->h->root_kinds[hd->root] << 60 | (uint64_t)w->autograd[v] << 59 |
           indices << 32 | w->depth[v];
}

#define PATH_ENDS 128 /* steps kept at each end of a longer path (a graph 60,000 nodes deep) */

/* The path from holder vertex hv to v as text, whether it passes through an autograd node, and
 * how many of its steps are indices. A path of more than 2 * PATH_ENDS steps keeps its ends and
 * says how many steps it leaves out. NULL on allocation failure. */
static char *path_to(struct builder *b, struct walk *w, uint32_t hv, uint32_t v, bool *via_autograd,
                     uint32_t *indices)
{
    struct py_step steps[2 * PATH_ENDS + 1];
    uint32_t depth = w->depth[v];
    bool elide = depth > 2 * PATH_ENDS;
    char elided[48]; /* what the arrow leaves out */
    snprintf(elided, sizeof elided, PY_PATH_ELISION "%u steps…", depth - 2 * PATH_ENDS);
    size_t n = 0;
    *via_autograd = false;
    *indices = w->indices[v];
    for (uint32_t c = v; c != hv;) { /* from v up: its last steps, then its first ones */
        uint32_t e = w->parent[c];
        if (!elide || w->depth[c] > depth - PATH_ENDS || w->depth[c] <= PATH_ENDS)
            steps[n++] = step_of(b, b->origin[e], c);
        if (elide && w->depth[c] == depth - PATH_ENDS + 1)
            steps[n++] = (struct py_step){PY_E_CXX, (uint64_t)(uintptr_t)elided, 0};
        c = w->from[c];
        *via_autograd |= c >= b->at.nodes && c < b->at.storages;
    }
    for (size_t x = 0, y = n ? n - 1 : 0; x < y; x++, y--) {
        struct py_step t = steps[x];
        steps[x] = steps[y];
        steps[y] = t;
    }
    char buf[8192];
    py_heap_render(b->h, b->out->v[hv - b->at.holders].name, steps, n, buf, sizeof buf);
    return strdup(buf);
}

static bool add_storage_holder(struct cl_storage_holders *sh, struct cl_storage_holder x,
                               size_t *cap)
{
    size_t n = sh->n;
    if (!CL_VEC_RESERVE(sh->v, n, *cap))
        return false;
    sh->v[sh->n++] = x;
    return true;
}

/* A storage reached from holder j: its path and bytes. */
static int reached_storage(struct builder *b, struct walk *w, uint32_t j, uint32_t v, size_t *caps)
{
    const struct layout *at = &b->at;
    uint32_t s = v - at->storages, hv = at->holders + j;
    struct cl_storage_holder x = {j, w->from[v] - at->tensors, w->depth[v], 0, false, NULL};
    if (!(x.path = path_to(b, w, hv, v, &x.via_autograd, &x.indices)) ||
        !add_storage_holder(&b->out->storages[s], x, &caps[s])) {
        free(x.path);
        return CL_E_INTERNAL;
    }
    if (b->device[s] >= 0)
        b->out->v[j].reachable[b->device[s]] += b->bytes[s];
    b->out->v[j].storages++;
    b->out->v[j].saved += x.via_autograd;
    return 0;
}

/* A tensor reached from holder j: its path, when preferred to any before. */
static void reached_tensor(struct builder *b, struct walk *w, uint32_t j, uint32_t v,
                           uint64_t *best)
{
    uint32_t k = v - b->at.tensors, indices;
    uint64_t key = preference(b, w, b->at.holders + j, v);
    bool via;
    if (key >= best[k])
        return;
    char *p = path_to(b, w, b->at.holders + j, v, &via, &indices);
    if (p) {
        free(b->out->tensor_paths[k]);
        b->out->tensor_paths[k] = p;
        best[k] = key;
    }
}

/* Breadth first from holder j over relevant vertices, not entering barriers. */
static int walk_holder(struct builder *b, struct walk *w, uint32_t j, size_t *caps, uint64_t *best)
{
    const struct layout *at = &b->at;
    uint32_t hv = at->holders + j, stamp = j + 1;
    size_t head = 0, tail = 0;
    w->stamp[hv] = stamp;
    w->depth[hv] = 0;
    w->indices[hv] = 0;
    w->autograd[hv] = 0;
    w->queue[tail++] = hv;
    while (head < tail && w->visits < MAX_VISITS) {
        uint32_t v = w->queue[head++];
        w->visits++;
        if (v >= at->storages) {
            if (reached_storage(b, w, j, v, caps))
                return CL_E_INTERNAL;
            continue;
        }
        if (v >= at->tensors && v < at->nodes)
            reached_tensor(b, w, j, v, best);
        b->out->v[j].nodes += v >= at->nodes && v < at->storages;
        for (uint32_t e = b->first[v]; e < b->first[v + 1]; e++) {
            uint32_t d = b->dst[e];
            if (w->stamp[d] == stamp || !w->relevant[d] || is_barrier(b, d))
                continue;
            w->stamp[d] = stamp;
            w->parent[d] = e;
            w->from[d] = v;
            w->depth[d] = w->depth[v] + 1;
            w->indices[d] = w->indices[v] + index_step(b, b->origin[e]);
            w->autograd[d] = w->autograd[v] || (v >= at->nodes && v < at->storages);
            w->queue[tail++] = d;
        }
    }
    return 0;
}

/* Preferred first: root kind, Python references over autograd graphs, fewer indices, shorter,
 * then the holder's name. */
static int by_preference(const void *x, const void *y, void *arg)
{
    const struct builder *b = arg;
    const struct cl_storage_holder *a = x, *c = y;
    const struct cl_holder *ha = &b->out->v[a->holder], *hc = &b->out->v[c->holder];
    uint64_t ka[4] = {b->h->root_kinds[ha->root], a->via_autograd, a->indices, a->steps};
    uint64_t kc[4] = {b->h->root_kinds[hc->root], c->via_autograd, c->indices, c->steps};
    for (int k = 0; k < 4; k++)
        if (ka[k] != kc[k])
            return ka[k] < kc[k] ? -1 : 1;
    return strcmp(ha->name, hc->name);
}

static int walk_holders(struct builder *b)
{
    const struct layout *at = &b->at;
    struct cl_holders *hs = b->out;
    struct walk w = {0};
    size_t *caps = calloc(b->tt->nstorages + 1, sizeof *caps);
    uint64_t *best = malloc((b->tt->n + 1) * sizeof *best);
    int rc = CL_E_INTERNAL;
    if (!caps || !best || !(w.stamp = calloc(at->n, sizeof *w.stamp)) ||
        !(w.parent = malloc((size_t)at->n * sizeof *w.parent)) ||
        !(w.from = malloc((size_t)at->n * sizeof *w.from)) ||
        !(w.depth = malloc((size_t)at->n * sizeof *w.depth)) ||
        !(w.indices = malloc((size_t)at->n * sizeof *w.indices)) || !(w.autograd = malloc(at->n)) ||
        !(w.queue = malloc((size_t)at->n * sizeof *w.queue)) || find_relevant(b, &w))
        goto out;
    for (uint32_t k = 0; k < b->tt->n; k++)
        best[k] = UINT64_MAX;
    rc = 0;
    for (uint32_t j = 0; !rc && j < hs->n; j++)
        if (w.relevant[heap_vertex(b, b->holders[j].target)] &&
            !is_barrier(b, heap_vertex(b, b->holders[j].target)))
            rc = walk_holder(b, &w, j, caps, best);
    if (w.visits >= MAX_VISITS)
        cl_note_add(&hs->warnings,
                    "holder walks stopped after %llu steps: some holders' paths and "
                    "reachable bytes are missing",
                    (unsigned long long)MAX_VISITS);
    for (uint32_t s = 0; s < b->tt->nstorages; s++)
        if (hs->storages[s].n > 1)
            qsort_r(hs->storages[s].v, hs->storages[s].n, sizeof *hs->storages[s].v, by_preference,
                    b);
out:
    free(caps);
    free(best);
    free(w.stamp);
    free(w.parent);
    free(w.from);
    free(w.depth);
    free(w.indices);
    free(w.autograd);
    free(w.queue);
    free(w.relevant);
    return rc;
}

/* ---- the model ---- */

static int name_holders(struct builder *b)
{
    struct cl_holders *hs = b->out;
    if (!(hs->v = calloc(b->nholders + 1, sizeof *hs->v)))
        return CL_E_INTERNAL;
    for (size_t j = 0; j < b->nholders; j++) {
        char buf[4096];
        const struct pending *p = &b->holders[j];
        py_heap_render(b->h, b->h->roots[p->root], p->steps, p->nsteps, buf, sizeof buf);
        hs->v[j].root = p->root;
        if (!(hs->v[j].name = strdup(buf)))
            return CL_E_INTERNAL;
        hs->n = (uint32_t)j + 1;
    }
    return 0;
}

static int label_nodes(struct builder *b)
{
    const struct torch_tensors *tt = b->tt;
    if (!(b->arrow = malloc((tt->nnodes + 1) * sizeof *b->arrow)) ||
        !(b->grad_fn = malloc((tt->nnodes + 1) * sizeof *b->grad_fn)))
        return CL_E_INTERNAL;
    for (uint32_t g = 0; g < tt->nnodes; g++) {
        snprintf(b->arrow[g], sizeof b->arrow[g], " → %s", tt->nodes[g].name);
        snprintf(b->grad_fn[g], sizeof b->grad_fn[g], ".grad_fn → %s", tt->nodes[g].name);
    }
    return 0;
}

static void held_by(struct builder *b)
{
    for (uint32_t s = 0; s < b->tt->nstorages; s++) {
        struct cl_storage_holders *sh = &b->out->storages[s];
        const struct torch_storage *st = &b->tt->storages[s];
        sh->bytes = b->bytes[s];
        sh->held_by = CL_HELD_UNKNOWN;
        for (uint32_t k = 0; k < sh->n; k++)
            sh->held_by = sh->v[k].via_autograd && sh->held_by != CL_HELD_PYTHON ? CL_HELD_AUTOGRAD
                                                                                 : CL_HELD_PYTHON;
        for (uint32_t k = 0; !sh->n && k < st->ntensors; k++)
            if (b->tt->v[st->tensors[k]].pyobj)
                sh->held_by = CL_HELD_UNREACHABLE;
    }
}

int cl_holders_build(struct py_heap *h, const struct torch_tensors *tt,
                     const struct cc_allocator *a, struct cl_holders *out, struct cl_error *err)
{
    struct builder b = {.h = h, .tt = tt, .a = a, .out = out};
    memset(out, 0, sizeof *out);
    int rc = find_holders(&b);
    struct layout *at = &b.at;
    at->roots = 1;
    at->holders = at->roots + h->nroots;
    at->heap = at->holders + (uint32_t)b.nholders;
    at->tensors = at->heap + h->n;
    at->nodes = at->tensors + tt->n;
    at->storages = at->nodes + tt->nnodes;
    at->n = at->storages + tt->nstorages;
    if (!rc && ((uint64_t)h->n + b.nholders + tt->n + tt->nnodes + tt->nstorages + h->nroots >=
                UINT32_MAX))
        rc = CL_E_INTERNAL;
    for (uint32_t k = 0; !rc && k < tt->n; k++) {
        bool inserted;
        if (tt->v[k].pyobj && cl_addrmap_put(&b.tensor_of, cl_addrmap_number_key(tt->v[k].node), k,
                                             &inserted) == UINT32_MAX)
            rc = CL_E_INTERNAL;
    }
    if (!rc && (!(out->storages = calloc(tt->nstorages + 1, sizeof *out->storages)) ||
                !(out->tensor_paths = calloc(tt->n + 1, sizeof *out->tensor_paths))))
        rc = CL_E_INTERNAL;
    out->nstorages = tt->nstorages;
    out->ntensors = tt->n;
    if (!rc)
        rc = name_holders(&b);
    if (!rc)
        rc = label_nodes(&b);
    if (!rc)
        rc = storage_bytes(&b);
    if (!rc)
        rc = build_graph(&b);
    if (!rc)
        rc = retained(&b);
    if (!rc)
        rc = walk_holders(&b);
    if (!rc)
        held_by(&b);
    free(b.barrier);
    free(b.holders);
    free(b.root_edge_holder);
    cl_addrmap_free(&b.ns_first);
    cl_addrmap_free(&b.tensor_of);
    free(b.first);
    free(b.dst);
    free(b.origin);
    free(b.arrow);
    free(b.grad_fn);
    free(b.bytes);
    free(b.device);
    if (rc) {
        cl_holders_free(out);
        return cl_error_set(err, CL_E_INTERNAL, "out of memory computing holders");
    }
    return 0;
}

void cl_holders_free(struct cl_holders *hs)
{
    for (uint32_t j = 0; j < hs->n; j++)
        free(hs->v[j].name);
    free(hs->v);
    for (uint32_t s = 0; hs->storages && s < hs->nstorages; s++) {
        for (uint32_t k = 0; k < hs->storages[s].n; k++)
            free(hs->storages[s].v[k].path);
        free(hs->storages[s].v);
    }
    free(hs->storages);
    for (uint32_t k = 0; hs->tensor_paths && k < hs->ntensors; k++)
        free(hs->tensor_paths[k]);
    free(hs->tensor_paths);
    free(hs->warnings);
    memset(hs, 0, sizeof *hs);
}

int cl_holders_device(const struct cl_holders *hs, int8_t type, int8_t index)
{
    for (uint32_t d = 0; d < hs->ndevices; d++)
        if (hs->devices[d].type == type && hs->devices[d].index == index)
            return (int)d;
    return -1;
}

const char *cl_held_by_name(enum cl_held_by h)
{
    static const char *const names[] = {"python", "autograd", "unreachable", "unknown"};
    return names[h];
}
