/* `culeak blocks`: the CUDA caching allocator segment by segment, each allocated block with the
 * tensors whose storage lies in it and the chains that hold them. */
#ifndef CULEAK_REPORT_BLOCKS_H
#define CULEAK_REPORT_BLOCKS_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/session.h"

struct cl_block_filter {
    int device;                /* -1: every device */
    int state;                 /* 0 all, 1 allocated (active), 2 free (inactive, unmapped) */
};

/* Needs the session's allocator walked; uses its tensors when they are built. */
void cl_report_blocks(FILE *out, struct cl_session *s, const struct cl_block_filter *f, bool json);

/* Bytes of allocated blocks on device d that no tensor known to culeak lies in. */
uint64_t cl_blocks_unattributed(struct cl_session *s, const struct cc_device *d);

#endif
