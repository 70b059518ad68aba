/* The legacy tensor types (torch.FloatTensor, torch.cuda.HalfTensor, ...) and what they keep:
 * each is a PyTensorType (torch/csrc/tensor/python_tensor.cpp), a PyTypeObject that torch
 * allocates itself, whose metaclass torch.tensortype says its size is sizeof(PyTypeObject), and
 * past it its dtype and its layout (THPDtype *, THPLayout *, each a reference taken when the
 * type is made); torch keeps every one in `static std::vector<PyTensorType *> tensor_types`
 * (libtorch_python's `torch::tensors::tensor_types`), whose reference is the one `new` made. No
 * reader knows those words, so the types, dtypes and layouts had references not explained.
 *
 * A word is a reference only where it points at an object of its kind (a torch.tensortype, a
 * torch.dtype, a torch.layout), and an object's are taken where they are exactly as many as its
 * references not explained (torch/cxxrefs.h): `<torch.FloatTensor's dtype>`,
 * `<torch::tensors::tensor_types[3]>`. */
#ifndef CULEAK_TORCH_TENSORTYPES_H
#define CULEAK_TORCH_TENSORTYPES_H

#include <stdbool.h>

#include "cpython/heap.h"

/* Adds those references to h's books; true when it added any (py_books_resplit is the
 * caller's). */
bool torch_tensortypes_explain(struct py_heap *h);

#endif
