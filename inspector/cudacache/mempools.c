#include "cudacache/mempools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/path.h"
#include "cpython/pybind11_types.h"
#include "torch/cxx.h"
#include "util/notes.h"
#include "util/text.h"
#include "util/vec.h"

/* a pybind11 instance whose holder is a std::shared_ptr: its control block */
#define HOLDER_CONTROL (PY_PYBIND11_HOLDER + 8)

/* Where a C++ pool owner keeps a one-byte flag that is 0 or 1 (a check) and its MempoolId_t. */
struct shape {
    unsigned first_minor;   /* to the next row's */
    uint8_t flag, id;
};

/* clang-format off */
/* torch's C++ MemPool: its is_user_created_ flag and its id_, read off 2.6, 2.8, 2.10
 * (c10::cuda::MemPool, then at::cuda::MemPool, after a shared_ptr to its allocator), 2.11 and
 * 2.14 (the flag first) on the simulated device, three pools each. */
static const struct shape mempool_shapes[] = {
    {6, 8, 16},
    {11, 0, 8},
};
/* at::cuda::CUDAGraph: has_graph_ and mempool_id_, found by tests/layouts/probe_cudagraph.py in
 * 2.1.2, 2.4.1 (an id_ before capture_id_ moves the pool id to 40), and every release from 2.6.0
 * to 2.15.0 on the simulated device. */
static const struct shape graph_shapes[] = {
    {1, 16, 32},
    {4, 16, 40},
    {6, 16, 32},
};
/* clang-format on */

/* The Python classes whose objects own a private pool: pybind11 objects around a C++ object
 * that a shared_ptr holds, whose control block's RTTI names the C++ class. A newer torch is read
 * with its newest row, checked all the same. */
static const struct owner_class {
    const char *base;    /* the pybind11 class the Python class derives from */
    const char *called;  /* how the report names its objects */
    const char *cxx;     /* in the mangled name of the control block's class */
    const struct shape *shapes;
    size_t nshapes;
} classes[] = {
    {"torch._C._MemPool", "torch.cuda.MemPool", "7MemPoolE", mempool_shapes,
     sizeof mempool_shapes / sizeof *mempool_shapes},
    {"torch._C._CUDAGraph", "torch.cuda.CUDAGraph", "9CUDAGraphE", graph_shapes,
     sizeof graph_shapes / sizeof *graph_shapes},
};

/* The pool id of the owner at obj, read with sh; false when its C++ object does not check out:
 * the control block names another class, the flag is no bool, or the id is none torch makes
 * (a graph's is {n, 0}, a MemPool's {0, n}). */
static bool pool_id(struct cl_target *t, const struct owner_class *c, const struct shape *sh,
                    uint64_t obj, uint64_t id[2])
{
    uint64_t value, control;
    uint8_t flag;
    char type[128];
    return !cl_read_u64(t, obj + PY_PYBIND11_VALUE, &value) && value && !(value & 7) &&
           !cl_read_u64(t, obj + HOLDER_CONTROL, &control) &&
           cxx_class_name(t, control, type, sizeof type) && strstr(type, c->cxx) &&
           !cl_read(t, value + sh->flag, &flag, 1) && flag <= 1 &&
           !cl_read(t, value + sh->id, id, 2 * sizeof *id) && (!id[0] != !id[1]);
}

/* Adds the owner of pool id called name: a second owner of the same pool makes it shared, named
 * for its first MAX_NAMED owners and counted past them (cudagraph trees put many graphs in one). */
#define MAX_NAMED 3
static void add_owner(struct cc_allocator *a, const uint64_t id[2], const char *name)
{
    for (uint32_t i = 0; i < a->npools; i++) {
        struct cc_pool_owner *p = &a->pools[i];
        if (p->id[0] != id[0] || p->id[1] != id[1])
            continue;
        if (++p->owners > MAX_NAMED)
            return;
        size_t cap = strlen(p->name) + strlen(name) + sizeof "shared by  and ", len = 0;
        char *more = malloc(cap);
        if (more) {
            *more = '\0';
            cl_appendf(more, cap, &len, "%s%s and %s", p->owners == 2 ? "shared by " : "", p->name,
                       name);
            free(p->name);
            p->name = more;
        }
        return;
    }
    char *copy = strdup(name);
    if (copy && CL_VEC_RESERVE(a->pools, a->npools, a->pools_cap))
        a->pools[a->npools++] = (struct cc_pool_owner){{id[0], id[1]}, copy, 1};
    else
        free(copy);
}

/* "shared by A and B and C" of a pool with more owners than that: "... and N more". */
static void count_unnamed(struct cc_allocator *a)
{
    for (uint32_t i = 0; i < a->npools; i++) {
        struct cc_pool_owner *p = &a->pools[i];
        size_t cap = strlen(p->name) + 32, len = 0;
        char *more = p->owners > MAX_NAMED ? malloc(cap) : NULL;
        if (!more)
            continue;
        *more = '\0';
        cl_appendf(more, cap, &len, "%s and %u more", p->name, p->owners - MAX_NAMED);
        free(p->name);
        p->name = more;
    }
}

static void name_owners(struct py_heap *h, const struct owner_class *c, const struct shape *sh,
                        struct cc_allocator *a)
{
    unsigned char *cache = calloc(h->objects.ntypes + 1, 1);
    unsigned refuted = 0;
    for (uint32_t i = 0; cache && i < h->n; i++) {
        uint64_t id[2];
        char marked[1024], path[1024], name[1100];
        if (!py_node_derives(h, i, cache, c->base))
            continue;
        if (!pool_id(h->objects.rt->t, c, sh, h->nodes[i].addr, id)) {
            refuted++;
            continue;
        }
        if (py_heap_path(h, i, marked, sizeof marked))
            py_path_text(marked, path, sizeof path);
        else
            snprintf(path, sizeof path, "0x%llx, which no root reaches",
                     (unsigned long long)h->nodes[i].addr);
        snprintf(name, sizeof name, "%s %s", c->called, path);
        add_owner(a, id, name);
    }
    free(cache);
    if (refuted)
        cl_note_add(&a->warnings,
                    "%u %s objects whose C++ object does not check out: the pools they own are "
                    "not named",
                    refuted, c->called);
}

void cc_mempools_name(struct py_heap *h, const struct cl_torch_info *torch, struct cc_allocator *a)
{
    if (a->pools_named)
        return;
    a->pools_named = true;
    for (size_t k = 0; k < sizeof classes / sizeof *classes; k++) {
        const struct owner_class *c = &classes[k];
        int row = cl_torch_row(torch, &c->shapes[0].first_minor, c->nshapes, sizeof *c->shapes);
        if (row >= 0)
            name_owners(h, c, &c->shapes[row], a);
    }
    count_unnamed(a);
}

const char *cc_pool_owner(const struct cc_allocator *a, const uint64_t id[2])
{
    for (uint32_t i = 0; i < a->npools; i++)
        if (a->pools[i].id[0] == id[0] && a->pools[i].id[1] == id[1])
            return a->pools[i].name;
    return NULL;
}
