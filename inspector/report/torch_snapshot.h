/* `blocks --torch-snapshot FILE`: the allocator walk in the shape torch.cuda.memory._snapshot()
 * returns (segments with their blocks, states, streams and pools; one empty trace per device),
 * pickled, so torch's own viewers (python -m torch.cuda._memory_viz, the memory_viz page) open a
 * live job or a post-mortem core. Each allocated block's frames are what holds it: one frame
 * per holder path of each storage in it, for the viewers show a block's frames; where the
 * process recorded allocation stacks (_record_memory_history), those are the frames, as torch's
 * own snapshot has them, and the holders go under "culeak_holders". */
#ifndef CULEAK_REPORT_TORCH_SNAPSHOT_H
#define CULEAK_REPORT_TORCH_SNAPSHOT_H

#include <stdio.h>

#include "cudacache/stacks.h"
#include "cudacache/walk.h"
#include "holders/holders.h"
#include "torch/tensors.h"
#include "util/error.h"

struct cl_torch_snapshot_models {
    const struct cc_allocator *allocator;
    const struct torch_tensors *tensors;     /* with holders: NULL when they could not be read */
    const struct cl_holders *holders;
    const struct cc_stacks *stacks; /* NULL when they could not be read */
};

/* Writes every device of the allocator (the report's --device and --state do not apply): 0, or
 * CL_E_INTERNAL (out of memory) before anything is written. */
int cl_torch_snapshot_write(FILE *out, const struct cl_torch_snapshot_models *m,
                            struct cl_error *err);

#endif
