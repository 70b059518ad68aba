#include "torch/tensortypes.h"

#include <string.h>

#include "symbols/symbols.h"
#include "torch/cxx.h"
#include "torch/cxxrefs.h"

#define MAX_TENSOR_TYPES 4096 /* torch makes a few hundred at most */

/* Whether w is a node of the heap whose type is named name. */
static bool node_of(const struct py_heap *h, uint64_t w, const char *name)
{
    uint32_t j = w && !(w & 7) ? py_heap_find(h, w) : PY_NO_NODE;
    return j != PY_NO_NODE && strcmp(py_node_type(h, j)->name, name) == 0;
}

/* Each tensor type's dtype and layout, the words past its metaclass's size. */
static void fields(struct py_heap *h, struct cxx_refs *r)
{
    struct cl_target *t = h->objects.rt->t;
    for (uint32_t i = 0; i < h->n; i++) {
        const struct py_type *ty = py_node_type(h, i);
        uint64_t w[2], at = h->nodes[i].addr;
        if (strcmp(ty->name, "torch.tensortype") != 0 || ty->basicsize <= 0 ||
            cl_read_held(t, at + (uint64_t)ty->basicsize, w, sizeof w) ||
            !node_of(h, w[0], "torch.dtype") || !node_of(h, w[1], "torch.layout"))
            continue;
        const struct py_type *self = py_type_at(&h->objects, at); /* NULL: unreadable now */
        const char *name = self ? self->name : "a tensor type";
        cxx_refs_add(r, w[0], "<%s's dtype>", name);
        cxx_refs_add(r, w[1], "<%s's layout>", name);
    }
}

/* The types torch::tensors::tensor_types holds, where every element is one. */
static void registry(struct py_heap *h, struct cxx_refs *r)
{
    const struct py_runtime *rt = h->objects.rt;
    const struct cl_module *lib =
        rt->module->owner ? cl_symbols_module_named(rt->module->owner, "libtorch_python") : NULL;
    uint64_t at, v[3], types[MAX_TENSOR_TYPES];
    if (!lib || !cl_module_symbol_optional(lib, "_ZN5torch7tensorsL12tensor_typesE", &at, NULL) ||
        !cxx_vector_held(rt->t, at, 8, MAX_TENSOR_TYPES, v) || v[0] == v[1] ||
        cl_read_held(rt->t, v[0], types, v[1] - v[0]))
        return;
    size_t n = (v[1] - v[0]) / 8;
    for (size_t k = 0; k < n; k++)
        if (!node_of(h, types[k], "torch.tensortype"))
            return;
    for (size_t k = 0; k < n; k++)
        cxx_refs_add(r, types[k], "<torch::tensors::tensor_types[%zu]>", k);
}

bool torch_tensortypes_explain(struct py_heap *h)
{
    struct cxx_refs r = {0};
    fields(h, &r);
    if (h->objects.rt->module)
        registry(h, &r);
    return cxx_refs_confirm(h, &r);
}
