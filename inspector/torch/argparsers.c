#include "torch/argparsers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols.h"
#include "torch/cxx.h"
#include "torch/cxxrefs.h"

/* Where a parser's parts lie, by the std::string ABI its wheel was built with: libstdc++'s C++11
 * string {data, length, capacity or inline buffer} (32 bytes; PyPI's wheels from 2.7), or the
 * old copy-on-write one, a pointer to the characters, whose length is the word 24 bytes before
 * them (_Rep {length, capacity, refcount}; PyPI's wheels up to 2.6). FunctionSignature: std::string
 * name, then std::vector<FunctionParameter> params, then counts (and, some releases,
 * overloaded_args): 88 bytes in 2.13, 64 in 2.1-2.4; the strides are tried. FunctionParameter:
 * ParameterType type_, four bools, int size, std::string name, PyObject *python_name,
 * c10::SmallVector<PyObject *, 5> numpy_python_names ({BeginX, uint32_t Size, uint32_t
 * Capacity}, then its inline elements), then defaults: 256 bytes in 2.13. */
static const struct parser_layout {
    bool cow_string;
    uint16_t sig_params, param_python_name, param_numpy_names;
} layouts[] = {
    {false, 32, 48, 56},
    {true, 8, 24, 32},
};
static const unsigned sig_strides[] = {64, 72, 80, 88, 96, 104, 112, 120};
#define PARAM_NAME 16
#define MIN_PARAM 64
#define MAX_PARAM 512
#define MAX_SIGNATURES 256 /* one parser's overloads, at most */
#define MAX_PARAMS 128     /* one signature's */
#define MAX_NAME 128       /* a name read, at most */

/* The std::string at `at` under layout l into out (at most cap - 1 bytes); false when it is
 * none. */
static bool read_string(struct cl_target *t, const struct parser_layout *l, uint64_t at, char *out,
                        size_t cap)
{
    uint64_t s[2]; /* data, length */
    if (cl_read_held(t, at, s, l->cow_string ? 8 : sizeof s) || !s[0] ||
        (l->cow_string && (s[0] < 24 || cl_read_held(t, s[0] - 24, &s[1], 8))) || s[1] >= cap ||
        cl_read_held(t, s[0], out, s[1]))
        return false;
    out[s[1]] = 0;
    return memchr(out, 0, s[1]) == NULL;
}

/* Whether w is a str of the heap, with text `text` when that is given. */
static bool is_str(struct py_heap *h, uint64_t w, const char *text)
{
    uint32_t j = w && !(w & 7) ? py_heap_find(h, w) : PY_NO_NODE;
    char buf[MAX_NAME];
    return j != PY_NO_NODE && py_node_type(h, j)->family == PY_F_STR &&
           (!text || (py_str_read(&h->objects, w, buf, sizeof buf) && strcmp(buf, text) == 0));
}

/* The parameter at p: its name into name, and its references into refs[0..*n) (its python_name,
 * then its numpy names); false when it is no parameter. */
static bool read_param(struct py_heap *h, const struct parser_layout *l, uint64_t p, char *name,
                       uint64_t *refs, unsigned *n)
{
    struct cl_target *t = h->objects.rt->t;
    uint64_t python_name, numpy[2]; /* BeginX, {Size, Capacity} */
    if (!read_string(t, l, p + PARAM_NAME, name, MAX_NAME) ||
        cl_read_held(t, p + l->param_python_name, &python_name, 8) ||
        !is_str(h, python_name, name) ||
        cl_read_held(t, p + l->param_numpy_names, numpy, sizeof numpy))
        return false;
    uint32_t count = (uint32_t)numpy[1], capacity = (uint32_t)(numpy[1] >> 32);
    refs[0] = python_name;
    *n = 1;
    if (count > capacity || count > 8 || (count && cl_read_held(t, numpy[0], refs + 1, 8 * count)))
        return false;
    for (uint32_t k = 0; k < count; k++)
        if (!is_str(h, refs[1 + k], NULL))
            return false;
    *n += count;
    return true;
}

/* The parameters of the vector at `at` (one signature's), under a stride that every one checks;
 * their references added to r. False when none does. */
static bool read_params(struct py_heap *h, const struct parser_layout *l, uint64_t at,
                        const char *fn, struct cxx_refs *r)
{
    struct cl_target *t = h->objects.rt->t;
    uint64_t v[3], refs[9];
    unsigned n;
    char name[MAX_NAME];
    if (!cxx_vector_held(t, at, 8, (uint64_t)MAX_PARAMS * MAX_PARAM / 8, v))
        return false;
    if (v[0] == v[1])
        return true;
    for (uint64_t stride = MIN_PARAM; stride <= MAX_PARAM; stride += 8) {
        if ((v[1] - v[0]) % stride || (v[1] - v[0]) / stride > MAX_PARAMS)
            continue;
        uint64_t p = v[0];
        while (p < v[1] && read_param(h, l, p, name, refs, &n))
            p += stride;
        if (p < v[1])
            continue;
        for (p = v[0]; p < v[1]; p += stride) {
            read_param(h, l, p, name, refs, &n);
            for (unsigned k = 0; k < n; k++)
                cxx_refs_add(r, refs[k], "<torch argument parser: %s(%s)>", fn, name);
        }
        return true;
    }
    return false;
}

/* The parser whose signatures_ vector is at `at`, if it is one: every signature and parameter
 * checks under one signature stride, and only then are their references added to r. */
static void read_parser(struct py_heap *h, uint64_t at, struct cxx_refs *r)
{
    struct cl_target *t = h->objects.rt->t;
    uint64_t v[3];
    char fn[MAX_NAME];
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
        const struct parser_layout *l = &layouts[i];
        for (size_t k = 0; k < sizeof sig_strides / sizeof *sig_strides; k++) {
            unsigned stride = sig_strides[k];
            if (!cxx_vector_held(t, at, stride, MAX_SIGNATURES, v) || v[0] == v[1] || (v[0] & 7))
                continue;
            struct cxx_refs mine = {0};
            uint64_t s = v[0];
            while (s < v[1] && read_string(t, l, s, fn, sizeof fn) &&
                   read_params(h, l, s + l->sig_params, fn, &mine))
                s += stride;
            if (s == v[1]) {
                cxx_refs_take(r, &mine);
                return;
            }
            cxx_refs_free(&mine);
        }
    }
}

/* Whether the three words w[0..3) may open a std::vector of signatures on the heap. */
static bool vector_shaped(const uint64_t *w)
{
    return w[0] && !(w[0] & 7) && w[0] < w[1] && w[1] <= w[2] &&
           w[1] - w[0] <= (uint64_t)MAX_SIGNATURES * 128;
}

bool torch_argparsers_explain(struct py_heap *h)
{
    const struct py_runtime *rt = h->objects.rt;
    const struct cl_module *lib =
        rt->module && rt->module->owner
            ? cl_symbols_module_named(rt->module->owner, "libtorch_python")
            : NULL;
    uint64_t bss, size;
    if (!lib || !cl_module_section_optional(lib, ".bss", &bss, &size) || !size)
        return false;
    struct cxx_refs r = {0};
    uint64_t words[CL_PAGE_SIZE / 8 + 2];
    for (uint64_t page = bss & ~(uint64_t)(CL_PAGE_SIZE - 1); page < bss + size && !r.oom;
         page += CL_PAGE_SIZE) {
        /* two words of the next page too, for a vector that the page's end cuts */
        if (cl_read_held(rt->t, page, words, CL_PAGE_SIZE))
            continue;
        if (cl_read_held(rt->t, page + CL_PAGE_SIZE, words + CL_PAGE_SIZE / 8, 16))
            words[CL_PAGE_SIZE / 8] = words[CL_PAGE_SIZE / 8 + 1] = 0;
        for (size_t k = 0; k < CL_PAGE_SIZE / 8; k++) {
            uint64_t at = page + 8 * k;
            if (at >= bss && at + 24 <= bss + size && vector_shaped(words + k))
                read_parser(h, at, &r);
        }
    }
    return cxx_refs_confirm(h, &r);
}
