#include "engine/warmup.h"

#include <stdlib.h>

#include "cpython/referents.h"
#include "torch/tensors.h"

static bool stop_at_first(void *arg, uint64_t key, uint64_t value)
{
    (void)key, (void)value;
    *(bool *)arg = true;
    return false;
}

int cl_optimizers_count(struct py_heap *h, struct cl_optimizers *out, struct cl_error *err)
{
    *out = (struct cl_optimizers){0};
    unsigned char *kind = calloc(h->objects.ntypes + 1, 1);   /* by type index */
    if (!kind)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory looking for optimizers");
    for (uint32_t i = 0; i < h->n; i++) {
        if (!py_node_derives(h, i, kind, TORCH_OPTIMIZER_CLASS))
            continue;
        bool some = false;
        uint64_t state = py_heap_attr(&h->objects, h->nodes[i].addr, "state");
        if (state)
            (void)py_dict_items(&h->objects, state, stop_at_first, &some);   /* unread: empty */
        out->total++;
        out->with_state += some;
    }
    free(kind);
    return 0;
}
