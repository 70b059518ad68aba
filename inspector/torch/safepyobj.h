/* References torch's C++ keeps to Python objects in a c10::SafePyObject: {PyObject *data_;
 * PyInterpreter *pyinterpreter_}, a counted reference that its destructor drops. The dispatcher's
 * Python kernels (torch.library's impl, PythonKernelHolder), torch_dispatch modes, custom ops'
 * fake and autograd functions are kept so, in C++ objects no Python object leads to.
 *
 * The pair is found by its second word: every SafePyObject of the process names the one
 * interpreter torch made (torch/csrc/PyInterpreter.cpp: self_interpreter's impl_), which no
 * Python object holds. The C heap (the memory no file backs, CPU tensors' data left out) is
 * scanned for that word; the word before it is a reference where it points at an object whose
 * count has references not explained, exactly as many as such pairs point at it (the balance
 * confirms it, as it does a library's static word). Each is a C reference named after the C++
 * object that holds it, by its RTTI where the pair opens one (`<PythonKernelHolder 0x...>`,
 * `<std::shared_ptr<c10::SafePyObject> 0x...>`), else `<c10::SafePyObject 0x...>`. */
#ifndef CULEAK_TORCH_SAFEPYOBJ_H
#define CULEAK_TORCH_SAFEPYOBJ_H

#include <stdbool.h>

#include "cpython/heap.h"
#include "torch/tensors.h"

/* Adds those references to h's books (py_books_add_c_ref); true when it added any, for the
 * caller to split what no root reaches again. A note in tt's warnings where the scan could not
 * be done (no interpreter found, out of memory). */
bool torch_safepyobjs_explain(struct py_heap *h, struct torch_tensors *tt);

#endif
