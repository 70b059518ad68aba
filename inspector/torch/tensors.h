/* Tensors and storages of a PyTorch process: every torch.Tensor object of the Python heap (any
 * subclass), read through TensorImpl and StorageImpl, grouped by storage, and the tensors that
 * only C++ holds, found by walking the autograd graphs exactly (torch/autograd.h), with every C++
 * reference between tensors, nodes and Python objects, for the holders above to follow. */
#ifndef CULEAK_TORCH_TENSORS_H
#define CULEAK_TORCH_TENSORS_H

#include <stdbool.h>
#include <stdint.h>

#include "cpython/heap.h"
#include "runtime/torch.h"
#include "torch/layout.h"

#define TORCH_MAX_DIMS 8

/* c10::DeviceType values culeak names */
enum { TORCH_DEVICE_CPU = 0, TORCH_DEVICE_CUDA = 1 };

/* How a tensor became known: a Python object, or a C++ reference with no Python object. */
enum torch_origin {
    TORCH_FROM_PYTHON,       /* a torch.Tensor object of the heap */
    TORCH_FROM_SAVED,        /* a SavedVariable's data_ (saved for backward) */
    TORCH_FROM_GRAD,         /* a tensor's .grad, never read from Python */
    TORCH_FROM_VARIABLE,     /* an AccumulateGrad's variable */
    TORCH_FROM_VIEW_BASE,    /* a view's base, never read from Python */
};

struct torch_tensor {
    uint64_t pyobj;          /* the Python object, 0 for a tensor only C++ holds */
    uint64_t pytype;         /* its type object */
    uint32_t node;           /* heap node of pyobj, PY_NO_NODE for C++ tensors */
    uint64_t impl, storage, data_ptr;
    int8_t device_type, device_index;
    uint8_t dtype;
    int ndim; /* may exceed TORCH_MAX_DIMS; sizes/strides then hold the first ones */
    int64_t sizes[TORCH_MAX_DIMS], strides[TORCH_MAX_DIMS], storage_offset;
    bool requires_grad;
    uint64_t grad_fn; /* Node*, or 0 */
    char grad_fn_name[64];
    enum torch_origin origin;
    uint32_t storage_index; /* into torch_tensors.storages, UINT32_MAX without storage */
};

struct torch_storage {
    uint64_t impl, data, nbytes;
    int8_t device_type, device_index;
    uint32_t *tensors; /* indices into torch_tensors.v */
    uint32_t ntensors;
};

/* A node of the autograd graphs. */
struct torch_node {
    uint64_t addr;
    char name[48]; /* its class: "AddmmBackward0" */
};

/* One end of a C++ reference. */
enum torch_end { TORCH_END_TENSOR, TORCH_END_NODE, TORCH_END_PYOBJ };

/* What a C++ reference is (autograd.h's references, and a tensor's own). */
enum torch_link_kind {
    TORCH_LINK_GRAD_FN, /* tensor -> node: AutogradMeta::grad_fn_ */
    TORCH_LINK_GRAD, /* tensor -> tensor: AutogradMeta::grad_ */
    TORCH_LINK_VIEW_BASE, /* tensor -> tensor: a view's base (DifferentiableViewMeta::base_) */
    TORCH_LINK_PYOBJ, /* tensor -> its Python object, which it keeps alive (resurrects)
                                as long as C++ holds the tensor */
    TORCH_LINK_NEXT, /* node -> node */
    TORCH_LINK_SAVED, /* node or ctx -> tensor */
    TORCH_LINK_SAVED_NODE, /* node -> node: a SavedVariable's grad_fn_/grad_accumulator_ */
    TORCH_LINK_VARIABLE, /* AccumulateGrad -> its leaf tensor */
    TORCH_LINK_CONTEXT, /* PyNode -> the custom Function's ctx (a Python object) */
};

/* A reference from C++ (or into C++ from a custom Function's ctx); src and dst index tensors,
 * nodes or heap nodes by their ends. The Python-tensor -> TensorImpl -> storage references are
 * implied by torch_tensor.node and .storage_index. */
struct torch_link {
    uint32_t src, dst;
    uint8_t src_end, dst_end; /* enum torch_end */
    uint8_t kind; /* enum torch_link_kind */
};

struct torch_tensors {
    const struct torch_layout *l;
    struct torch_tensor *v;
    uint32_t n;
    size_t cap;
    struct torch_storage *storages; /* biggest first */
    uint32_t nstorages;
    struct torch_node *nodes;
    uint32_t nnodes;
    size_t nodes_cap;
    struct cl_addrmap node_index; /* Node* -> nodes[] */
    struct torch_link *links; /* sorted by source (end, index), each source's in the order
                                         read (next edges in next_edges_ order) */
    size_t nlinks, links_cap;
    const struct torch_autograd_layout *autograd; /* the graphs' layout, NULL when none fit */
    char *warnings;
};

/* Finds and reads every tensor. Fails (CL_E_UNSUPPORTED) for an unknown torch version or a layout
 * the live checks reject; a target without torch yields no tensors. */
int torch_tensors_collect(struct py_heap *h, const struct cl_torch_info *torch,
                          struct torch_tensors *out, struct cl_error *err);
void torch_tensors_free(struct torch_tensors *tt);

/* The links out of one source: *n of them from the returned one. */
const struct torch_link *torch_links_from(const struct torch_tensors *tt, enum torch_end end,
                                          uint32_t src, size_t *n);

const char *torch_dtype_name(uint8_t dtype);
const char *torch_device_name(int8_t type);

#endif
