/* Who holds each storage, and what dropping each reference would free.
 *
 * A holder is one named reference out of a root: a module global (`__main__.history`), a frame's
 * local, an exception being handled, a thread's state dict, `gc.garbage`. Two globals naming the
 * same list are two holders. The graph these are computed on joins the Python object graph (every
 * reference, cpython/heap.h), each Python tensor's TensorImpl, storages, and the C++ references
 * of torch/tensors.h (autograd nodes, saved tensors, .grad). Then:
 *  - retained bytes of a holder: the storages it dominates (every path from a root to them passes
 *    through it), so removing that reference alone frees them; a storage two holders share is
 *    retained by neither;
 *  - reachable bytes: every storage reachable from it;
 *  - per storage, every holder that reaches it with its shortest path, the preferred first: a
 *    user's module globals, then a library's, then frame locals (user code first), then the
 *    rest; then Python references before autograd graphs; then fewer indices (attributes read
 *    as names), then shorter, then by name. Each
 *    tensor's shown path is its preferred one, so unchanged state reads the same every time.
 * Module objects and module dicts are roots of their own: walks from a holder stop there, so
 * `__main__.torch` does not reach everything torch's globals hold.
 * Bytes are per device: a CUDA storage counts its caching-allocator block's size (what
 * torch.cuda.memory_allocated() counts) when the allocator was walked, a CPU storage its size. */
#ifndef CULEAK_HOLDERS_HOLDERS_H
#define CULEAK_HOLDERS_HOLDERS_H

#include <stdbool.h>
#include <stdint.h>

#include "cpython/heap.h"
#include "cudacache/walk.h"
#include "holders/drill.h"
#include "torch/tensors.h"
#include "util/strings.h"

#define CL_MAX_DEVICES 16

struct cl_device {
    int8_t type, index;      /* torch's DeviceType and index (-1: none) */
};

struct cl_holder {
    const char *name;        /* the reference as a Python path: "__main__.history" */
    uint32_t root;           /* the heap root it leaves from */
    uint64_t *retained, *reachable;   /* by cl_holders.devices, ndevices each */
    uint32_t storages;       /* storages it reaches */
    uint32_t saved;          /* of those, reached only through an autograd graph */
    uint32_t nodes;          /* autograd nodes it reaches */
    uint32_t drill, ndrill;  /* its drill-down: cl_holders.drills[drill .. drill + ndrill) */
};

/* How one holder reaches one storage. */
struct cl_storage_holder {
    uint32_t holder;         /* into cl_holders.v */
    uint32_t tensor;         /* into torch_tensors.v: the tensor the path ends at, UINT32_MAX
                                when it ends at a torch.UntypedStorage object */
    uint32_t steps;          /* path length */
    uint32_t indices;        /* its steps that are indices or keys ([3], ['k']) */
    bool via_autograd;       /* the path passes through an autograd graph */
    const char *path;
};

/* The storage's holders as a whole: the most direct kind of holder names it. */
enum cl_held_by {
    CL_HELD_PYTHON,          /* some holder reaches it through Python references only */
    CL_HELD_AUTOGRAD,        /* every holder's path passes through an autograd graph */
    CL_HELD_GARBAGE,         /* no holder: only garbage objects reach it, which gc.collect()
                                would free (cpython/balance.h) */
    CL_HELD_FROM_C,          /* no holder, and an object no root reaches that C holds (references
                                not explained, or a C reference) reaches it */
    CL_HELD_UNKNOWN, /* no holder, and no Python object: held from C/C++ culeak cannot see */
};

#define CL_NO_RETAINER UINT32_MAX

struct cl_storage_holders {
    struct cl_storage_holder *v; /* preferred first */
    uint32_t n;
    uint32_t retainer;       /* the holder (into cl_holders.v) that retains it alone: every
                                path to it passes through it; CL_NO_RETAINER when several
                                share it, or no holder reaches it */
    enum cl_held_by held_by;
    bool from_c; /* an object C holds (references not explained) reaches it too: no holder
                    retains it, however many reach it */
    uint64_t bytes; /* what it counts for: its block's size on CUDA */
};

struct cl_holders {
    struct cl_holder *v;     /* the holders that reach a storage (a heap has one per module
                                global, and most reach none), in the order roots list them */
    uint32_t n;
    struct cl_device devices[CL_MAX_DEVICES];
    uint32_t ndevices;
    struct cl_storage_holders *storages; /* indexed like torch_tensors.storages */
    uint32_t nstorages;
    struct cl_storage_holder *storage_holders; /* every storage's v, storage by storage */
    uint64_t *device_bytes; /* where every holder's retained and reachable arrays lie */
    struct cl_drill *drills; /* every holder's drill-down (holders/drill.h), holder by holder */
    size_t ndrills;
    const char **tensor_paths; /* per tensor: its shortest path from any holder, or NULL */
    uint32_t ntensors;
    struct cl_strings texts; /* the names and paths above */
    char *warnings;
};

/* a may be NULL (no CUDA allocator walked: CUDA storages then count their own size); drill
 * NULL: the documented defaults. */
int cl_holders_build(struct py_heap *h, const struct torch_tensors *tt,
                     const struct cc_allocator *a, const struct cl_drill_options *drill,
                     struct cl_holders *out, struct cl_error *err);
void cl_holders_free(struct cl_holders *hs);

/* The index of a device in hs->devices, or -1. */
int cl_holders_device(const struct cl_holders *hs, int8_t type, int8_t index);
const char *cl_held_by_name(enum cl_held_by h);

#endif
