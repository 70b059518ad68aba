/* The Python objects that own the allocator's private pools: each torch.cuda.MemPool (a pybind11
 * object around torch's C++ MemPool, whose id_ is its pool's MempoolId_t) found on the Python
 * heap, so that a pool's segments name what keeps them reserved, not only its id. */
#ifndef CULEAK_CUDACACHE_MEMPOOLS_H
#define CULEAK_CUDACACHE_MEMPOOLS_H

#include "cpython/heap.h"
#include "cudacache/walk.h"
#include "runtime/torch.h"

/* Fills a->pools with every MemPool of h whose C++ object checks out (its holder's control
 * block names a MemPool; its flag a bool), named by its path; from torch 2.6, the first with
 * MemPool. Once: a later call changes nothing. */
void cc_mempools_name(struct py_heap *h, const struct cl_torch_info *torch, struct cc_allocator *a);
/* The name of the Python object that owns private pool id, or NULL. */
const char *cc_pool_owner(const struct cc_allocator *a, const uint64_t id[2]);

#endif
