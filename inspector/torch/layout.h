/* Where PyTorch keeps a tensor's facts, per release line. Data only, chosen by the detected torch
 * version and confirmed on live data (RTTI names, the PyObject back-pointer) before use. */
#ifndef CULEAK_TORCH_LAYOUT_H
#define CULEAK_TORCH_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

struct torch_layout {
    const char *name;           /* "2.13-2.15" */
    unsigned major, first_minor, last_minor;   /* the releases it covers */
    bool verified; /* checked against a real wheel here, not only read from headers */
    /* THPVariable (the Python object) */
    uint16_t thp_impl; /* TensorImpl* */
    /* c10::TensorImpl */
    uint16_t ti_storage, ti_autograd_meta, ti_pyobj, ti_sizes_strides, ti_storage_offset, ti_numel,
        ti_dtype, ti_device;
    bool device_engaged_last; /* std::optional<Device>: {type, index, engaged}; c10::optional:
                                   {engaged, type, index} */
    /* THPStorage (a torch.UntypedStorage object)'s StorageImpl*: a raw pointer up to 2.0, a
     * c10::Storage from 2.10, in between the Storage of a c10::MaybeOwned<Storage> (a flag, then
     * the Storage whether owned or borrowed: MaybeOwnedTraits<Storage>'s borrow_type is one) */
    uint16_t thp_storage;
    /* c10::StorageImpl; si_pyobj 0 where it keeps no Python object (before 2.4), else its
     * pyobj_slot_'s PyObject*, owned as enum torch_pyobj_owner says */
    uint16_t si_data, si_device, si_size_bytes, si_pyobj;
    /* torch::autograd::AutogradMeta */
    uint16_t am_grad, am_grad_fn, am_requires_grad;
    uint16_t am_view_base; /* DifferentiableViewMeta's base_ (a view's root base, owning) */
    /* Releases up to 2.9 were built both with the old C++ ABI (PyPI's up to 2.6) and the new
     * one (distros; PyPI's from 2.7), and AutogradMeta starts with a std::string: 8 bytes in the
     * old ABI, 32 in the new. Such tables hold the old ABI's offsets; an AutogradMeta whose
     * name_ is a new-ABI string (its data pointer points into itself) has its fields 24 bytes
     * further. */
    bool am_abi_varies;
    uint8_t dtype_undefined; /* the first ScalarType value that is not a real dtype */
    uint8_t pyobj_owner; /* enum torch_pyobj_owner: when the TensorImpl (and StorageImpl)
                            holds a reference to its Python object */
};

/* When C++ holds a reference to a tensor's (or a storage's) Python object. Up to 2.9 ownership
 * flips once Python drops its last reference while C++ holds the tensor (the object is
 * resurrected) and the pyobj slot's pointer is tagged (bit 0). From 2.10 the TensorImpl holds one
 * whenever C++ holds the tensor besides the Python object: intrusive_ptr_target's combined
 * refcount has kHasPyObject (bit 63) set and a strong count (its low 32 bits) above 1. Autograd
 * nodes follow the second rule from 2.13, where they became intrusive_ptr_targets. */
enum torch_pyobj_owner { TORCH_PYOBJ_TAGGED, TORCH_PYOBJ_REFCOUNT };
#define TORCH_COMBINED_REFCOUNT 8 /* intrusive_ptr_target: after the vtable */
#define TORCH_HAS_PYOBJECT (1ull << 63)

/* Where torch::autograd keeps a graph (torch/autograd.c): Node, Edge, SavedVariable, and the two
 * derived nodes culeak reads. Its own family: it changes on other releases than the tensor's. */
struct torch_autograd_layout {
    const char *name; /* "2.13" */
    unsigned major, first_minor, last_minor; /* the releases it was read off */
    uint8_t node_ptr_words; /* how a graph holds a node: 1, c10::intrusive_ptr (the node's
                                   strong count is the u32 at TORCH_NODE_REFCOUNT); 2,
                                   std::shared_ptr (pointer, control block). An Edge is that,
                                   then input_nr. */
    uint16_t node_next_edges; /* Node::next_edges_, a std::vector<Edge> */
    uint16_t node_pyobj; /* Node's PyObject*: a weak back pointer to its grad_fn object until
                            2.12; from 2.13 its pyobj_slot_, owned by the refcount rule */
    uint16_t node_size; /* sizeof(Node): where a derived node's own members begin */
    uint16_t pynode_obj; /* PyNode's owning PyObject* to the custom Function's ctx (from 2.13
                            node_pyobj, owned by the refcount rule) */
    uint16_t thpfunction_saved; /* THPFunction::saved_variables, a std::vector<SavedVariable> */
    uint16_t thpfunction_cdata; /* THPFunction::cdata, from 2.13 an owning intrusive_ptr to its
                                   PyNode; 0 until 2.12, where it is a weak_ptr */
    /* SavedVariable: data_ (an at::Tensor: the undefined singleton once released), fw_grad_ (a
     * shared_ptr), weak_grad_fn_ (never owning), output_nr_, its bool flags
     * (was_default_constructed_ first), grad_fn_ and grad_accumulator_ (set only with saved-tensor
     * hooks); node pointers are node_ptr_words wide */
    uint16_t sv_size, sv_data, sv_fw_grad, sv_weak_grad_fn, sv_output_nr, sv_flags, sv_grad_fn,
        sv_grad_accumulator;
    uint8_t sv_nflags;
    bool sv_grad_accumulator_weak; /* a weak_ptr (1.13), not an owning reference */
    /* SavedVariable::hooks_, a std::unique_ptr<SavedVariableHooks> (0: not read in this line);
     * a torch::autograd::PySavedVariableHooks (a saved_tensors_hooks pair) owns its pack and
     * unpack functions and the object pack returned, at these offsets (from 2.15 each a
     * std::optional<c10::SafePyObject>: a flag 16 bytes after the pointer says it is set) */
    uint16_t sv_hooks;
    uint8_t svh_pack, svh_unpack, svh_data;
    bool svh_optional;
    /* Node's hooks: std::vectors of std::unique_ptr to hook objects (0: not read in this line);
     * the Python ones (grad_fn.register_prehook, a tensor's register_hook, grad_fn.register_hook)
     * each own the dict of functions registered, TORCH_PY_HOOK_DICT into them */
    uint16_t node_pre_hooks, node_tensor_pre_hooks, node_post_hooks;
};

/* The Python hooks a node keeps, in any of its vectors (C++ ones, such as retains_grad's, are
 * others), and where each keeps its dict */
#define TORCH_PY_NODE_HOOKS \
    {"N5torch8autograd17PyFunctionPreHookE", "N5torch8autograd23PyFunctionTensorPreHookE", \
     "N5torch8autograd18PyFunctionPostHookE"}
#define TORCH_PY_HOOK_DICT 8
#define TORCH_MAX_NODE_HOOKS 4096 /* hooks in one of a node's vectors */

/* PySavedVariableHooks' mangled class name: the hooks culeak reads (C++ hooks are others) */
#define TORCH_PY_SAVED_HOOKS "N5torch8autograd20PySavedVariableHooksE"
#define TORCH_SVH_OPTIONAL_FLAG 16 /* std::optional<SafePyObject>'s flag, after the pointer */

#define TORCH_NODE_REFCOUNT 8 /* c10::intrusive_ptr_target's strong count, after the vptr */
#define TORCH_THP_NODE \
    16 /* THPCppFunction::cdata's Node*, after the PyObject head, in every
                             release (a shared_ptr until 2.12, then an intrusive_ptr) */
#define TORCH_MAX_SAVED_VARIABLE 256 /* bytes: a bound on sv_size */

/* c10::SizesAndStrides, the same in every release: size_ (the dimension count), then a union of
 * TORCH_SS_MAX_INLINE sizes and as many strides inline, or a pointer to sizes then strides. */
#define TORCH_SS_MAX_INLINE 5
#define TORCH_SS_STORAGE 8 /* the union */
#define TORCH_SS_INLINE_STRIDES (TORCH_SS_STORAGE + 8 * TORCH_SS_MAX_INLINE) /* 48 */

/* AutogradMeta's name_ (after the vptr) where torch_layout.am_abi_varies: the new ABI's
 * std::string is {data, size, 16-byte buffer}, its data pointing at its own buffer while short;
 * the old ABI's is one pointer, so the fields after it sit TORCH_AM_NEW_ABI_SHIFT further. */
#define TORCH_AM_NAME 8
#define TORCH_AM_NAME_BUFFER (TORCH_AM_NAME + 16)
#define TORCH_AM_NEW_ABI_SHIFT 24

/* Each table family (cpython/layout.h, cudacache/layout.h and these two) has the same lookups:
 * X_layout_for(major, minor), X_layout_named(name), X_layouts(&n) (every table, oldest first)
 * and X_layout_names(buf, cap) (comma-separated, truncated to cap; returns buf). */

/* The autograd table for torch major.minor, or NULL. */
const struct torch_autograd_layout *torch_autograd_layout_for(unsigned major, unsigned minor);
const struct torch_autograd_layout *torch_autograd_layout_named(const char *name);
const struct torch_autograd_layout *const *torch_autograd_layouts(size_t *n);
const char *torch_autograd_layout_names(char *buf, size_t cap);

/* The table for torch major.minor, or NULL when culeak has none. */
const struct torch_layout *torch_layout_for(unsigned major, unsigned minor);
const struct torch_layout *torch_layout_named(const char *name);
const struct torch_layout *const *torch_layouts(size_t *n);
const char *torch_layout_names(char *buf, size_t cap);

#endif
