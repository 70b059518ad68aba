/* The owning references of one autograd Node, read exactly: its next edges from
 * Node::next_edges_, the tensors (and, with hooks, nodes) its SavedVariables hold, an
 * AccumulateGrad's variable and a custom Function's Python context. Weak references
 * (weak_grad_fn_, a tensor's grad_accumulator_, enable_shared_from_this) are never edges.
 *
 * Node classes are hundreds, so their members are not tabled: SavedVariables are found by
 * checking every aligned place in the node's own allocation for a whole, valid SavedVariable
 * (or a std::vector of them), and a candidate that fails any check is not an edge. */
#ifndef CULEAK_TORCH_AUTOGRAD_H
#define CULEAK_TORCH_AUTOGRAD_H

#include <stdint.h>

#include "torch/cxx.h"
#include "torch/layout.h"

enum torch_ref {
    TORCH_REF_NEXT,        /* next_edges_[i].function: a Node */
    TORCH_REF_SAVED,       /* a SavedVariable's data_: a TensorImpl */
    TORCH_REF_SAVED_NODE,  /* a SavedVariable's grad_fn_ or grad_accumulator_ (kept with hooks) */
    TORCH_REF_VARIABLE,    /* AccumulateGrad::variable: the leaf's TensorImpl */
    TORCH_REF_CONTEXT,     /* PyNode::obj: the custom Function's ctx, a Python object */
    TORCH_REF_PACKED,      /* what a saved_tensors_hooks pack function returned: a PyObject */
    TORCH_REF_HOOK,        /* a saved_tensors_hooks pack or unpack function: a PyObject */
    TORCH_REF_NODE_HOOKS,  /* the dict of a node's Python hooks of one kind: a PyObject */
};

/* Receives each reference: a Node*, a TensorImpl* or a PyObject* by kind. */
typedef void torch_ref_fn(void *arg, enum torch_ref kind, uint64_t dst);

/* The references of the node at addr (whose class was classified as a node). CL_E_UNSUPPORTED
 * when its next_edges_ is not a vector of valid edges: the layout does not fit this build. */
int torch_node_refs(struct cxx_classifier *c, const struct torch_autograd_layout *l, uint64_t node,
                    torch_ref_fn *fn, void *arg);

/* How far l's SavedVariable layout explains a node, as counts summed over the nodes checked. A
 * layout that does not fit validates few SavedVariables or none, so a table read off another
 * release must explain them before it is used (its saved tensors would go missing without a
 * word). */
struct torch_saved_fit {
    unsigned tensors; /* aligned words of nodes' own members that point at a live TensorImpl */
    unsigned explained; /* ...of them, the data_ of a valid SavedVariable in place */
    unsigned contexts; /* custom Functions' ctx (a PyNode's) with saved_variables to read */
    unsigned contexts_read; /* ...of them, empty or a vector of valid SavedVariables */
};

/* Adds the node at node to fit. AccumulateGrad is not counted (its variable is not saved); a
 * PyNode counts its ctx's saved_variables. */
void torch_node_saved_fit(struct cxx_classifier *c, const struct torch_autograd_layout *l,
                          uint64_t node, struct torch_saved_fit *fit);

/* The SavedVariables of a custom Function's context (THPFunction::saved_variables), a Python
 * object at ctx. */
void torch_context_saved(struct cxx_classifier *c, const struct torch_autograd_layout *l,
                         uint64_t ctx, torch_ref_fn *fn, void *arg);

#endif
