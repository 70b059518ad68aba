/* PyTorch layouts (x86-64). The 2.0, 2.1, 2.4-2.9, 2.10-2.12 and 2.13-2.15 lines were read off
 * live processes of the real wheels here (2.0.1, 2.1.2, 2.4.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1, 2.10.0,
 * 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0, CPU and CUDA builds); 1.13 on Debian 12's
 * python3-torch 1.13.1 (its table holds old-ABI offsets; that new-ABI build is read by the same
 * rule as PyPI's 2.7-2.9). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "torch/layout.h"
#include "util/text.h"

/* clang-format off */
static const struct torch_layout torch113 = {
    .name = "1.13", .major = 1, .first_minor = 13, .last_minor = 13, .verified = true,
    .thp_impl = 24, .thp_storage = 16,
    .ti_storage = 24, .ti_autograd_meta = 32, .ti_pyobj = 64, .ti_sizes_strides = 72,
    .ti_storage_offset = 160, .ti_numel = 168, .ti_dtype = 176, .ti_device = 178,
    .device_engaged_last = false,
    .si_data = 24, .si_device = 48, .si_size_bytes = 56,
    .am_grad = 16, .am_grad_fn = 24, .am_requires_grad = 112, .am_view_base = 184,
    .am_abi_varies = true, .dtype_undefined = 18,
};

/* 2.0 (the 2.0.1 wheel) and 2.1 (2.1.2) share TensorImpl and StorageImpl; 2.1's AutogradMeta
 * holds 8 bytes more before requires_grad_, 2.1 added dtypes, and its THPStorage holds a
 * MaybeOwned<Storage> where 2.0's holds a StorageImpl* (2.0's offset is its header's). */
#define TORCH_2_0_2_1(NAME, MINOR) \
    .name = NAME, .major = 2, .first_minor = MINOR, .last_minor = MINOR, .verified = true, \
    .thp_impl = 24, \
    .ti_storage = 24, .ti_autograd_meta = 32, .ti_pyobj = 64, .ti_sizes_strides = 72, \
    .ti_storage_offset = 160, .ti_numel = 168, .ti_dtype = 176, .ti_device = 178, \
    .device_engaged_last = false, \
    .si_data = 24, .si_device = 48, .si_size_bytes = 56, \
    .am_grad = 16, .am_grad_fn = 24, .am_abi_varies = true
static const struct torch_layout torch20 = {
    TORCH_2_0_2_1("2.0", 0), .thp_storage = 16, .am_requires_grad = 112, .am_view_base = 168,
    .dtype_undefined = 18};
static const struct torch_layout torch21 = {
    TORCH_2_0_2_1("2.1", 1), .thp_storage = 24,
    .am_requires_grad = 120, .am_view_base = 176, .dtype_undefined = 44};

/* PyPI's builds use the old C++ ABI up to 2.6 and the new one from 2.7 (2.7.1, 2.8.0, 2.9.1:
 * their AutogradMeta is read 24 bytes further by the ABI rule) */
static const struct torch_layout torch24 = {
    .name = "2.4-2.9", .major = 2, .first_minor = 4, .last_minor = 9, .verified = true,
    .thp_impl = 24, .thp_storage = 24,
    .ti_storage = 16, .ti_autograd_meta = 24, .ti_pyobj = 56, .ti_sizes_strides = 64,
    .ti_storage_offset = 152, .ti_numel = 160, .ti_dtype = 168, .ti_device = 170,
    .device_engaged_last = true,
    .si_data = 16, .si_device = 40, .si_size_bytes = 48, .si_pyobj = 80,
    .am_grad = 16, .am_grad_fn = 24, .am_requires_grad = 120, .am_view_base = 168,
    .am_abi_varies = true, .dtype_undefined = 44,
};

/* Up to 2.12 TensorImpl's pyobj_slot_ is {interpreter, PyObject*} (16 bytes) and AutogradMeta
 * holds grad_fn_ in a shared_ptr (16 bytes); from 2.13 the PyObject* alone and an intrusive_ptr. */
static const struct torch_layout torch210 = {
    .name = "2.10-2.12", .major = 2, .first_minor = 10, .last_minor = 12, .verified = true,
    .thp_impl = 16, .thp_storage = 16,
    .ti_storage = 16, .ti_autograd_meta = 24, .ti_pyobj = 56, .ti_sizes_strides = 64,
    .ti_storage_offset = 152, .ti_numel = 160, .ti_dtype = 168, .ti_device = 170,
    .device_engaged_last = true,
    .si_data = 16, .si_device = 40, .si_size_bytes = 48, .si_pyobj = 80,
    .am_grad = 40, .am_grad_fn = 48, .am_requires_grad = 144, .am_view_base = 200,
    .dtype_undefined = 47, .pyobj_owner = TORCH_PYOBJ_REFCOUNT};

static const struct torch_layout torch213 = {
    .name = "2.13-2.15", .major = 2, .first_minor = 13, .last_minor = 15, .verified = true,
    .thp_impl = 16, .thp_storage = 16,
    .ti_storage = 16, .ti_autograd_meta = 24, .ti_pyobj = 48, .ti_sizes_strides = 56,
    .ti_storage_offset = 144, .ti_numel = 152, .ti_dtype = 160, .ti_device = 162,
    .device_engaged_last = true,
    .si_data = 16, .si_device = 40, .si_size_bytes = 48, .si_pyobj = 80,
    .am_grad = 40, .am_grad_fn = 48, .am_requires_grad = 128, .am_view_base = 184,
    .dtype_undefined = 47, .pyobj_owner = TORCH_PYOBJ_REFCOUNT,
};

static const struct torch_layout *const layouts[] = {&torch113, &torch20, &torch21, &torch24,
                                                     &torch210, &torch213};
#define NLAYOUTS (sizeof layouts / sizeof *layouts)
/* clang-format on */

const struct torch_layout *torch_layout_for(unsigned major, unsigned minor)
{
    for (size_t i = 0; i < NLAYOUTS; i++)
        if (layouts[i]->major == major && minor >= layouts[i]->first_minor &&
            minor <= layouts[i]->last_minor)
            return layouts[i];
    return NULL;
}

const struct torch_layout *torch_layout_named(const char *name)
{
    for (size_t i = 0; i < NLAYOUTS; i++)
        if (strcmp(layouts[i]->name, name) == 0)
            return layouts[i];
    return NULL;
}

const struct torch_layout *const *torch_layouts(size_t *n)
{
    *n = NLAYOUTS;
    return layouts;
}

static const char *table_name(size_t i)
{
    return layouts[i]->name;
}

const char *torch_layout_names(char *buf, size_t cap)
{
    return cl_join_names(buf, cap, NLAYOUTS, table_name);
}

/* ---- autograd ----
 * Read off live processes of each release by tests/layouts/probe_autograd.py (every offset found
 * by searching memory for values known from Python): Debian's 1.13.1 and PyPI's 2.0.1, 2.1.2,
 * 2.4.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1, 2.10.0, 2.11.0, 2.12.1, 2.13.0, 2.14.1 and 2.15.0 (2.6.0 to
 * 2.12.1 probe alike, whichever C++ ABI they were built with). Until 2.12 graphs hold nodes in
 * std::shared_ptr (AccumulateGrad made by make_shared, other nodes with their own control block);
 * from 2.13 in c10::intrusive_ptr, with 16-byte edges. */
/* clang-format off */
#define SHARED_NODES(NAME, MAJOR, FIRST, LAST, NODE_SIZE, THPF_SAVED) \
    .name = NAME, .major = MAJOR, .first_minor = FIRST, .last_minor = LAST, .node_ptr_words = 2, \
    .node_next_edges = 96, .node_pyobj = 120, .node_size = NODE_SIZE, .pynode_obj = NODE_SIZE, \
    .thpfunction_saved = THPF_SAVED, .sv_data = 0, .sv_fw_grad = 8, .sv_weak_grad_fn = 24, \
    .sv_nflags = 5
/* SavedVariable until 2.4 keeps a version_counter_ (8 bytes) that 2.6 dropped */
#define SV_WITH_VERSION_COUNTER \
    .sv_size = 112, .sv_output_nr = 52, .sv_flags = 56, .sv_grad_fn = 72, .sv_grad_accumulator = 88
#define SV_WITHOUT_VERSION_COUNTER \
    .sv_size = 104, .sv_output_nr = 44, .sv_flags = 48, .sv_grad_fn = 64, .sv_grad_accumulator = 80

/* SavedVariable::hooks_ and PySavedVariableHooks {vptr, pack_hook_, unpack_hook_, data_}, read off
 * Debian's 1.13.1, PyPI's 2.0.1, 2.1.2, 2.4.1, 2.6.0, 2.8.0, 2.10.0, 2.12.1, 2.13.0 and 2.14.1 (a
 * saved_tensors_hooks pair around a product: the hooks' RTTI, then the functions' and the packed
 * object's ids) */
#define PY_SAVED_HOOKS .svh_pack = 8, .svh_unpack = 16, .svh_data = 24
#define SV_HOOKS_2_13 .sv_hooks = 48, PY_SAVED_HOOKS
/* Node::pre_hooks_, tensor_pre_hooks_ and post_hooks_, read off 2.13.0, 2.14.1 and 2.15.0, and
 * off 2.0.1, 2.1.2, 2.4.1, 2.6.0, 2.10.0 and 2.12.1 (a hook of each kind registered, found by their
 * RTTI: a tensor's hook in the node of the tensor it was registered on while that lives) */
#define NODE_HOOKS_2_13 .node_pre_hooks = 128, .node_tensor_pre_hooks = 152, .node_post_hooks = 232
#define NODE_HOOKS_2_1 .node_pre_hooks = 136, .node_tensor_pre_hooks = 160, .node_post_hooks = 240
/* 1.13 keeps a tensor's hooks in pre_hooks_ too, each a PyFunctionPreHook (Debian's 1.13.1) */
#define NODE_HOOKS_1_13 .node_pre_hooks = 136, .node_post_hooks = 160

static const struct torch_autograd_layout autograd_layouts[] = {
    {SHARED_NODES("1.13", 1, 13, 13, 392, 104), SV_WITH_VERSION_COUNTER,
     .sv_grad_accumulator_weak = true, .sv_hooks = 64, PY_SAVED_HOOKS, NODE_HOOKS_1_13},
    /* 2.0's ctx keeps saved_variables 24 bytes earlier than 2.1's, and a SavedVariable's
     * grad_accumulator_ is still a weak_ptr */
    {SHARED_NODES("2.0", 2, 0, 0, 472, 104), SV_WITH_VERSION_COUNTER,
     .sv_grad_accumulator_weak = true, .sv_hooks = 64, PY_SAVED_HOOKS, NODE_HOOKS_2_1},
    {SHARED_NODES("2.1", 2, 1, 1, 472, 128), SV_WITH_VERSION_COUNTER, .sv_hooks = 64,
     PY_SAVED_HOOKS, NODE_HOOKS_2_1},
    {SHARED_NODES("2.4", 2, 4, 4, 472, 136), SV_WITH_VERSION_COUNTER, .sv_hooks = 64,
     PY_SAVED_HOOKS, NODE_HOOKS_2_1},
    {SHARED_NODES("2.6-2.12", 2, 6, 12, 472, 136), SV_WITHOUT_VERSION_COUNTER, .sv_hooks = 56,
     PY_SAVED_HOOKS, NODE_HOOKS_2_1},
    {.name = "2.13", .major = 2, .first_minor = 13, .last_minor = 13, .node_ptr_words = 1,
     .node_next_edges = 88, .node_pyobj = 112, .node_size = 464, .pynode_obj = 112, .thpfunction_saved = 136,
     .thpfunction_cdata = 216,
     .sv_size = 80, .sv_data = 0, .sv_fw_grad = 8, .sv_weak_grad_fn = 24, .sv_output_nr = 36,
     .sv_flags = 40, .sv_nflags = 5, .sv_grad_fn = 56, .sv_grad_accumulator = 64, SV_HOOKS_2_13,
     NODE_HOOKS_2_13},
    {.name = "2.14", .major = 2, .first_minor = 14, .last_minor = 14, .node_ptr_words = 1,
     .node_next_edges = 88, .node_pyobj = 112, .node_size = 464, .pynode_obj = 112, .thpfunction_saved = 192,
     .thpfunction_cdata = 280,
     .sv_size = 80, .sv_data = 0, .sv_fw_grad = 8, .sv_weak_grad_fn = 24, .sv_output_nr = 36,
     .sv_flags = 40, .sv_nflags = 5, .sv_grad_fn = 56, .sv_grad_accumulator = 64, SV_HOOKS_2_13,
     NODE_HOOKS_2_13},
    /* 2.14's, but for PySavedVariableHooks' members, each a std::optional<SafePyObject> */
    {.name = "2.15", .major = 2, .first_minor = 15, .last_minor = 15, .node_ptr_words = 1,
     .node_next_edges = 88, .node_pyobj = 112, .node_size = 464, .pynode_obj = 112, .thpfunction_saved = 192,
     .thpfunction_cdata = 280,
     .sv_size = 80, .sv_data = 0, .sv_fw_grad = 8, .sv_weak_grad_fn = 24, .sv_output_nr = 36,
     .sv_flags = 40, .sv_nflags = 5, .sv_grad_fn = 56, .sv_grad_accumulator = 64,
     .sv_hooks = 48, .svh_pack = 8, .svh_unpack = 32, .svh_data = 56, .svh_optional = true,
     NODE_HOOKS_2_13},
};
/* clang-format on */
#define NAUTOGRAD (sizeof autograd_layouts / sizeof *autograd_layouts)

const struct torch_autograd_layout *torch_autograd_layout_for(unsigned major, unsigned minor)
{
    for (size_t i = 0; i < NAUTOGRAD; i++) {
        const struct torch_autograd_layout *l = &autograd_layouts[i];
        if (l->major == major && minor >= l->first_minor && minor <= l->last_minor)
            return l;
    }
    return NULL;
}

static const struct torch_autograd_layout *const autograd_all[] = {
    &autograd_layouts[0], &autograd_layouts[1], &autograd_layouts[2], &autograd_layouts[3],
    &autograd_layouts[4], &autograd_layouts[5], &autograd_layouts[6], &autograd_layouts[7],
};
_Static_assert(sizeof autograd_all / sizeof *autograd_all == NAUTOGRAD,
               "autograd_all lists every autograd table");

const struct torch_autograd_layout *torch_autograd_layout_named(const char *name)
{
    for (size_t i = 0; i < NAUTOGRAD; i++)
        if (strcmp(autograd_layouts[i].name, name) == 0)
            return &autograd_layouts[i];
    return NULL;
}

const struct torch_autograd_layout *const *torch_autograd_layouts(size_t *n)
{
    *n = NAUTOGRAD;
    return autograd_all;
}

static const char *autograd_table_name(size_t i)
{
    return autograd_layouts[i].name;
}

const char *torch_autograd_layout_names(char *buf, size_t cap)
{
    return cl_join_names(buf, cap, NAUTOGRAD, autograd_table_name);
}
