/* The Python objects that own the allocator's private pools: each torch.cuda.MemPool and
 * torch.cuda.CUDAGraph (pybind11 objects around torch's C++ MemPool and CUDAGraph, which keep
 * their pool's MempoolId_t) found on the Python heap, so that a pool's segments name what keeps
 * them reserved, not only its id. */
#ifndef CULEAK_CUDACACHE_MEMPOOLS_H
#define CULEAK_CUDACACHE_MEMPOOLS_H

#include "cpython/heap.h"
#include "cudacache/walk.h"
#include "runtime/torch.h"

/* Fills a->pools with every MemPool (from torch 2.6) and CUDAGraph (from 2.1) of h whose C++
 * object checks out (its holder's control block names its class, its flag is a bool, its id one
 * torch makes), named by its class and path; a pool two of them share names both. Objects that
 * do not check out are counted in a->warnings. Once: a later call changes nothing. */
void cc_mempools_name(struct py_heap *h, const struct cl_torch_info *torch, struct cc_allocator *a);
/* The name of the Python objects that own private pool id, or NULL. */
const char *cc_pool_owner(const struct cc_allocator *a, const uint64_t id[2]);

#endif
