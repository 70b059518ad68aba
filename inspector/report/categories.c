#include "report/categories.h"

#include <stdlib.h>

#include "util/error.h"
#include "util/vec.h"

/* how deep an optimizer's state is read: state[param] -> its dict -> a value (a tensor, or a
 * list or tuple of them) -> a tensor in it; and what a saved_tensors_hooks pack function returned
 * (a tensor, or a tuple holding one: (device, copy)) */
#define STATE_DEPTH 3
#define PACKED_DEPTH 2

const char *cl_category_name(enum cl_category c)
{
    static const char *const names[] = {
        "parameters",         "gradients",     "optimizer state", "saved for backward",
        "held from C or C++", "other tensors", "allocator cache"};
    return names[c];
}

static void mark(const struct torch_tensors *tt, uint32_t tensor, enum cl_category c, uint8_t *out)
{
    uint32_t s = tensor < tt->n ? tt->v[tensor].storage_index : UINT32_MAX;
    if (s < tt->nstorages && c < out[s])
        out[s] = (uint8_t)c;
}

static bool container(struct py_heap *h, uint32_t node)
{
    enum py_family f = py_node_type(h, node)->family;
    return f == PY_F_DICT || f == PY_F_LIST || f == PY_F_TUPLE;
}

struct visit {
    uint32_t node, depth;
};

/* The tensors the object root holds, marked c: itself, or its values (not its keys: an
 * optimizer's state is keyed by the parameters), through dicts, lists and tuples, depth deep (a
 * crafted heap's sharing bounded by MAX_VISITS). False when out of memory. */
#define MAX_VISITS 10000000u
static bool mark_held(struct py_heap *h, const struct torch_tensors *tt, const uint32_t *tensor_of,
                      uint32_t root, uint32_t depth, enum cl_category c, uint8_t *out)
{
    struct visit *queue = NULL;
    size_t tail = 0, cap = 0;
    if (!CL_VEC_RESERVE(queue, tail, cap))
        return false;
    queue[tail++] = (struct visit){root, 0};
    for (size_t head = 0; head < tail && head < MAX_VISITS; head++) {
        struct visit v = queue[head];
        if (tensor_of[v.node] != UINT32_MAX) {
            mark(tt, tensor_of[v.node], c, out);
            continue;
        }
        if (v.depth == depth || !container(h, v.node))
            continue;
        for (uint32_t k = 0, m = py_node_nedges(h, v.node); k < m; k++) {
            uint32_t e = py_node_edge(h, v.node, k), d = py_edge_dst(h, e);
            if (d == PY_NO_NODE || py_edge_step(h, e, 0).edge == PY_E_DICTKEY ||
                e >= h->edges.n) /* a key, or the class */
                continue;
            if (!CL_VEC_RESERVE(queue, tail, cap)) {
                free(queue);
                return false;
            }
            queue[tail++] = (struct visit){d, v.depth + 1};
        }
    }
    free(queue);
    return true;
}

int cl_categories(struct py_heap *h, const struct torch_tensors *tt, const struct cl_holders *hs,
                  uint8_t *out)
{
    for (uint32_t s = 0; s < tt->nstorages; s++) {
        enum cl_held_by by = hs->storages[s].held_by;
        out[s] = by == CL_HELD_FROM_C || by == CL_HELD_UNKNOWN ? CL_CAT_CXX : CL_CAT_OTHER;
    }
    uint32_t *tensor_of = malloc(((size_t)h->n + 1) * sizeof *tensor_of);
    unsigned char *parameter = calloc(h->objects.ntypes + 1, 1),
                  *optimizer = calloc(h->objects.ntypes + 1, 1);
    int rc = tensor_of && parameter && optimizer ? 0 : CL_E_INTERNAL;
    for (uint32_t i = 0; !rc && i < h->n; i++)
        tensor_of[i] = UINT32_MAX;
    for (uint32_t k = 0; !rc && k < tt->n; k++) {
        uint32_t node = tt->v[k].node;
        if (node == PY_NO_NODE || node >= h->n)
            continue;
        tensor_of[node] = k;
        if (py_node_derives(h, node, parameter, TORCH_PARAMETER_CLASS))
            mark(tt, k, CL_CAT_PARAMETER, out);
    }
    for (size_t l = 0; !rc && l < tt->nlinks; l++) {
        const struct torch_link *x = &tt->links[l];
        if (x->dst_end == TORCH_END_TENSOR && x->kind == TORCH_LINK_GRAD)
            mark(tt, x->dst, CL_CAT_GRADIENT, out);
        else if (x->dst_end == TORCH_END_TENSOR && x->kind == TORCH_LINK_SAVED)
            mark(tt, x->dst, CL_CAT_SAVED, out);
        else if (x->dst_end == TORCH_END_TENSOR && x->kind == TORCH_LINK_BUCKET)
            mark(tt, x->dst, CL_CAT_CXX, out);
        else if (x->kind == TORCH_LINK_PACKED && x->dst < h->n &&
                 !mark_held(h, tt, tensor_of, x->dst, PACKED_DEPTH, CL_CAT_SAVED, out))
            rc = CL_E_INTERNAL;
    }
    for (uint32_t i = 0; !rc && i < h->n; i++) {
        if (!py_node_derives(h, i, optimizer, TORCH_OPTIMIZER_CLASS))
            continue;
        uint32_t state = py_heap_find(h, py_heap_attr(&h->objects, h->nodes[i].addr, "state"));
        if (state != PY_NO_NODE &&
            !mark_held(h, tt, tensor_of, state, STATE_DEPTH, CL_CAT_OPTIMIZER, out))
            rc = CL_E_INTERNAL;
    }
    free(tensor_of);
    free(parameter);
    free(optimizer);
    return rc;
}
