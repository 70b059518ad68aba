#include "torch/type_readers.h"

#include "cpython/pybind11_types.h"
#include "torch/tracebacks.h"

size_t torch_type_readers_init(struct torch_type_readers *r, const struct cl_torch_info *torch)
{
    torch_guards_init(&r->guards, torch);
    r->v[0] = (struct py_type_reader){TORCH_TRACEBACK_TYPE, TORCH_TRACEBACK_BASICSIZE,
                                      torch_traceback_emit, NULL};
    r->v[1] = (struct py_type_reader){TORCH_GUARDS_ROOT_TYPE, PY_PYBIND11_INSTANCE_SIZE,
                                      torch_guards_emit, &r->guards};
    return sizeof r->v / sizeof *r->v;
}
