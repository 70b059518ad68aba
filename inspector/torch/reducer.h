/* DistributedDataParallel's gradient buckets, which only C++ holds: DDP's c10d::Reducer keeps,
 * in `buckets_`, each bucket's flat `gradients` tensor (torch/csrc/distributed/c10d/reducer.hpp:
 * Reducer::Bucket), into which the gradients are copied (gradient_as_bucket_view=False: buffers
 * of their own) or of which the parameters' .grad are views (True). The Python object
 * `ddp.reducer` is pybind11's instance of the Reducer, with a std::shared_ptr holder: its
 * `instance` layout (every pybind11 2.x and 3.x: the value pointer, then the holder, the weak
 * references list and a flags byte whose bit 1 says the layout is simple) leads to it.
 *
 * Reducer has no vtable, so nothing names it: its layout is a table row per torch line, read off
 * the wheels (the members found where they are: `params_`, a vector of the parameters, and
 * `buckets_`, of buckets whose first member is the gradients tensor), and each is checked before
 * it is read: the instance's holder holds its value, the Reducer is a malloc chunk that contains
 * both vectors, every parameter and every bucket's gradients is a TensorImpl. */
#ifndef CULEAK_TORCH_REDUCER_H
#define CULEAK_TORCH_REDUCER_H

#include <stddef.h>
#include <stdint.h>

#include "target/target.h"
#include "torch/cxx.h"

#define TORCH_REDUCER_CLASS "torch._C._distributed_c10d.Reducer"
#define TORCH_MAX_BUCKETS 4096

struct torch_reducer_layout {
    unsigned major, first_minor, last_minor; /* the releases it was read off */
    uint16_t params, buckets, bucket_size;   /* Reducer::params_, buckets_; sizeof(Bucket) */
};

/* The table row for torch major.minor, or NULL. */
const struct torch_reducer_layout *torch_reducer_layout_for(unsigned major, unsigned minor);

/* The gradients tensors (TensorImpl addresses) of the buckets of the Reducer the Python object at
 * obj wraps, at most cap of them, into impls: how many, or -1 when the object or the Reducer does
 * not check out (then nothing is taken from it). */
int torch_reducer_buckets(struct cl_target *t, struct cxx_classifier *c,
                          const struct torch_reducer_layout *l, uint64_t obj, uint64_t *impls,
                          size_t cap);

#endif
