#include "torch/reducer.h"

#include "cpython/pybind11_types.h"


/* clang-format off */
/* Read off each release's wheel by tests/layouts/probe_reducer.py (a one-rank gloo job's Reducer,
 * its members found as the vectors of the parameters' and the buckets' TensorImpls): 2.1.2,
 * 2.4.1, 2.6.0 to 2.11.0 (a Bucket of 216 bytes), 2.12.1 to 2.14.1 (240) and 2.15.0 (248). */
static const struct torch_reducer_layout layouts[] = {
    {2, 1, 1, 40, 368, 216},
    {2, 4, 4, 40, 368, 216},
    {2, 6, 11, 40, 368, 216},
    {2, 12, 14, 40, 368, 240},
    {2, 15, 15, 40, 368, 248},
};
/* clang-format on */

#define MAX_REDUCER (64u << 10) /* bytes: a Reducer is about 1 KB */
#define MAX_PARAMS (1u << 20)

const struct torch_reducer_layout *torch_reducer_layout_for(unsigned major, unsigned minor)
{
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
        if (layouts[i].major == major && minor >= layouts[i].first_minor &&
            minor <= layouts[i].last_minor)
            return &layouts[i];
    return NULL;
}

/* Whether the vector's every elem-byte element opens with a TensorImpl. */
static bool tensors_first(struct cl_target *t, struct cxx_classifier *c, const uint64_t v[3],
                          uint64_t elem)
{
    for (uint64_t at = v[0]; at < v[1]; at += elem) {
        uint64_t impl;
        if (cl_read_held(t, at, &impl, sizeof impl) || cxx_classify(c, impl) != CXX_TENSOR)
            return false;
    }
    return true;
}

int torch_reducer_buckets(struct cl_target *t, struct cxx_classifier *c,
                          const struct torch_reducer_layout *l, uint64_t obj, uint64_t *impls,
                          size_t cap)
{
    uint64_t head[(PY_PYBIND11_FLAGS + 8) / 8], params[3], buckets[3];
    if (cl_read_held(t, obj, head, sizeof head))
        return -1;
    uint64_t reducer = head[PY_PYBIND11_VALUE / 8];
    uint64_t size =
        cl_target_holds_range(t, reducer - 8, 8) ? cxx_malloc_size(t, reducer, MAX_REDUCER) : 0;
    if (!(head[PY_PYBIND11_FLAGS / 8] & PY_PYBIND11_SIMPLE_LAYOUT) ||
        head[PY_PYBIND11_HOLDER / 8] != reducer || size < (uint64_t)l->buckets + sizeof buckets ||
        !cxx_vector_held(t, reducer + l->params, 8, MAX_PARAMS, params) || params[0] == params[1] ||
        !tensors_first(t, c, params, 8) ||
        !cxx_vector_held(t, reducer + l->buckets, l->bucket_size, TORCH_MAX_BUCKETS, buckets) ||
        !tensors_first(t, c, buckets, l->bucket_size))
        return -1;
    size_t n = 0;
    for (uint64_t at = buckets[0]; at < buckets[1] && n < cap; at += l->bucket_size)
        if (cl_read_held(t, at, &impls[n], sizeof *impls) == 0)
            n++;
    return (int)n;
}
