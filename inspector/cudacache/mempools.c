#include "cudacache/mempools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/path.h"
#include "torch/cxx.h"
#include "util/vec.h"

#define MEMPOOL_CLASS "torch._C._MemPool"   /* torch.cuda.MemPool's pybind11 base */
/* A pybind11 instance (simple layout): after the PyObject head, the value pointer, then its
 * std::shared_ptr holder (pointer, control block). */
#define PYBIND11_VALUE 16
#define PYBIND11_HOLDER_CONTROL 32

/* torch's C++ MemPool: its is_user_created_ flag and its id_ (two u64), read off 2.6, 2.8, 2.10
 * (c10::cuda::MemPool, then at::cuda::MemPool, after a shared_ptr to its allocator), 2.11 and
 * 2.14 (the flag first) on the simulated device, three pools each; a newer release is read as
 * the newest, checked all the same. */
static const struct shape {
    unsigned first_minor;   /* to the next row's */
    uint8_t user_created, id;
} shapes[] = {
    {6, 8, 16},
    {11, 0, 8},
};

/* The pool id of the MemPool object at obj, read with sh; false when it is none. */
static bool pool_id(struct cl_target *t, const struct shape *sh, uint64_t obj, uint64_t id[2])
{
    uint64_t value, control;
    uint8_t flag;
    char type[128];
    return !cl_read_u64(t, obj + PYBIND11_VALUE, &value) && value && !(value & 7) &&
           !cl_read_u64(t, obj + PYBIND11_HOLDER_CONTROL, &control) &&
           cxx_class_name(t, control, type, sizeof type) && strstr(type, "7MemPoolE") &&
           !cl_read(t, value + sh->user_created, &flag, 1) && flag <= 1 &&
           !cl_read(t, value + sh->id, id, 2 * sizeof *id);
}

void cc_mempools_name(struct py_heap *h, const struct cl_torch_info *torch, struct cc_allocator *a)
{
    int row =
        cl_torch_row(torch, &shapes[0].first_minor, sizeof shapes / sizeof *shapes, sizeof *shapes);
    if (a->pools_named || row < 0)
        return;
    a->pools_named = true;
    const struct shape *sh = &shapes[row];
    unsigned char *cache = calloc(h->objects.ntypes + 1, 1);
    for (uint32_t i = 0; cache && i < h->n; i++) {
        uint64_t id[2];
        char marked[1024], path[1024];
        if (!py_node_derives(h, i, cache, MEMPOOL_CLASS) ||
            !pool_id(h->objects.rt->t, sh, h->nodes[i].addr, id) ||
            !CL_VEC_RESERVE(a->pools, a->npools, a->pools_cap))
            continue;
        if (py_heap_path(h, i, marked, sizeof marked))
            py_path_text(marked, path, sizeof path);
        else
            snprintf(path, sizeof path, "a torch.cuda.MemPool no root reaches (0x%llx)",
                     (unsigned long long)h->nodes[i].addr);
        char *name = strdup(path);
        if (name)
            a->pools[a->npools++] = (struct cc_pool_owner){{id[0], id[1]}, name};
    }
    free(cache);
}

const char *cc_pool_owner(const struct cc_allocator *a, const uint64_t id[2])
{
    for (uint32_t i = 0; i < a->npools; i++)
        if (a->pools[i].id[0] == id[0] && a->pools[i].id[1] == id[1])
            return a->pools[i].name;
    return NULL;
}
