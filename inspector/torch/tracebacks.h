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

#include <stddef.h>

#include "cpython/emit.h"

/* The readers of torch's C types, for py_walk_options.type_readers. */
const struct py_type_reader *torch_type_readers(size_t *n);

#endif
