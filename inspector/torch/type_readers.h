/* The readers of torch's C types whose references lie in C++, for py_walk_options.type_readers:
 * CapturedTraceback (torch/tracebacks.h) and Dynamo's RootGuardManager (torch/guards.h). */
#ifndef CULEAK_TORCH_TYPE_READERS_H
#define CULEAK_TORCH_TYPE_READERS_H

#include <stddef.h>

#include "cpython/emit.h"
#include "runtime/torch.h"
#include "torch/guards.h"

struct torch_type_readers {
    struct torch_guards guards;
    struct py_type_reader v[2];
};

/* Sets r up for torch's release: the walk takes r->v, as many as this returns. */
size_t torch_type_readers_init(struct torch_type_readers *r, const struct cl_torch_info *torch);

#endif
