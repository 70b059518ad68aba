/* `culeak tensors` (storages biggest first, each with its tensors and their paths) and
 * `culeak summary` (totals by device and by the root that holds them). */
#ifndef CULEAK_REPORT_TENSORS_H
#define CULEAK_REPORT_TENSORS_H

#include <stdbool.h>
#include <stdio.h>

#include "cpython/heap.h"
#include "cudacache/walk.h"
#include "holders/holders.h"
#include "report/text.h"
#include "report/warnings.h"
#include "runtime/driver_memory.h"
#include "torch/tensors.h"

struct cl_tensor_filter {
    int device;             /* -1 all, else a device type (0 cpu, 1 cuda) */
    bool by_index;          /* only the device of this index (cuda:N) */
    int index;
    uint64_t min_bytes;
};

void cl_report_tensors(FILE *out, struct py_heap *h, const struct torch_tensors *tt,
                       const struct cl_holders *hs, const struct cl_tensor_filter *f,
                       const struct cl_text_options *opt, bool json,
                       const struct cl_report_notes *w);
/* What grew since a snapshot (culeak-catch-oom's report): its name, when it was taken, and the
 * growth as watch words it. */
struct cl_since {
    const char *snapshot, *time, *growth;
};

/* The leak report: totals by device, then every holder by the bytes dropping it would free.
 * a: the CUDA allocator's walk, or NULL when it could not be walked; driver: what NVML said of
 * a live process (runtime/driver_memory.h), or NULL; since: NULL, or what grew since a
 * snapshot, said first. */
int cl_report_summary(FILE *out, struct py_heap *h, const struct torch_tensors *tt,
                      const struct cl_holders *hs, const struct cc_allocator *a,
                      const struct cl_driver_memory *driver, const struct cl_text_options *opt,
                      const struct cl_since *since, bool json, const struct cl_report_notes *w,
                      struct cl_error *err);

/* "cuda:0", "cpu": a device as torch writes it. */
void cl_device_text(char *out, size_t cap, int8_t type, int8_t index);

#endif
