/* Tensors and storages of a PyTorch process: every torch.Tensor object of the Python heap (any
 * subclass), read through TensorImpl and StorageImpl, grouped by storage, and the tensors that
 * only C++ holds, found by walking the autograd graph of the Python tensors. */
#ifndef CULEAK_TORCH_TENSORS_H
#define CULEAK_TORCH_TENSORS_H

#include <stdbool.h>
#include <stdint.h>

#include "cpython/heap.h"
#include "runtime/torch.h"
#include "torch/layout.h"

#define TORCH_MAX_DIMS 8

enum torch_holder {
    TORCH_HELD_PYTHON,       /* a path from a root */
    TORCH_HELD_AUTOGRAD,     /* only through the autograd graph of a Python-held tensor */
    TORCH_HELD_UNREACHABLE,  /* only from objects no root reaches (a cycle awaiting collection) */
    TORCH_HELD_UNKNOWN,
};

struct torch_tensor {
    uint64_t pyobj;          /* the Python object, 0 for a tensor only C++ holds */
    uint64_t pytype;         /* its type object */
    uint32_t node;           /* heap node of pyobj, PY_NO_NODE for C++ tensors */
    uint64_t impl, storage, data_ptr;
    int8_t device_type, device_index;
    uint8_t dtype;
    int ndim;                /* may exceed TORCH_MAX_DIMS; sizes/strides then hold the first ones */
    int64_t sizes[TORCH_MAX_DIMS], strides[TORCH_MAX_DIMS], storage_offset;
    bool requires_grad;
    uint64_t grad_fn;        /* Node*, or 0 */
    char grad_fn_name[64];
    char *autograd_path;     /* C++ tensors: the chain from a Python tensor (its .grad, or through
                                its autograd graph) */
    bool via_grad;           /* held as a Python tensor's .grad */
};

struct torch_storage {
    uint64_t impl, data, nbytes;
    int8_t device_type, device_index;
    enum torch_holder held_by;
    uint32_t *tensors;       /* indices into torch_tensors.v */
    uint32_t ntensors;
};

struct torch_tensors {
    const struct torch_layout *l;
    struct torch_tensor *v;
    uint32_t n, cap;
    struct torch_storage *storages;   /* biggest first */
    uint32_t nstorages;
    char *warnings;
};

/* Finds and reads every tensor. Fails (CL_E_UNSUPPORTED) for an unknown torch version or a layout
 * the live checks reject; a target without torch yields no tensors. */
int torch_tensors_collect(struct py_heap *h, const struct cl_torch_info *torch,
                          struct torch_tensors *out, struct cl_error *err);
void torch_tensors_free(struct torch_tensors *tt);

/* The chain that holds a tensor: its Python path, or for a tensor only C++ holds, the chain
 * through its holder. False when there is none. */
bool torch_tensor_path(struct py_heap *h, const struct torch_tensor *x, char *out, size_t cap);
/* The first such chain among a storage's tensors. */
bool torch_storage_path(struct py_heap *h, const struct torch_tensors *tt,
                        const struct torch_storage *st, char *out, size_t cap);

const char *torch_dtype_name(uint8_t dtype);
const char *torch_device_name(int8_t type);
const char *torch_holder_name(enum torch_holder h);

#endif
