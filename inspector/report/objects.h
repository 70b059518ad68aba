/* `culeak objects` (counts and sizes by type) and `culeak refs` (objects with their shortest
 * chain from a root). */
#ifndef CULEAK_REPORT_OBJECTS_H
#define CULEAK_REPORT_OBJECTS_H

#include <stdbool.h>
#include <stdio.h>

#include "cpython/heap.h"
#include "report/warnings.h"
#include "holders/holders.h"
#include "torch/tensors.h"

/* 0, or CL_E_INTERNAL (out of memory) before anything is written. */
int cl_report_objects(FILE *out, struct py_heap *h, size_t top, bool json,
                      const struct cl_report_notes *w, struct cl_error *err);

struct cl_refs_query {
    const uint64_t *addrs;       /* objects by address, or */
    size_t naddrs;
    const char *type;            /* every object whose type name is this (or ends in ".this") */
    size_t max_paths;            /* paths per object, shortest first (0: 1) */
    bool referents;              /* also each object's references, as the walk read them */
};
/* tt and hs (both NULL without torch) name the C++ holder of tensors no Python root reaches (a
 * .grad, a saved tensor). 0, or CL_E_INTERNAL (out of memory) before anything is written. */
int cl_report_refs(FILE *out, struct py_heap *h, const struct torch_tensors *tt,
                   const struct cl_holders *hs, const struct cl_refs_query *q, bool json,
                   const struct cl_report_notes *w, struct cl_error *err);

#endif
