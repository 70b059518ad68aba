#include "engine/warmup.h"

#include <stdlib.h>

#include "cpython/referents.h"

#define OPTIMIZER "torch.optim.optimizer.Optimizer"

/* What a type is, once asked. */
enum { UNKNOWN, OPTIMIZER_CLASS, OTHER };

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
        uint32_t t = h->nodes[i].type;
        if (kind[t] == UNKNOWN)
            kind[t] = py_type_derives(h, py_node_type(h, i), OPTIMIZER) ? OPTIMIZER_CLASS : OTHER;
        if (kind[t] != OPTIMIZER_CLASS)
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
