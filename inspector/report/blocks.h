/* `culeak blocks`: the CUDA caching allocator segment by segment, each allocated block with the
 * tensors whose storage lies in it and the chains that hold them. */
#ifndef CULEAK_REPORT_BLOCKS_H
#define CULEAK_REPORT_BLOCKS_H

#include <stdbool.h>
#include <stdio.h>

#include "cpython/heap.h"
#include "cudacache/walk.h"
#include "holders/holders.h"
#include "report/warnings.h"
#include "torch/tensors.h"

struct cl_block_filter {
    int device;                /* -1: every device */
    bool cpu;                  /* --device cpu: refused, the allocator has CUDA devices only */
    int state;                 /* 0 all, 1 allocated (active), 2 free (inactive, unmapped) */
};

/* The allocator's walk; tt and hs (NULL when tensors could not be read) name each block's
 * tensors and holders. */
void cl_report_blocks(FILE *out, const struct cc_allocator *a, const struct torch_tensors *tt,
                      const struct cl_holders *hs, const struct cl_block_filter *f, bool json,
                      const struct cl_report_notes *w);

/* Whether a CUDA storage's data lies in the block [ptr, ptr+size). */
bool cl_storage_in_block(const struct torch_storage *st, uint64_t ptr, uint64_t size);

/* Bytes of allocated blocks on device d that no tensor of tt (may be NULL) lies in. */
uint64_t cl_blocks_unattributed(const struct torch_tensors *tt, const struct cc_device *d);

#endif
