/* `blocks --torch-snapshot FILE`: the allocator walk in the shape torch.cuda.memory._snapshot()
 * returns (segments with their blocks, states, streams and pools, and each device's trace),
 * pickled, so torch's own viewers (python -m torch.cuda._memory_viz, the memory_viz page) open a
 * live job or a post-mortem core. The viewers show a block's frames on hover, so an allocated
 * block's frames say what holds it: first a frame per holder path of each storage in it (file
 * "held by (culeak)"), then the stack that allocated it where _record_memory_history recorded
 * one, as torch's own snapshot has it. When it recorded the trace, each device's is exported as
 * torch lists it (trace_plot's timeline), the allocation of each block still allocated with
 * its holders first among its frames too. */
#ifndef CULEAK_REPORT_TORCH_SNAPSHOT_H
#define CULEAK_REPORT_TORCH_SNAPSHOT_H

#include <stdio.h>

#include "cudacache/stacks.h"
#include "cudacache/trace.h"
#include "cudacache/walk.h"
#include "holders/holders.h"
#include "torch/tensors.h"
#include "util/error.h"

struct cl_torch_snapshot_models {
    const struct cc_allocator *allocator;
    const struct torch_tensors *tensors;     /* with holders: NULL when they could not be read */
    const struct cl_holders *holders;
    const struct cc_stacks *stacks; /* NULL when they could not be read */
    const struct cc_trace *trace;   /* NULL when it could not be read */
};

/* Writes every device of the allocator (the report's --device and --state do not apply): 0, or
 * CL_E_INTERNAL (out of memory) before anything is written. */
int cl_torch_snapshot_write(FILE *out, const struct cl_torch_snapshot_models *m,
                            struct cl_error *err);

#endif
