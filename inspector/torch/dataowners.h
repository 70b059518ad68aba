/* The Python objects that own a storage's data. torch.from_numpy and torch.frombuffer wrap memory
 * another object owns: the storage's DataPtr frees it through a c10::InefficientStdFunctionContext
 * {void *ptr_; std::function<void(void *)> deleter_}, whose deleter is a lambda that captured the
 * object with a reference of its own and drops it (torch/csrc/utils/tensor_numpy.cpp:
 * tensor_from_numpy; torch/csrc/utils/tensor_new.cpp: tensor_frombuffer). torch.from_dlpack's
 * lambda captures the DLManagedTensor (or DLManagedTensorVersioned) instead, whose manager_ctx
 * the producer filled with the object it keeps (numpy's array) (aten/src/ATen/DLConvertor.cpp:
 * fromDLPack). The object is then kept by the storage alone once Python drops it.
 *
 * Each is checked whole before its word is taken, since nothing in it names its type: the
 * DataPtr's context is a malloc chunk of the context's size whose ptr_ is the DataPtr's data, its
 * deleter is libc10's and the std::function's manager and invoker are code of libtorch_python (or
 * of torch's other libraries, for DLPack); a DLManagedTensor's data is the storage's. Then, as
 * every C++ reference, it is taken where such words to the object are exactly as many as its
 * references not explained (torch/cxxrefs.h), named `<StorageImpl 0x...: the owner of its data>`. */
#ifndef CULEAK_TORCH_DATAOWNERS_H
#define CULEAK_TORCH_DATAOWNERS_H

#include <stdbool.h>

#include "cpython/heap.h"
#include "torch/tensors.h"

/* Notes each storage's owner (torch_storage.data_owner) and adds the references to h's books;
 * true when it added any. */
bool torch_data_owners_explain(struct py_heap *h, struct torch_tensors *tt);

#endif
