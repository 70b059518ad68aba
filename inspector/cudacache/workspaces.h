/* torch's cuBLAS and cuBLASLt workspaces: CUDA memory torch's C++ keeps for each (handle,
 * stream) it has run a matrix product on, which no tensor accounts for (32 MiB each on recent
 * GPUs). They are found through the function-local statics that hold them
 * (at::cuda::cublas_handle_stream_to_workspace()::instance and the cuBLASLt one, in
 * libtorch_cuda.so's .symtab), and each one must start an allocated block of the allocator on
 * its device; its block is then named for it. */
#ifndef CULEAK_CUDACACHE_WORKSPACES_H
#define CULEAK_CUDACACHE_WORKSPACES_H

#include "cudacache/walk.h"
#include "runtime/torch.h"
#include "symbols/symbols.h"
#include "target/target.h"

/* Names the blocks of a that hold a workspace (cc_block.owner); what cannot be read is said in
 * a->warnings, and those blocks stay unnamed. Nothing is named before torch 2.10, whose maps
 * have other shapes, not read off a wheel (nor in a 3.x, whose shape nobody has seen). */
void torch_workspaces_name(struct cl_target *t, const struct cl_symbols *syms,
                           const struct cl_torch_info *torch, struct cc_allocator *a);

#endif
