/* `culeak blocks`: the CUDA caching allocator segment by segment, each allocated block with the
 * tensors whose storage lies in it and the chains that hold them. The report is built as rows
 * (struct cl_blocks_report) and then written as text or as JSON by separate writers, so that the
 * two forms say the same. */
#ifndef CULEAK_REPORT_BLOCKS_H
#define CULEAK_REPORT_BLOCKS_H

#include <stdbool.h>
#include <stdio.h>

#include "cpython/heap.h"
#include "cudacache/walk.h"
#include "holders/holders.h"
#include "report/warnings.h"
#include "torch/tensors.h"
#include "util/error.h"

enum cl_block_state_filter { CL_BLOCKS_ALL, CL_BLOCKS_ALLOCATED, CL_BLOCKS_FREE };

struct cl_block_filter {
    int device;                /* -1: every device */
    bool cpu;                  /* --device cpu: refused, the allocator has CUDA devices only */
    int state;                 /* enum cl_block_state_filter */
};

/* The CUDA storages of tt by data pointer: which lie in a block, without a pass over all. */
struct cl_block_storages {
    const struct torch_tensors *tt;
    uint32_t *by_data;         /* storage indices, by data pointer */
    uint32_t *found;           /* cl_block_storages_in's answer (as many entries) */
    uint32_t n;
};
/* false when out of memory; tt may be NULL (no storages). */
bool cl_block_storages_build(const struct torch_tensors *tt, struct cl_block_storages *out);
void cl_block_storages_free(struct cl_block_storages *s);
/* The storages whose data lies in [ptr, ptr+size), in index order, in s->found (valid until the
 * next call); returns how many. */
uint32_t cl_block_storages_in(struct cl_block_storages *s, uint64_t ptr, uint64_t size);

/* ---- the report's rows ---- */

struct cl_block_tensor_row {
    uint64_t address;          /* the Python tensor, or its TensorImpl when Python has none */
    const char *path;          /* the chain that holds it (marked, cpython/path.h), or NULL */
    const char *held_by;       /* when no path: what holds it (cl_held_by_name) */
};

struct cl_block_row {
    const struct cc_block *block;
    uint32_t first_tensor, ntensors;   /* in cl_blocks_report.tensors */
};

struct cl_segment_row {
    const struct cc_segment *segment;
    const char *pool_owner; /* the Python object that owns its private pool, or NULL */
    /* how it is used: what is allocated, the largest free block, the free bytes that live blocks
     * share (inactive_split), and whether its few live blocks pin the whole segment */
    uint64_t allocated, largest_free, inactive_split;
    bool pinned;
    uint32_t first_block, nblocks; /* the blocks the filter keeps, in cl_blocks_report.blocks */
};

struct cl_device_row {
    const struct cc_device *device;
    uint32_t first_segment, nsegments; /* in cl_blocks_report.segments */
};

struct cl_blocks_report {
    struct cl_device_row *devices;
    struct cl_segment_row *segments;
    struct cl_block_row *blocks;
    struct cl_block_tensor_row *tensors;
    uint32_t ndevices, nsegments, nblocks, ntensors;
    bool tensors_known; /* the tensors were read: an allocated block without is unattributed */
    const struct cc_allocator *allocator; /* its owners name blocks no tensor holds */
};

/* The rows of the allocator's walk a, the filter's devices and blocks; tt and hs (NULL when the
 * tensors could not be read) name each allocated block's tensors and holders. 0, or
 * CL_E_INTERNAL when out of memory. */
int cl_blocks_report_build(const struct cc_allocator *a, const struct torch_tensors *tt,
                           const struct cl_holders *hs, const struct cl_block_filter *f,
                           struct cl_blocks_report *out, struct cl_error *err);
void cl_blocks_report_free(struct cl_blocks_report *r);
/* Whether an allocated block holds no tensor known from Python or the autograd graph, and no
 * C++ owner culeak knows holds it. */
bool cl_block_unattributed(const struct cl_blocks_report *r, const struct cl_block_row *b);
/* The C++ owner named for block b of a (cudacache/workspaces.h), or NULL. */
const char *cl_block_owner(const struct cc_allocator *a, const struct cc_block *b);

void cl_blocks_write_text(FILE *out, const struct cl_blocks_report *r,
                          const struct cl_report_notes *w);
void cl_blocks_write_json(FILE *out, const struct cl_blocks_report *r,
                          const struct cl_report_notes *w);

/* Builds, writes (JSON or text) and frees: 0 or CL_E_INTERNAL before anything is written. */
int cl_report_blocks(FILE *out, const struct cc_allocator *a, const struct torch_tensors *tt,
                     const struct cl_holders *hs, const struct cl_block_filter *f, bool json,
                     const struct cl_report_notes *w, struct cl_error *err);

/* The allocated blocks on a device that no storage lies in: those a C++ owner holds (named in
 * `blocks`: cuBLAS workspaces) and those nothing known holds. */
struct cl_blocks_unheld {
    uint64_t owned, unattributed; /* bytes */
    uint32_t nowned; /* the blocks a C++ owner holds */
};
void cl_blocks_unheld(struct cl_block_storages *s, const struct cc_device *d,
                      struct cl_blocks_unheld *out);

#endif
