/* Where PyTorch keeps a tensor's facts, per release line. Data only, chosen by the detected torch
 * version and confirmed on live data (RTTI names, the PyObject back-pointer) before use. */
#ifndef CULEAK_TORCH_LAYOUT_H
#define CULEAK_TORCH_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

struct torch_layout {
    const char *name;           /* "2.13-2.15" */
    bool verified;              /* checked against a real wheel here, not only read from headers */
    /* THPVariable (the Python object) */
    uint16_t thp_impl;          /* TensorImpl* */
    /* c10::TensorImpl */
    uint16_t ti_storage, ti_autograd_meta, ti_pyobj, ti_sizes_strides, ti_storage_offset, ti_numel,
        ti_dtype, ti_device;
    bool device_engaged_last;   /* std::optional<Device>: {type, index, engaged}; c10::optional:
                                   {engaged, type, index} */
    /* c10::StorageImpl */
    uint16_t si_data, si_device, si_size_bytes;
    /* torch::autograd::AutogradMeta */
    uint16_t am_grad, am_grad_fn, am_requires_grad;
    /* Releases up to 2.6 were built both with the old C++ ABI (PyPI) and the new one (distros),
     * and AutogradMeta starts with a std::string: 8 bytes in the old ABI, 32 in the new. Such
     * tables hold the old ABI's offsets; an AutogradMeta whose name_ is a new-ABI string (its
     * data pointer points into itself) has its fields 24 bytes further. */
    bool am_abi_varies;
    uint8_t dtype_undefined;    /* the first ScalarType value that is not a real dtype */
};

/* The table for torch major.minor, or NULL when culeak has none. */
const struct torch_layout *torch_layout_for(unsigned major, unsigned minor);
/* The i-th table, oldest first, or NULL past the last; their names, comma-separated. */
const struct torch_layout *torch_layout_at(size_t i);
const char *torch_layout_names(void);

#endif
