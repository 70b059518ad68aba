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
    TORCH_FROM_DDP_BUCKET,   /* a DDP Reducer's bucket of gradients (torch/reducer.h) */
};

/* A tensor. Its sizes and strides, min(ndim, TORCH_MAX_DIMS) of each, lie at
 * torch_tensors.dims[dims]; its grad_fn's class name is torch_grad_fn_name's. A heap of a training
 * job's history holds hundreds of thousands of tensors: they are kept small. */
struct torch_tensor {
    uint64_t pyobj;          /* the Python object, 0 for a tensor only C++ holds */
    uint64_t impl, storage, data_ptr;
    uint64_t grad_fn;        /* Node*, or 0 */
    int64_t storage_offset;
    uint32_t node;           /* heap node of pyobj (its type: py_node_type), PY_NO_NODE for C++
                                tensors */
    uint32_t dims;
    uint32_t grad_fn_name;   /* into torch_tensors.names, as read with the tensor */
    uint32_t grad_fn_node;   /* into torch_tensors.nodes, TORCH_NO_NODE when not walked */
    uint32_t storage_index;  /* into torch_tensors.storages, UINT32_MAX without storage */
    uint8_t ndim;            /* may exceed TORCH_MAX_DIMS (at most 64) */
    int8_t device_type, device_index;
    uint8_t dtype;
    uint8_t origin;          /* enum torch_origin */
    bool requires_grad;
};

struct torch_storage {
    uint64_t impl, data, nbytes;
    uint32_t *tensors; /* indices into torch_tensors.v, a part of torch_tensors.storage_tensors */
    uint32_t ntensors; /* 0 for a storage only a torch.UntypedStorage object holds */
    uint32_t pynode;   /* heap node of its torch.UntypedStorage object, PY_NO_NODE for none */
    uint64_t data_owner; /* the Python object that owns its data (torch/dataowners.h), or 0 */
    bool data_owner_dlpack; /* ... kept through DLPack's managed tensor */
    int8_t device_type, device_index;
};

/* The class names of the autograd nodes, each once: "AddmmBackward0". Entry 0 is "?", the name of
 * a node whose class cannot be read. */
#define TORCH_NAME_UNKNOWN 0
typedef char torch_name[64];

/* A node of the autograd graphs. */
#define TORCH_NO_NODE UINT32_MAX
struct torch_node {
    uint64_t addr;
    uint32_t name; /* into torch_tensors.names */
};

/* One end of a C++ reference. */
enum torch_end { TORCH_END_TENSOR, TORCH_END_NODE, TORCH_END_PYOBJ, TORCH_END_STORAGE };

/* What a C++ reference is (autograd.h's references, and a tensor's own). */
enum torch_link_kind {
    TORCH_LINK_GRAD_FN, /* tensor -> node: AutogradMeta::grad_fn_ */
    TORCH_LINK_GRAD, /* tensor -> tensor: AutogradMeta::grad_ */
    TORCH_LINK_VIEW_BASE, /* tensor -> tensor: a view's base (DifferentiableViewMeta::base_) */
    TORCH_LINK_PYOBJ, /* tensor (from 2.13 node too) -> its Python object, which it keeps
                         alive (resurrects) as long as C++ holds the tensor */
    TORCH_LINK_NEXT, /* node -> node */
    TORCH_LINK_SAVED, /* node or ctx -> tensor */
    TORCH_LINK_SAVED_NODE, /* node -> node: a SavedVariable's grad_fn_/grad_accumulator_ */
    TORCH_LINK_VARIABLE, /* AccumulateGrad -> its leaf tensor */
    TORCH_LINK_CONTEXT, /* PyNode -> the custom Function's ctx (a Python object) */
    TORCH_LINK_PACKED, /* node -> what a saved_tensors_hooks pack function returned */
    TORCH_LINK_HOOK, /* node -> a saved_tensors_hooks pack or unpack function */
    TORCH_LINK_NODE_HOOKS, /* node -> the dict of its Python hooks of one kind */
    TORCH_LINK_CDATA, /* a Python object -> the C++ object it wraps and owns: a grad_fn object's
                         node, a torch.UntypedStorage's storage */
    TORCH_LINK_BUCKET, /* a DDP Reducer's Python object -> a bucket's gradients, in bucket order */
};

/* A reference from C++ (or into C++ from a Python object); src and dst index tensors, nodes, heap
 * nodes or storages by their ends (a storage is never a source). The Python-tensor -> TensorImpl
 * -> storage references are implied by torch_tensor.node and .storage_index. */
struct torch_link {
    uint32_t src, dst;
    uint8_t src_end, dst_end; /* enum torch_end */
    uint8_t kind; /* enum torch_link_kind */
};

/* The classes culeak recognizes instances of, along their bases (py_type_derives). */
#define TORCH_PARAMETER_CLASS "torch.nn.parameter.Parameter"
#define TORCH_OPTIMIZER_CLASS "torch.optim.optimizer.Optimizer"

struct torch_tensors {
    const struct torch_layout *l;
    struct torch_tensor *v;
    uint32_t n;
    size_t cap;
    int64_t *dims; /* every tensor's sizes and strides */
    size_t ndims, dims_cap;
    struct torch_storage *storages; /* biggest first */
    uint32_t nstorages;
    uint32_t *storage_tensors; /* the storages' tensors, storage by storage */
    struct torch_node *nodes;
    uint32_t nnodes;
    size_t nodes_cap;
    torch_name *names;
    uint32_t nnames;
    size_t names_cap;
    struct torch_link *links; /* sorted by source (end, index), each source's in the order
                                         read (next edges in next_edges_ order) */
    size_t nlinks, links_cap;
    uint32_t *link_first; /* the first link of each tensor, then of each node; one entry more
                             ends the nodes' (a Python object's links are searched for) */
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

/* A tensor's sizes and strides, torch_shown_dims of each. */
static inline int torch_shown_dims(const struct torch_tensor *x)
{
    return x->ndim < TORCH_MAX_DIMS ? x->ndim : TORCH_MAX_DIMS;
}
static inline const int64_t *torch_sizes(const struct torch_tensors *tt,
                                         const struct torch_tensor *x)
{
    return tt->dims + x->dims;
}
static inline const int64_t *torch_strides(const struct torch_tensors *tt,
                                           const struct torch_tensor *x)
{
    return tt->dims + x->dims + torch_shown_dims(x);
}

/* The class name of a node; of a tensor's grad_fn, NULL without one: its node's when the graphs
 * were walked (which name a custom Function's node after its ctx's class). */
static inline const char *torch_node_name(const struct torch_tensors *tt, uint32_t node)
{
    return tt->names[tt->nodes[node].name];
}
static inline const char *torch_grad_fn_name(const struct torch_tensors *tt,
                                             const struct torch_tensor *x)
{
    if (!x->grad_fn)
        return NULL;
    return x->grad_fn_node != TORCH_NO_NODE ? torch_node_name(tt, x->grad_fn_node)
                                            : tt->names[x->grad_fn_name];
}

const char *torch_dtype_name(uint8_t dtype);
const char *torch_device_name(int8_t type);

#endif
