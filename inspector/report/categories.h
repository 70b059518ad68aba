/* Memory by category, from the structures themselves with no profiler armed (issue 43): each
 * storage is in exactly one, by precedence parameter > gradient > optimizer state > saved for
 * backward > held from C/C++ > other. On CUDA the summary adds what no storage is: the allocated
 * blocks a C++ owner holds (held from C/C++) and the allocator's cache. */
#ifndef CULEAK_REPORT_CATEGORIES_H
#define CULEAK_REPORT_CATEGORIES_H

#include <stdint.h>

#include "cpython/heap.h"
#include "holders/holders.h"
#include "torch/tensors.h"

enum cl_category {
    CL_CAT_PARAMETER,  /* a tensor whose class derives from torch.nn.Parameter */
    CL_CAT_GRADIENT,   /* some tensor's .grad (AutogradMeta::grad_) */
    CL_CAT_OPTIMIZER,  /* a value of a torch.optim.Optimizer's state (its class found by MRO) */
    CL_CAT_SAVED,      /* saved for backward by an autograd node or a custom Function's ctx, or
                        * held by what a saved_tensors_hooks pack function returned */
    CL_CAT_CXX,        /* held from C or C++ alone: no Python holder reaches it (a Python kernel
                        * the dispatcher keeps captures it, a C extension's static holds it),
                        * or a C++ object's own memory (a DDP Reducer's gradient buckets) */
    CL_CAT_OTHER,      /* any other tensor */
    CL_CAT_CACHE,      /* no storage's: a CUDA allocator's reserved bytes that no block uses */
    CL_NCATEGORIES
};

const char *cl_category_name(enum cl_category c);

/* Each storage's category into out (tt->nstorages entries), hs saying which no Python holder
 * reaches. 0, or CL_E_INTERNAL when out of memory. */
int cl_categories(struct py_heap *h, const struct torch_tensors *tt, const struct cl_holders *hs,
                  uint8_t *out);

#endif
