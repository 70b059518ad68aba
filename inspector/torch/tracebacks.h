/* torch's CapturedTraceback (torch._C._profiler.CapturedTraceback, torch 2.1+): what
 * torch.utils._traceback.CapturedTraceback.extract() keeps of the Python stack, and what
 * torch.compile records of the frames it compiled from. The Python object is {PyObject_HEAD;
 * std::shared_ptr<torch::CapturedTraceback> data} (torch/csrc/profiler/python/
 * combined_traceback.cpp); the C++ object keeps the frames it gathered in a std::vector of
 * {PyCodeObject *code; int lasti}, with a reference to each code object, which its destructor
 * drops (torch/csrc/profiler/combined_traceback.h). Read off PyPI's 2.1.2 to 2.15.0 by
 * tests/layouts/probe_traceback.py (all alike); each object is checked by the C++ object's RTTI
 * and each frame's code by its type before anything is taken. */
#ifndef CULEAK_TORCH_TRACEBACKS_H
#define CULEAK_TORCH_TRACEBACKS_H

#include <stdint.h>

#include "cpython/emit.h"

#define TORCH_TRACEBACK_TYPE "torch._C._profiler.CapturedTraceback"
#define TORCH_TRACEBACK_BASICSIZE 32   /* PyObject_HEAD and the shared_ptr */

/* The py_type_reader of CapturedTraceback objects (no ctx). */
void torch_traceback_emit(void *ctx, const struct py_emitter *e, uint64_t obj);

#endif
