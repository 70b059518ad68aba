/* Building the holder model on the holders' graph (holders/graph.h): the dominator tree of the
 * part of it that reaches a storage for retained bytes; a walk from every holder that reaches any
 * storage for reachable bytes and paths. */
#include "holders/holders.h"
#include "cpython/balance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/path.h"
#include "graph/dominators.h"
#include "holders/graph.h"
#include "util/notes.h"
#include "util/vec.h"

#define NONE HG_NONE
#define NOT_HOLDER HG_NOT_HOLDER
#define MAX_VISITS 500000000ull      /* vertex visits over all holders' walks */

struct builder {
    struct py_heap *h;
    const struct torch_tensors *tt;
    const struct cc_allocator *a;
    struct cl_holders *out;
    struct holder_graph g;
    uint32_t *model;             /* per holder of g: its index in out->v, or NOT_HOLDER */
    char (*arrow)[72], (*grad_fn)[80];   /* per node class: " → Name", ".grad_fn → Name" */
    char (*bucket)[48];          /* per bucket index: ".buckets[i].gradients" (a DDP Reducer's) */
    uint64_t *bytes;             /* per storage */
    int *device;                 /* per storage: index into out->devices */
    struct cl_drill_options drill;
    uint32_t *drill_at;          /* per sub-vertex: the drill entry it is, or NONE */
    size_t drills_cap;
    struct cl_storage_holder *found; /* storages' holders as the walks find them, */
    uint32_t *found_storage;         /* and the storage each is of */
    size_t nfound, found_cap;
};

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
    /* a device whose allocator holds memory no storage is in (a C++ owner's, the cache) */
    for (uint32_t d = 0; b->a && d < b->a->ndevices; d++)
        (void)device_of(b->out, TORCH_DEVICE_CUDA, (int8_t)b->a->devices[d].index);
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

/* Each holder's bytes by device, now that the devices are known: most heaps have one or two,
 * and a holder per module global. */
static int holder_bytes(struct builder *b)
{
    struct cl_holders *hs = b->out;
    size_t nd = hs->ndevices;
    if (!(hs->device_bytes = calloc(2 * nd * hs->n + 1, sizeof *hs->device_bytes)))
        return CL_E_INTERNAL;
    for (uint32_t j = 0; j < hs->n; j++) {
        hs->v[j].retained = hs->device_bytes + 2 * nd * j;
        hs->v[j].reachable = hs->v[j].retained + nd;
    }
    return 0;
}

/* ---- retained bytes ---- */

/* Whether the drill-down may go into sub-vertex x: a Python object or a tensor, not a module. */
static bool drill_enterable(void *arg, uint32_t x)
{
    const struct builder *b = arg;
    uint32_t v = b->g.sub.vertex[x];
    return v >= b->g.at.heap && v < b->g.at.nodes && !holder_graph_barrier(&b->g, v);
}

/* Each holder's drill-down (holders/drill.h) on the dominator tree: idom over the reachable
 * sub-vertices in order (each after its dominator), per sub-vertex its retained bytes. */
static int drill_holders(struct builder *b, const uint32_t *idom, const uint32_t *order,
                         uint32_t nordered, const uint64_t *ret)
{
    const struct hg_subgraph *sg = &b->g.sub;
    struct cl_holders *hs = b->out;
    uint32_t *first = calloc((size_t)sg->n + 2, sizeof *first),
             *child = malloc(((size_t)nordered + 1) * sizeof *child);
    b->drill_at = malloc(((size_t)sg->n + 1) * sizeof *b->drill_at);
    int rc = first && child && b->drill_at ? 0 : CL_E_INTERNAL;
    for (uint32_t k = 1; !rc && k < nordered; k++) /* children that retain any, by parent */
        first[idom[order[k]] + 2] += ret[order[k]] > 0;
    for (uint32_t x = 0; !rc && x < sg->n; x++)
        first[x + 2] += first[x + 1];
    for (uint32_t k = 1; !rc && k < nordered; k++)
        if (ret[order[k]] > 0)
            child[first[idom[order[k]] + 1]++] = order[k];
    for (uint32_t x = 0; !rc && x < sg->n; x++)
        b->drill_at[x] = NONE;
    struct cl_dom_tree t = {sg->n, ret, first, child};
    for (uint32_t k = 0; !rc && k < b->g.nholders; k++) {
        uint32_t j = b->model[k], hx = hg_sub_vertex(sg, b->g.at.holders + k);
        if (j == NOT_HOLDER || hx == NONE || ret[hx] == 0)
            continue;
        size_t at = hs->ndrills;
        if (!cl_drill_holder(&t, hx, &b->drill, drill_enterable, b, &hs->drills, &hs->ndrills,
                             &b->drills_cap)) {
            rc = CL_E_INTERNAL;
            break;
        }
        hs->v[j].drill = (uint32_t)at;
        hs->v[j].ndrill = (uint32_t)(hs->ndrills - at);
        for (size_t i = at; i < hs->ndrills; i++)
            b->drill_at[hs->drills[i].vertex] = (uint32_t)i;
    }
    free(first);
    free(child);
    return rc;
}

/* On the subgraph: every path from the super-root to a storage lies in it, so its dominators
 * there are the whole graph's. */
static int retained(struct builder *b)
{
    const struct hg_layout *at = &b->g.at;
    const struct hg_subgraph *sg = &b->g.sub;
    struct cl_graph g = {sg->n, sg->first, sg->dst};
    uint32_t *idom = malloc(((size_t)sg->n + 1) * sizeof *idom),
             *order = malloc(((size_t)sg->n + 1) * sizeof *order);
    uint64_t *ret = calloc((size_t)sg->n + 1, sizeof *ret); /* per sub-vertex: bytes retained */
    uint32_t nordered = 0;
    int rc = idom && order && ret ? cl_dominators(&g, hg_sub_vertex(sg, 0), idom, order, &nordered)
                                  : CL_E_INTERNAL;
    /* nearest holder (a vertex) above each sub-vertex in the dominator tree, reusing order's
     * preorder */
    uint32_t *near = rc ? NULL : malloc(((size_t)sg->n + 1) * sizeof *near);
    if (!rc && !near)
        rc = CL_E_INTERNAL;
    for (uint32_t k = 0; !rc && k < nordered; k++) {
        uint32_t x = order[k], v = sg->vertex[x];
        bool holder = v >= at->holders && v < at->heap;
        near[x] = holder ? v : k == 0 ? NOT_HOLDER : near[idom[x]];
    }
    for (uint32_t s = 0; !rc && s < b->tt->nstorages; s++) {
        uint32_t x = hg_sub_vertex(sg, at->storages + s);
        b->out->storages[s].retainer = CL_NO_RETAINER;
        if (x == NONE || idom[x] == NONE || near[x] == NOT_HOLDER || b->device[s] < 0)
            continue;
        uint32_t holder = b->model[near[x] - at->holders];
        b->out->storages[s].retainer = holder;
        b->out->v[holder].retained[b->device[s]] += b->bytes[s];
        ret[x] = b->bytes[s];
    }
    for (uint32_t k = nordered; !rc && k-- > 1;)
        ret[idom[order[k]]] += ret[order[k]];
    if (!rc)
        rc = drill_holders(b, idom, order, nordered, ret);
    free(idom);
    free(order);
    free(near);
    free(ret);
    return rc;
}

/* The storages the objects C holds reach (the super-root's edges into the heap, rather than to
 * roots), breadth first over the subgraph. */
static int reached_from_c(struct builder *b)
{
    const struct hg_subgraph *sg = &b->g.sub;
    uint32_t root = hg_sub_vertex(sg, 0), tail = 0;
    uint8_t *seen = calloc((size_t)sg->n + 1, 1);
    uint32_t *queue = malloc(((size_t)sg->n + 1) * sizeof *queue);
    if (!seen || !queue || root == NONE) {
        free(seen);
        free(queue);
        return root == NONE ? 0 : CL_E_INTERNAL;
    }
    seen[root] = 1;
    for (uint32_t e = sg->first[root]; e < sg->first[root + 1]; e++)
        if (sg->vertex[sg->dst[e]] >= b->g.at.heap && !seen[sg->dst[e]]) {
            seen[sg->dst[e]] = 1;
            queue[tail++] = sg->dst[e];
        }
    for (uint32_t head = 0; head < tail; head++) {
        uint32_t x = queue[head], v = sg->vertex[x];
        if (v >= b->g.at.storages)
            b->out->storages[v - b->g.at.storages].from_c = true;
        for (uint32_t e = sg->first[x]; e < sg->first[x + 1]; e++)
            if (!seen[sg->dst[e]]) {
                seen[sg->dst[e]] = 1;
                queue[tail++] = sg->dst[e];
            }
    }
    free(seen);
    free(queue);
    return 0;
}

/* ---- walks from each holder ---- */

/* The walk's frontier: a binary min-heap of (key, sub-vertex), an entry left behind when a better
 * path to its vertex was found after it (skipped when it comes out). Of equal keys the first
 * pushed comes out first (seq), as a breadth-first walk has them: the first index of a list. */
struct frontier_entry {
    uint64_t key, seq;
    uint32_t x;
};

static bool frontier_before(const struct frontier_entry *a, const struct frontier_entry *b)
{
    return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

struct walk {
    /* per sub-vertex, for the current holder's walk: the edge that reached it and the sub-vertex
     * it left from, how deep it is (UNSEEN before the walk reaches it: each walk resets the ones
     * it queued) and how many of those steps are indices */
    uint32_t *parent, *from, *depth, *indices, *queue;
    uint8_t *flags; /* PATH_AUTOGRAD, PATH_OF_TENSOR, PATH_DONE */
    uint8_t *relevant; /* reaches a storage without passing a barrier */
    uint32_t holder; /* the sub-vertex of the walk's holder */
    uint64_t visits;
    struct frontier_entry *frontier;
    size_t nfrontier, frontier_cap;
    uint64_t pushed;
};

#define UNSEEN UINT32_MAX

enum {
    PATH_AUTOGRAD = 1, /* the path to it passes through an autograd node */
    PATH_OF_TENSOR = 2, /* a tensor whose shown path this walk rendered */
    PATH_DONE = 4, /* its preferred path is known: it came out of the frontier */
};

/* Whether sub-vertex x is a root, a namespace dict or a module. */
static bool is_barrier(const struct builder *b, uint32_t x)
{
    return holder_graph_barrier(&b->g, b->g.sub.vertex[x]);
}

/* Sub-vertices that reach a storage without passing a barrier, found backwards from the
 * storages. */
static int find_relevant(struct builder *b, struct walk *w)
{
    const struct hg_subgraph *g = &b->g.sub;
    uint32_t *rfirst = calloc((size_t)g->n + 2, sizeof *rfirst),
             *rsrc = malloc((g->nedges + 1) * sizeof *rsrc);
    if (!rfirst || !rsrc || !(w->relevant = calloc((size_t)g->n + 1, 1))) {
        free(rfirst);
        free(rsrc);
        return CL_E_INTERNAL;
    }
    for (size_t e = 0; e < g->nedges; e++)
        rfirst[g->dst[e] + 2]++;
    for (uint32_t x = 0; x < g->n; x++)
        rfirst[x + 2] += rfirst[x + 1];
    for (uint32_t x = 0; x < g->n; x++)
        for (uint32_t e = g->first[x]; e < g->first[x + 1]; e++)
            rsrc[rfirst[g->dst[e] + 1]++] = x;
    size_t head = 0, tail = 0;
    for (uint32_t s = 0; s < b->tt->nstorages; s++) {
        uint32_t x = hg_sub_vertex(g, b->g.at.storages + s);
        if (x != NONE) {
            w->relevant[x] = 1;
            w->queue[tail++] = x;
        }
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
                      base[] = "._base", packed[] = " (saved, packed by a hook)",
                      hook[] = " (its saved_tensors_hooks function)", node_hooks[] = " (its hooks)";
    uint32_t heap_ids = py_edge_ids(b->h);
    uint64_t obj =
        dst >= b->g.at.heap && dst < b->g.at.tensors ? b->h->nodes[dst - b->g.at.heap].addr : 0;
    if (origin == HG_ORIGIN_HIDDEN)
        return (struct py_step){PY_E_HIDDEN, 0, obj};
    if (origin < heap_ids)
        return py_edge_step(b->h, origin, obj);
    const struct torch_link *l = &b->tt->links[origin - heap_ids];
    const char *text = NULL;
    switch ((enum torch_link_kind)l->kind) {
    case TORCH_LINK_GRAD_FN: text = b->grad_fn[b->tt->nodes[dst - b->g.at.nodes].name]; break;
    case TORCH_LINK_NEXT:
    case TORCH_LINK_SAVED_NODE: text = b->arrow[b->tt->nodes[dst - b->g.at.nodes].name]; break;
    case TORCH_LINK_SAVED: text = saved; break;
    case TORCH_LINK_VARIABLE: text = variable; break;
    case TORCH_LINK_GRAD: text = grad; break;
    case TORCH_LINK_VIEW_BASE: text = base; break;
    case TORCH_LINK_PACKED: text = packed; break;
    case TORCH_LINK_HOOK: text = hook; break;
    case TORCH_LINK_NODE_HOOKS: text = node_hooks; break;
    case TORCH_LINK_BUCKET: { /* the source's links of a kind are in read order: bucket order */
        size_t i = 0;
        for (const struct torch_link *p = l; p > b->tt->links && p[-1].kind == l->kind &&
                                             p[-1].src == l->src && p[-1].src_end == l->src_end;
             p--)
            i++;
        text = b->bucket[i];
        break;
    }
    case TORCH_LINK_PYOBJ:
    case TORCH_LINK_CONTEXT:
    case TORCH_LINK_CDATA: return (struct py_step){PY_E_HIDDEN, 0, obj};
    }
    return (struct py_step){PY_E_CXX, (uint64_t)(uintptr_t)text, obj};
}


/* Whether the edge with this origin reads as an index: [3], [*d][i], or a key that is not a str
 * (a str key is how attributes are stored: obj.__dict__['w'] and model._parameters['w'] read
 * as .w). */
static bool index_step(const struct builder *b, uint32_t origin)
{
    if (origin >= py_edge_ids(b->h))
        return false;
    struct py_step s = py_edge_step(b->h, origin, 0);
    if (s.edge != PY_E_KEY)
        return s.edge == PY_E_INDEX || s.edge == PY_E_DICTKEY || s.edge == PY_E_SETITEM;
    const struct py_type *ty = py_object_type(&b->h->objects, s.payload);
    return !ty || ty->family != PY_F_STR;
}

/* The key a path is preferred by within a walk (lower first), as preference() orders the paths
 * of different holders: Python references over a path through an autograd graph, then fewer
 * indices, then fewer steps. */
static uint64_t path_key(bool autograd, uint32_t indices, uint32_t depth)
{
    return (uint64_t)autograd << 59 | (uint64_t)(indices < 0x7ffffff ? indices : 0x7ffffff) << 32 |
           depth;
}

/* The key of the path a walk has to sub-vertex x. */
static uint64_t walk_key(const struct walk *w, uint32_t x)
{
    return path_key(w->flags[x] & PATH_AUTOGRAD, w->indices[x], w->depth[x]);
}

/* How a path from holder j to sub-vertex x is preferred, lower first: its root's kind, then
 * Python references over a path through an autograd graph, then fewer indices, then its length. */
static uint64_t preference(const struct builder *b, const struct walk *w, uint32_t j, uint32_t x)
{
    return (uint64_t)b->h->root_kinds[b->out->v[j].root] << 60 | walk_key(w, x);
}

static bool is_graph_node(const struct builder *b, uint32_t v)
{
    return v >= b->g.at.nodes && v < b->g.at.storages;
}

#define PATH_ENDS 128 /* steps kept at each end of a longer path (a graph 60,000 nodes deep) */

/* The path from holder j to sub-vertex x as text, whether it passes through an autograd node,
 * and how many of its steps are indices. A path of more than 2 * PATH_ENDS steps keeps its ends
 * and says how many steps it leaves out. A text equal to same is same. NULL on allocation
 * failure. */
static const char *path_to(struct builder *b, struct walk *w, uint32_t j, uint32_t x,
                           const char *same, bool *via_autograd, uint32_t *indices)
{
    struct py_step steps[2 * PATH_ENDS + 1];
    uint32_t depth = w->depth[x];
    bool elide = depth > 2 * PATH_ENDS;
    char elided[48]; /* what the arrow leaves out */
    if (elide)
        snprintf(elided, sizeof elided, PY_PATH_ELISION "%u steps…", depth - 2 * PATH_ENDS);
    size_t n = 0;
    *via_autograd = false;
    *indices = w->indices[x];
    for (uint32_t c = x; c != w->holder;) { /* from x up: its last steps, then its first ones */
        uint32_t e = w->parent[c];
        if (!elide || w->depth[c] > depth - PATH_ENDS || w->depth[c] <= PATH_ENDS)
            steps[n++] = step_of(b, b->g.sub.origin[e], b->g.sub.vertex[c]);
        if (elide && w->depth[c] == depth - PATH_ENDS + 1)
            steps[n++] = (struct py_step){PY_E_CXX, (uint64_t)(uintptr_t)elided, 0};
        c = w->from[c];
        *via_autograd |= is_graph_node(b, b->g.sub.vertex[c]);
    }
    for (size_t a = 0, z = n ? n - 1 : 0; a < z; a++, z--) {
        struct py_step t = steps[a];
        steps[a] = steps[z];
        steps[z] = t;
    }
    char buf[8192];
    py_heap_render(b->h, b->out->v[j].name, steps, n, buf, sizeof buf);
    return same && strcmp(buf, same) == 0 ? same : cl_strings_add(&b->out->texts, buf);
}

static bool add_storage_holder(struct builder *b, uint32_t s, struct cl_storage_holder x)
{
    if (b->nfound == b->found_cap) {
        size_t cap = b->found_cap;
        if (!cl_vec_grow((void **)&b->found, &cap, sizeof *b->found) ||
            !cl_vec_resize((void **)&b->found_storage, cap, sizeof *b->found_storage))
            return false;
        b->found_cap = cap;
    }
    b->found[b->nfound] = x;
    b->found_storage[b->nfound++] = s;
    b->out->storages[s].n++;
    return true;
}

/* Storage s, sub-vertex x, reached from holder j: its path and bytes. */
static int reached_storage(struct builder *b, struct walk *w, uint32_t j, uint32_t s, uint32_t x)
{
    uint32_t from = b->g.sub.vertex[w->from[x]];
    bool by_tensor = from >= b->g.at.tensors && from < b->g.at.nodes; /* else a storage object */
    uint32_t tensor = by_tensor ? from - b->g.at.tensors : UINT32_MAX;
    struct cl_storage_holder sh = {.holder = j,
                                   .tensor = tensor,
                                   .steps = w->depth[x],
                                   .indices = w->indices[x],
                                   .via_autograd = w->flags[x] & PATH_AUTOGRAD,
                                   .path = by_tensor ? b->out->tensor_paths[tensor] : NULL};
    /* The step from a tensor to its storage prints nothing, so the path to the storage is its
     * tensor's when this walk rendered that, unless one more step elides it elsewhere. Else it
     * is most often the one its tensor got from another walk, which it then shares. */
    if (!by_tensor || !(w->flags[w->from[x]] & PATH_OF_TENSOR) || sh.steps > 2 * PATH_ENDS)
        sh.path = path_to(b, w, j, x, sh.path, &sh.via_autograd, &sh.indices);
    if (!sh.path || !add_storage_holder(b, s, sh))
        return CL_E_INTERNAL;
    if (b->device[s] >= 0)
        b->out->v[j].reachable[b->device[s]] += b->bytes[s];
    b->out->v[j].storages++;
    b->out->v[j].saved += sh.via_autograd;
    return 0;
}

/* Tensor k, sub-vertex x, reached from holder j: its path, when preferred to any before. */
static void reached_tensor(struct builder *b, struct walk *w, uint32_t j, uint32_t k, uint32_t x,
                           uint64_t *best)
{
    uint32_t indices;
    uint64_t key = preference(b, w, j, x);
    bool via;
    if (key >= best[k])
        return;
    const char *p = path_to(b, w, j, x, NULL, &via, &indices);
    if (p) {
        b->out->tensor_paths[k] = p;
        best[k] = key;
        w->flags[x] |= PATH_OF_TENSOR;
    }
}

static bool frontier_push(struct walk *w, uint64_t key, uint32_t x)
{
    if (!CL_VEC_RESERVE(w->frontier, w->nfrontier, w->frontier_cap))
        return false;
    struct frontier_entry in = {key, w->pushed++, x};
    size_t i = w->nfrontier++;
    for (; i && frontier_before(&in, &w->frontier[(i - 1) / 2]); i = (i - 1) / 2)
        w->frontier[i] = w->frontier[(i - 1) / 2];
    w->frontier[i] = in;
    return true;
}

static struct frontier_entry frontier_pop(struct walk *w)
{
    struct frontier_entry top = w->frontier[0], last = w->frontier[--w->nfrontier];
    size_t i = 0, n = w->nfrontier;
    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && frontier_before(&w->frontier[c + 1], &w->frontier[c]))
            c++;
        if (!frontier_before(&w->frontier[c], &last))
            break;
        w->frontier[i] = w->frontier[c];
    }
    if (n)
        w->frontier[i] = last;
    return top;
}

/* The path from holder j to sub-vertex x, a drill entry's (holders/drill.h). */
static int drill_path(struct builder *b, struct walk *w, uint32_t j, uint32_t x)
{
    bool via;
    uint32_t indices;
    struct cl_drill *d = &b->out->drills[b->drill_at[x]];
    if (d->path)
        return 0;
    d->path = path_to(b, w, j, x, NULL, &via, &indices);
    return d->path ? 0 : CL_E_INTERNAL;
}

/* From holder j (sub-vertex hx) over relevant sub-vertices, not entering barriers, each reached
 * by its preferred path (walk_key): a parameter a Trainer holds is named through its model
 * (trainer.model[2].weight) rather than through its optimizer's keys, shorter as that is. */
static int walk_holder(struct builder *b, struct walk *w, uint32_t j, uint32_t hx, uint64_t *best)
{
    const struct hg_layout *at = &b->g.at;
    const struct hg_subgraph *g = &b->g.sub;
    size_t touched = 0; /* w->queue: the sub-vertices this walk set, to reset at its end */
    int rc = 0;
    w->holder = hx;
    w->depth[hx] = 0;
    w->indices[hx] = 0;
    w->flags[hx] = 0;
    w->queue[touched++] = hx;
    w->nfrontier = 0;
    if (!frontier_push(w, 0, hx))
        rc = CL_E_INTERNAL;
    while (!rc && w->nfrontier && w->visits < MAX_VISITS) {
        struct frontier_entry top = frontier_pop(w);
        uint32_t x = top.x, v = g->vertex[x];
        if (top.key != walk_key(w, x) || (w->flags[x] & PATH_DONE))
            continue; /* a better path to x came out before */
        w->flags[x] |= PATH_DONE;
        w->visits++;
        if (b->drill_at[x] != NONE && (rc = drill_path(b, w, j, x)))
            break;
        if (v >= at->storages) {
            rc = reached_storage(b, w, j, v - at->storages, x);
            continue;
        }
        if (v >= at->tensors && v < at->nodes)
            reached_tensor(b, w, j, v - at->tensors, x, best);
        b->out->v[j].nodes += is_graph_node(b, v);
        bool autograd = (w->flags[x] & PATH_AUTOGRAD) || is_graph_node(b, v);
        for (uint32_t e = g->first[x]; !rc && e < g->first[x + 1]; e++) {
            uint32_t d = g->dst[e];
            if (!w->relevant[d] || is_barrier(b, d))
                continue;
            bool seen = w->depth[d] != UNSEEN;
            uint32_t indices = w->indices[x] + index_step(b, g->origin[e]);
            uint64_t key = path_key(autograd, indices, w->depth[x] + 1);
            if (seen && ((w->flags[d] & PATH_DONE) || key >= walk_key(w, d)))
                continue;
            if (!seen)
                w->queue[touched++] = d;
            w->parent[d] = e;
            w->from[d] = x;
            w->depth[d] = w->depth[x] + 1;
            w->indices[d] = indices;
            w->flags[d] = autograd ? PATH_AUTOGRAD : 0;
            if (!frontier_push(w, key, d))
                rc = CL_E_INTERNAL;
        }
    }
    while (touched)
        w->depth[w->queue[--touched]] = UNSEEN;
    return rc;
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
    const struct hg_subgraph *g = &b->g.sub;
    struct cl_holders *hs = b->out;
    struct walk w = {0};
    size_t n = (size_t)g->n + 1;
    uint64_t *best = malloc((b->tt->n + 1) * sizeof *best);
    int rc = CL_E_INTERNAL;
    /* room for a holder a storage from the start: most have one, and a vector doubling from
     * less would leave its old copies behind */
    b->found_cap = b->tt->nstorages + 1;
    if (!best || !(b->found = malloc(b->found_cap * sizeof *b->found)) ||
        !(b->found_storage = malloc(b->found_cap * sizeof *b->found_storage)) ||
        !(w.parent = malloc(n * sizeof *w.parent)) || !(w.from = malloc(n * sizeof *w.from)) ||
        !(w.depth = malloc(n * sizeof *w.depth)) || !(w.indices = malloc(n * sizeof *w.indices)) ||
        !(w.flags = malloc(n)) || !(w.queue = malloc(n * sizeof *w.queue)) || find_relevant(b, &w))
        goto out;
    for (uint32_t k = 0; k < b->tt->n; k++)
        best[k] = UINT64_MAX;
    for (size_t x = 0; x < n; x++)
        w.depth[x] = UNSEEN;
    rc = 0;
    for (uint32_t k = 0; !rc && k < b->g.nholders; k++) { /* in the graph's order, as named */
        uint32_t j = b->model[k], hx = hg_sub_vertex(g, b->g.at.holders + k),
                 tx = hg_sub_vertex(g, b->g.at.heap + holder_graph_target(&b->g, k));
        if (j != NOT_HOLDER && tx != NONE && w.relevant[tx] && !is_barrier(b, tx))
            rc = walk_holder(b, &w, j, hx, best);
    }
    if (w.visits >= MAX_VISITS)
        cl_note_add(&hs->warnings,
                    "holder walks stopped after %llu steps: some holders' paths and "
                    "reachable bytes are missing",
                    (unsigned long long)MAX_VISITS);
out:
    free(best);
    free(w.parent);
    free(w.from);
    free(w.depth);
    free(w.indices);
    free(w.flags);
    free(w.queue);
    free(w.frontier);
    free(w.relevant);
    return rc;
}

/* The storages' holders moved into one array, storage by storage in the order found (a heap of
 * a job's history has hundreds of thousands of storages, most with one holder), each storage's
 * preferred first. */
static int place_storage_holders(struct builder *b)
{
    struct cl_holders *hs = b->out;
    if (!(hs->storage_holders = malloc((b->nfound + 1) * sizeof *hs->storage_holders)))
        return CL_E_INTERNAL;
    size_t at = 0;
    for (uint32_t s = 0; s < hs->nstorages; s++) {
        hs->storages[s].v = hs->storages[s].n ? hs->storage_holders + at : NULL;
        at += hs->storages[s].n;
        hs->storages[s].n = 0;
    }
    for (size_t k = 0; k < b->nfound; k++) {
        struct cl_storage_holders *sh = &hs->storages[b->found_storage[k]];
        sh->v[sh->n++] = b->found[k];
    }
    free(b->found);
    free(b->found_storage);
    b->found = NULL;
    b->found_storage = NULL;
    for (uint32_t s = 0; s < hs->nstorages; s++)
        if (hs->storages[s].n > 1)
            qsort_r(hs->storages[s].v, hs->storages[s].n, sizeof *hs->storages[s].v, by_preference,
                    b);
    return 0;
}

/* ---- the model ---- */

/* The model's holders: those in the subgraph (a heap has a holder per module global, and most
 * reach no storage), in the graph's order. */
static int name_holders(struct builder *b)
{
    struct cl_holders *hs = b->out;
    const struct py_heap *h = b->h;
    if (!(b->model = malloc((b->g.nholders + 1) * sizeof *b->model)))
        return CL_E_INTERNAL;
    uint32_t n = 0;
    for (size_t j = 0; j < b->g.nholders; j++)
        n += hg_sub_vertex(&b->g.sub, b->g.at.holders + j) != NONE;
    if (!(hs->v = calloc((size_t)n + 1, sizeof *hs->v)))
        return CL_E_INTERNAL;
    for (size_t j = 0; j < b->g.nholders; j++) {
        b->model[j] = NOT_HOLDER;
        if (hg_sub_vertex(&b->g.sub, b->g.at.holders + j) == NONE)
            continue;
        const struct hg_holder *p = &b->g.holders[j];
        const struct py_root_edge *r = &h->root_edges[p->root_edge];
        struct py_step steps[2] = {r->step};
        if (p->entry != NONE)
            steps[1] = py_edge_step(h, p->entry, h->nodes[py_edge_dst(h, p->entry)].addr);
        char buf[4096];
        py_heap_render(b->h, h->roots[r->root], steps, p->entry != NONE ? 2 : 1, buf, sizeof buf);
        hs->v[hs->n].root = r->root;
        if (!(hs->v[hs->n].name = cl_strings_add(&hs->texts, buf)))
            return CL_E_INTERNAL;
        b->model[j] = hs->n++;
    }
    return 0;
}

static int label_nodes(struct builder *b)
{
    const struct torch_tensors *tt = b->tt;
    if (!(b->arrow = malloc((tt->nnames + 1) * sizeof *b->arrow)) ||
        !(b->grad_fn = malloc((tt->nnames + 1) * sizeof *b->grad_fn)))
        return CL_E_INTERNAL;
    for (uint32_t k = 0; k < tt->nnames; k++) {
        snprintf(b->arrow[k], sizeof b->arrow[k], " → %s", tt->names[k]);
        snprintf(b->grad_fn[k], sizeof b->grad_fn[k], ".grad_fn → %s", tt->names[k]);
    }
    size_t nbuckets = 0;
    for (size_t k = 0; k < tt->nlinks; k++)
        nbuckets += tt->links[k].kind == TORCH_LINK_BUCKET;
    if (!(b->bucket = malloc((nbuckets + 1) * sizeof *b->bucket)))
        return CL_E_INTERNAL;
    for (size_t k = 0; k < nbuckets; k++)
        snprintf(b->bucket[k], sizeof b->bucket[k], ".buckets[%zu].gradients", k);
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
        /* by its tensors; else by its storage object (which, while tensors hold the storage,
         * its StorageImpl holds, and which then holds nothing of its own) */
        for (uint32_t k = 0; !sh->n && k < (st->ntensors ? st->ntensors : 1); k++) {
            uint32_t node = st->ntensors ? b->tt->v[st->tensors[k]].node : st->pynode;
            if (node == PY_NO_NODE || sh->held_by == CL_HELD_FROM_C)
                continue;
            sh->held_by =
                py_books_held_from(b->h, node) == PY_NO_NODE ? CL_HELD_GARBAGE : CL_HELD_FROM_C;
        }
    }
}

int cl_holders_build(struct py_heap *h, const struct torch_tensors *tt,
                     const struct cc_allocator *a, const struct cl_drill_options *drill,
                     struct cl_holders *out, struct cl_error *err)
{
    struct builder b = {.h = h,
                        .tt = tt,
                        .a = a,
                        .out = out,
                        .drill = drill
                                     ? *drill
                                     : (struct cl_drill_options){CL_DRILL_DOMINANT_PCT,
                                                                 CL_DRILL_SPREAD, CL_DRILL_DEPTH}};
    memset(out, 0, sizeof *out);
    int rc = holder_graph_build(&b.g, h, tt);
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
        rc = holder_bytes(&b);
    if (!rc)
        rc = retained(&b);
    if (!rc)
        rc = reached_from_c(&b);
    if (!rc)
        rc = walk_holders(&b);
    if (!rc)
        rc = place_storage_holders(&b);
    if (!rc)
        held_by(&b);
    holder_graph_free(&b.g);
    free(b.model);
    free(b.arrow);
    free(b.grad_fn);
    free(b.bucket);
    free(b.bytes);
    free(b.device);
    free(b.found);
    free(b.found_storage);
    free(b.drill_at);
    if (rc) {
        cl_holders_free(out);
        return cl_error_set(err, CL_E_INTERNAL, "out of memory computing holders");
    }
    return 0;
}

void cl_holders_free(struct cl_holders *hs)
{
    free(hs->v);
    free(hs->device_bytes);
    free(hs->storage_holders);
    free(hs->storages);
    free(hs->tensor_paths);
    free(hs->drills);
    cl_strings_free(&hs->texts);
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
    static const char *const names[] = {"python", "autograd", "garbage", "held from C", "unknown"};
    return names[h];
}
