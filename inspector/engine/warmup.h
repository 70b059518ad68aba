/* Whether a training job is past its warm-up, for step tracking: a job's first steps grow by what
 * is no leak (optimizer state appears at the first optimizer step), so growth counts from the
 * step at which every torch.optim.Optimizer of the heap has state. */
#ifndef CULEAK_ENGINE_WARMUP_H
#define CULEAK_ENGINE_WARMUP_H

#include "cpython/heap.h"

struct cl_optimizers {
    unsigned total;            /* torch.optim.Optimizer instances (by class, along its bases) */
    unsigned with_state;       /* of them, those whose state holds something */
};

/* Counts the heap's optimizers; 0, or CL_E_INTERNAL (out of memory). */
int cl_optimizers_count(struct py_heap *h, struct cl_optimizers *out, struct cl_error *err);

#endif
