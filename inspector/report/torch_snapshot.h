/* `blocks --torch-snapshot FILE`: the allocator walk in the shape torch.cuda.memory._snapshot()
 * returns (segments with their blocks, states, streams and pools; one empty trace per device),
 * pickled, so torch's own viewers (python -m torch.cuda._memory_viz, the memory_viz page) open a
 * live job or a post-mortem core. Each allocated block's frames are what holds it: one frame
 * per holder path of each storage in it, for the viewers show a block's frames. */
#ifndef CULEAK_REPORT_TORCH_SNAPSHOT_H
#define CULEAK_REPORT_TORCH_SNAPSHOT_H

#include <stdio.h>

#include "cudacache/walk.h"
#include "holders/holders.h"
#include "torch/tensors.h"

/* Writes every device of a (the report's --device and --state do not apply); tt and hs, NULL
 * when the tensors could not be read, give the frames. */
void cl_torch_snapshot_write(FILE *out, const struct cc_allocator *a,
                             const struct torch_tensors *tt, const struct cl_holders *hs);

#endif
