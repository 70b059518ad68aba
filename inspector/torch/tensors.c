#include "torch/tensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/balance.h"
#include "torch/autograd.h"
#include "torch/cxx.h"
#include "torch/argparsers.h"
#include "torch/dataowners.h"
#include "torch/reducer.h"
#include "torch/safepyobj.h"
#include "torch/tensortypes.h"
#include "util/notes.h"
#include "util/vec.h"
#include "util/bsearch.h"

#define CHECKED_TENSORS 64           /* reachable tensors that vote on the layout */

static const char *const dtype_names[] = {"uint8",
                                          "int8",
                                          "int16",
                                          "int32",
                                          "int64",
                                          "float16",
                                          "float32",
                                          "float64",
                                          "complex32",
                                          "complex64",
                                          "complex128",
                                          "bool",
                                          "qint8",
                                          "quint8",
                                          "qint32",
                                          "bfloat16",
                                          "quint4x2",
                                          "quint2x4",
                                          "bits1x8",
                                          "bits2x4",
                                          "bits4x2",
                                          "bits8",
                                          "bits16",
                                          "float8_e5m2",
                                          "float8_e4m3fn",
                                          "float8_e5m2fnuz",
                                          "float8_e4m3fnuz",
                                          "uint16",
                                          "uint32",
                                          "uint64",
                                          "uint1",
                                          "uint2",
                                          "uint3",
                                          "uint4",
                                          "uint5",
                                          "uint6",
                                          "uint7",
                                          "int1",
                                          "int2",
                                          "int3",
                                          "int4",
                                          "int5",
                                          "int6",
                                          "int7",
                                          "float8_e8m0fnu",
                                          "float4_e2m1fn_x2"};
static const uint8_t dtype_sizes[] = {1, 1, 2, 4, 8, 2, 4, 8, 4, 8, 16, 1, 1, 1, 4, 2,
                                      1, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1,  2, 4, 8, 1, 1,
                                      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,  1, 1, 1};
static const char *const device_names[] = {
    "cpu",  "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip",
    "fpga", "maia", "xla",    "vulkan", "metal",  "xpu",   "mps",
    "meta", "hpu",  "ve",     "lazy",   "ipu",    "mtia",  "privateuseone"};

const char *torch_dtype_name(uint8_t d)
{
    return d < sizeof dtype_names / sizeof *dtype_names ? dtype_names[d] : "unknown";
}

const char *torch_device_name(int8_t type)
{
    bool known = type >= 0 && (size_t)type < sizeof device_names / sizeof *device_names;
    return known ? device_names[type] : "unknown";
}

/* ---- the walk's state ---- */

struct walk {
    struct py_heap *h;
    struct cl_target *t;
    const struct torch_layout *l;
    const struct torch_autograd_layout *ag;
    unsigned major, minor;            /* the torch version, for the autograd table */
    struct torch_tensors *out;
    struct cxx_classifier cxx;
    uint8_t *type_kinds;              /* by type index: enum type_kind */
    struct py_storage *py_storages;   /* torch.UntypedStorage objects, in heap order */
    size_t npy_storages, py_storages_cap;
    struct node_object *node_objects; /* grad_fn objects and ctxs, in heap order */
    size_t nnode_objects, node_objects_cap;
    uint32_t *reducers;               /* heap nodes of DDP Reducers, in heap order */
    size_t nreducers, reducers_cap;
    struct cl_addrmap impl_index;     /* TensorImpl -> tensor */
    struct cl_addrmap storage_index;  /* StorageImpl -> storage */
    struct cl_addrmap name_of;        /* vtable or Python type -> names[] */
    struct cl_addrmap node_index;     /* Node* -> nodes[] */
    struct cl_addrmap contexts_read;  /* heap node of a ctx whose saved_variables were read */
    bool oom;                         /* an allocation failed: the graph is partial */
};

/* A torch.UntypedStorage object and the StorageImpl it owns. */
struct py_storage {
    uint32_t node;
    uint64_t impl;
};

/* A grad_fn object or a custom Function's ctx (heap node obj), and the node it owns (into
 * torch_tensors.nodes; UINT32_MAX for none, or until link_python_nodes has read it). */
struct node_object {
    uint32_t obj, node;
};

/* What torch makes of a heap type's instances. */
enum type_kind {
    TYPE_UNASKED,
    TYPE_TENSOR,  /* torch.Tensor or a subclass */
    TYPE_STORAGE, /* torch.UntypedStorage */
    TYPE_GRAD_FN, /* a C++ node's Python class (THPCppFunction: "MulBackward0") */
    TYPE_CONTEXT, /* a custom Function's ctx (THPFunction: its class derives _FunctionBase) */
    TYPE_REDUCER, /* DDP's c10d::Reducer, bound by pybind11 (torch/reducer.h) */
    TYPE_OTHER,
};

/* What heap node i's type is. A tensor's, a storage's or a ctx's base chain reaches the C type
 * torch._C.TensorBase (torch._C._TensorBase before 2.2), torch._C.StorageBase or
 * torch._C._FunctionBase. A grad_fn
 * class has no common base: it is a static C type with no family of its own, the size of a
 * THPCppFunction (a head and a shared_ptr<Node>, from 2.13 an intrusive_ptr), whose instance
 * holds a node there (the caller checks each instance's back pointer). Asked once a type, by
 * its index: every node of the heap asks. */
static enum type_kind type_kind(struct walk *w, uint32_t i)
{
    uint8_t *known = &w->type_kinds[w->h->nodes[i].type];
    if (*known != TYPE_UNASKED)
        return (enum type_kind)known[0];
    const struct py_type *ty = py_node_type(w->h, i);
    const struct py_layout *pl = w->h->objects.rt->l;
    *known = TYPE_OTHER;
    uint64_t base = ty->addr;
    for (int k = 0; k < 64 && base && *known == TYPE_OTHER; k++) {
        char name[48] = "";
        cl_read_cstr(w->t, cl_read_ptr_or_0(w->t, base + pl->tp_name), name, sizeof name);
        if (k == 0 && strcmp(name, TORCH_REDUCER_CLASS) == 0)
            *known = TYPE_REDUCER;
        else if (strcmp(name, "torch._C.TensorBase") == 0 ||
                 strcmp(name, "torch._C._TensorBase") == 0)
            *known = TYPE_TENSOR;
        else if (strcmp(name, "torch._C.StorageBase") == 0)
            *known = TYPE_STORAGE;
        else if (strcmp(name, "torch._C._FunctionBase") == 0)
            *known = TYPE_CONTEXT;
        base = cl_read_ptr_or_0(w->t, base + pl->tp_base);
    }
    if (*known == TYPE_OTHER && !ty->heap && ty->family == PY_F_OTHER &&
        (ty->basicsize == 24 || ty->basicsize == 32) &&
        cxx_classify(&w->cxx, cl_read_ptr_or_0(w->t, w->h->nodes[i].addr + TORCH_THP_NODE)) ==
            CXX_NODE)
        *known = TYPE_GRAD_FN;
    return (enum type_kind)known[0];
}

/* A new entry of names[], known by key (the address of what named it, 0 for none) from then on. */
static uint32_t add_name(struct walk *w, uint64_t key, const char *name)
{
    struct torch_tensors *tt = w->out;
    bool inserted;
    if (!CL_VEC_RESERVE(tt->names, tt->nnames, tt->names_cap) ||
        (key && cl_addrmap_put(&w->name_of, key, tt->nnames, &inserted) == UINT32_MAX)) {
        w->oom = true;
        return TORCH_NAME_UNKNOWN;
    }
    snprintf(tt->names[tt->nnames], sizeof *tt->names, "%s", name);
    return tt->nnames++;
}

/* The class name of a node, as users see it in grad_fn: "AddmmBackward0". Nodes of a class share
 * its vtable, which names it: the RTTI is read once a class. */
static uint32_t node_name(struct walk *w, uint64_t node)
{
    uint64_t vptr = node && !(node & 7) ? cl_read_ptr_or_0(w->t, node) : 0;
    uint32_t known = vptr ? cl_addrmap_get(&w->name_of, vptr) : TORCH_NAME_UNKNOWN;
    if (!vptr || known != UINT32_MAX)
        return known;
    const char *name = cxx_short_class(&w->cxx, node);
    return add_name(w, vptr, name ? name : "?");
}

/* The name of a custom Function's node: its ctx's class, as Python calls it. */
static uint32_t context_name(struct walk *w, const struct py_type *ty)
{
    uint32_t known = cl_addrmap_get(&w->name_of, ty->addr);
    return known != UINT32_MAX ? known : add_name(w, ty->addr, ty->name);
}

/* ---- tensors ---- */

/* Room for one more tensor (not yet counted: add_impl does that). */
static struct torch_tensor *new_tensor(struct walk *w)
{
    struct torch_tensors *tt = w->out;
    if (tt->n == UINT32_MAX - 1 || !CL_VEC_RESERVE(tt->v, tt->n, tt->cap)) {
        w->oom = true;
        return NULL;
    }
    struct torch_tensor *x = &tt->v[tt->n];
    memset(x, 0, sizeof *x);
    x->node = PY_NO_NODE;
    x->grad_fn_node = TORCH_NO_NODE;
    x->storage_index = UINT32_MAX;
    x->dims = (uint32_t)tt->ndims;
    return x;
}

/* The address of an AutogradMeta field (see torch_layout.am_abi_varies). */
static uint64_t am_field(struct walk *w, uint64_t meta, uint16_t off)
{
    bool new_abi_string = w->l->am_abi_varies && cl_read_ptr_or_0(w->t, meta + TORCH_AM_NAME) ==
                                                     meta + TORCH_AM_NAME_BUFFER;
    return meta + off + (new_abi_string ? TORCH_AM_NEW_ABI_SHIFT : 0);
}

/* Room for k more dims, whose place fits a tensor's 32 bits. */
static bool reserve_dims(struct torch_tensors *tt, size_t k)
{
    while (tt->ndims + k > tt->dims_cap)
        if (tt->ndims + k > UINT32_MAX ||
            !cl_vec_grow((void **)&tt->dims, &tt->dims_cap, sizeof *tt->dims))
            return false;
    return true;
}

static bool read_impl(struct walk *w, uint64_t impl, struct torch_tensor *x)
{
    const struct torch_layout *l = w->l;
    struct cl_target *t = w->t;
    uint8_t dev[3];
    uint16_t dtype;
    int64_t ndim;
    x->impl = impl;
    x->storage = cl_read_ptr_or_0(w->t, impl + l->ti_storage);
    uint64_t ss = impl + l->ti_sizes_strides;
    if (cl_read(t, impl + l->ti_dtype, &dtype, sizeof dtype) ||
        cl_read(t, impl + l->ti_device, dev, sizeof dev) ||
        cl_read(t, impl + l->ti_storage_offset, &x->storage_offset, sizeof x->storage_offset) ||
        cl_read(t, ss, &ndim, sizeof ndim) || ndim < 0 || ndim > 64 || dtype >= l->dtype_undefined)
        return false;
    x->dtype = (uint8_t)dtype;
    x->device_type = (int8_t)(l->device_engaged_last ? dev[0] : dev[1]);
    x->device_index = (int8_t)(l->device_engaged_last ? dev[1] : dev[2]);
    x->ndim = (uint8_t)ndim;
    size_t shown = (size_t)torch_shown_dims(x);
    bool inline_dims = ndim <= TORCH_SS_MAX_INLINE;
    uint64_t sizes =
        inline_dims ? ss + TORCH_SS_STORAGE : cl_read_ptr_or_0(w->t, ss + TORCH_SS_STORAGE);
    uint64_t strides = inline_dims ? ss + TORCH_SS_INLINE_STRIDES : sizes + 8 * (uint64_t)ndim;
    struct torch_tensors *tt = w->out;
    if (shown && !reserve_dims(tt, 2 * shown)) {
        w->oom = true;
        return false;
    }
    if (shown && (cl_read(t, sizes, tt->dims + x->dims, 8 * shown) ||
                  cl_read(t, strides, tt->dims + x->dims + shown, 8 * shown)))
        return false;
    if (x->storage) {
        uint64_t data = cl_read_ptr_or_0(w->t, x->storage + l->si_data);
        size_t item = x->dtype < sizeof dtype_sizes ? dtype_sizes[x->dtype] : 1;
        x->data_ptr = data + (uint64_t)x->storage_offset * item;
    }
    uint64_t meta = cl_read_ptr_or_0(w->t, impl + l->ti_autograd_meta);
    if (meta) {
        uint8_t rg = 0;
        (void)cl_read(t, am_field(w, meta, l->am_requires_grad), &rg, sizeof rg);   /* stays 0 */
        x->grad_fn = cl_read_ptr_or_0(w->t, am_field(w, meta, l->am_grad_fn));
        x->requires_grad = rg || x->grad_fn;
        if (x->grad_fn && cxx_classify(&w->cxx, x->grad_fn) == CXX_NODE)
            x->grad_fn_name = node_name(w, x->grad_fn);
    }
    tt->ndims += 2 * shown;
    return true;
}

static uint32_t add_impl(struct walk *w, struct torch_tensor *x)
{
    bool inserted;
    uint32_t i = cl_addrmap_put(&w->impl_index, x->impl, w->out->n, &inserted);
    if (i == UINT32_MAX)
        w->oom = true;
    else if (inserted)
        w->out->n++;
    else /* not kept: neither are its dims, the last read */
        w->out->ndims = x->dims;
    return i;
}

/* The StorageImpl a torch.UntypedStorage object owns, 0 when it does not read as one (the
 * object is being torn down). From 2.4 the StorageImpl points back to the object, tagged as the
 * TensorImpl's back pointer is. */
static uint64_t python_storage_impl(struct walk *w, uint64_t obj)
{
    const struct torch_layout *l = w->l;
    uint64_t impl = cl_read_ptr_or_0(w->t, obj + l->thp_storage);
    if (cxx_classify(&w->cxx, impl) != CXX_STORAGE ||
        (l->si_pyobj && (cl_read_ptr_or_0(w->t, impl + l->si_pyobj) & ~7ull) != obj))
        return 0;
    return impl;
}

static bool add_python_storage(struct walk *w, uint32_t i)
{
    uint64_t impl = python_storage_impl(w, w->h->nodes[i].addr);
    if (!impl)
        return true;
    if (!CL_VEC_RESERVE(w->py_storages, w->npy_storages, w->py_storages_cap))
        return false;
    w->py_storages[w->npy_storages++] = (struct py_storage){i, impl};
    return true;
}

/* Every Python tensor must point to a TensorImpl that points back to it: that both confirms the
 * layout table and drops objects being torn down (whose cdata is already undefined). The back
 * pointer's low bits may carry a tag (1.13 marks a PyObject the TensorImpl owns). Storage
 * objects are kept for group_storages. */
static int collect_python(struct walk *w, struct cl_error *err)
{
    struct py_heap *h = w->h;
    unsigned confirmed = 0, refuted = 0, skipped = 0;
    uint64_t first_bad = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        enum type_kind what = type_kind(w, i);
        if ((what == TYPE_STORAGE && !add_python_storage(w, i)) ||
            ((what == TYPE_GRAD_FN || what == TYPE_CONTEXT) &&
             !CL_VEC_RESERVE(w->node_objects, w->nnode_objects, w->node_objects_cap)))
            return cl_error_set(err, CL_E_INTERNAL, "out of memory");
        if (what == TYPE_GRAD_FN || what == TYPE_CONTEXT)
            w->node_objects[w->nnode_objects++] = (struct node_object){i, UINT32_MAX};
        if (what == TYPE_REDUCER) {
            if (!CL_VEC_RESERVE(w->reducers, w->nreducers, w->reducers_cap))
                return cl_error_set(err, CL_E_INTERNAL, "out of memory");
            w->reducers[w->nreducers++] = i;
        }
        if (what != TYPE_TENSOR)
            continue;
        struct torch_tensor *x = new_tensor(w);
        if (!x)
            return cl_error_set(err, CL_E_INTERNAL, "out of memory");
        x->pyobj = h->nodes[i].addr;
        x->node = i;
        uint64_t impl = cl_read_ptr_or_0(w->t, x->pyobj + w->l->thp_impl);
        enum cxx_kind kind = cxx_classify(&w->cxx, impl);
        bool ok = (kind == CXX_TENSOR || kind == CXX_UNDEFINED_TENSOR) &&
                  (cl_read_ptr_or_0(w->t, impl + w->l->ti_pyobj) & ~7ull) == x->pyobj &&
                  read_impl(w, impl, x);
        if (py_node_reachable(h, i) && confirmed + refuted < CHECKED_TENSORS) {
            ok ? confirmed++ : refuted++;
            if (!ok && !first_bad)
                first_bad = x->pyobj;
        }
        if (!ok)
            skipped++;
        else if (add_impl(w, x) == UINT32_MAX)
            return cl_error_set(err, CL_E_INTERNAL, "out of memory after %u tensors", w->out->n);
    }
    if (refuted > confirmed)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the torch %s layout does not fit this process "
                            "(%u of %u tensors checked fail the TensorImpl checks, e.g. 0x%llx); "
                            "tensors cannot be reported",
                            w->l->name, refuted, refuted + confirmed,
                            (unsigned long long)first_bad);
    if (skipped)
        cl_note_add(&w->out->warnings,
                    "%u tensor objects have no live TensorImpl (being torn "
                    "down) and are not listed",
                    skipped);
    return 0;
}

/* ---- the autograd graphs and the other C++ references ---- */

#define MAX_GRAPH_NODES 10000000u   /* over all graphs */
#define CHECKED_NODES 16            /* grad_fn nodes that vote on the autograd layout */

static void link(struct walk *w, enum torch_end src_end, uint32_t src, enum torch_end dst_end,
                 uint32_t dst, enum torch_link_kind kind)
{
    struct torch_tensors *tt = w->out;
    if (!CL_VEC_RESERVE(tt->links, tt->nlinks, tt->links_cap)) {
        w->oom = true;
        return;
    }
    tt->links[tt->nlinks++] =
        (struct torch_link){src, dst, (uint8_t)src_end, (uint8_t)dst_end, (uint8_t)kind};
}

/* The tensor of a TensorImpl, read and added if new (a C++ tensor of the given origin). */
static uint32_t tensor_at(struct walk *w, uint64_t impl, enum torch_origin origin)
{
    uint32_t k = cl_addrmap_get(&w->impl_index, impl);
    if (k != UINT32_MAX)
        return k;
    struct torch_tensor *x = new_tensor(w);
    if (!x || !read_impl(w, impl, x))
        return UINT32_MAX;
    x->origin = origin;
    return add_impl(w, x);
}

/* The graph node at addr, added if new (then it waits in nodes[] to be expanded). */
static uint32_t node_at(struct walk *w, uint64_t addr)
{
    struct torch_tensors *tt = w->out;
    uint32_t k = cl_addrmap_get(&w->node_index, addr);
    if (k != UINT32_MAX)
        return k;
    if (tt->nnodes >= MAX_GRAPH_NODES)
        return UINT32_MAX;
    if (!CL_VEC_RESERVE(tt->nodes, tt->nnodes, tt->nodes_cap)) {
        w->oom = true;
        return UINT32_MAX;
    }
    bool inserted;
    if (cl_addrmap_put(&w->node_index, addr, tt->nnodes, &inserted) == UINT32_MAX) {
        w->oom = true;
        return UINT32_MAX;
    }
    tt->nodes[tt->nnodes] = (struct torch_node){addr, node_name(w, addr)};
    return tt->nnodes++;
}

/* A tensor's own references: its grad_fn, its .grad, its Python object. */
static void tensor_links(struct walk *w, uint32_t k)
{
    const struct torch_tensor *x = &w->out->v[k];
    uint64_t meta = cl_read_ptr_or_0(w->t, x->impl + w->l->ti_autograd_meta);
    uint64_t grad = meta ? cl_read_ptr_or_0(w->t, am_field(w, meta, w->l->am_grad)) : 0;
    uint32_t pynode = x->pyobj ? x->node : PY_NO_NODE;
    uint32_t g;
    if (x->grad_fn && cxx_classify(&w->cxx, x->grad_fn) == CXX_NODE &&
        (g = node_at(w, x->grad_fn)) != UINT32_MAX)
        link(w, TORCH_END_TENSOR, k, TORCH_END_NODE, g, TORCH_LINK_GRAD_FN);
    if (grad && cxx_classify(&w->cxx, grad) == CXX_TENSOR &&
        (g = tensor_at(w, grad, TORCH_FROM_GRAD)) != UINT32_MAX)
        link(w, TORCH_END_TENSOR, k, TORCH_END_TENSOR, g, TORCH_LINK_GRAD);
    uint64_t base = meta && cxx_classify(&w->cxx, meta) == CXX_VIEW_META
                        ? cl_read_ptr_or_0(w->t, am_field(w, meta, w->l->am_view_base))
                        : 0;
    if (base && cxx_classify(&w->cxx, base) == CXX_TENSOR &&
        (g = tensor_at(w, base, TORCH_FROM_VIEW_BASE)) != UINT32_MAX)
        link(w, TORCH_END_TENSOR, k, TORCH_END_TENSOR, g, TORCH_LINK_VIEW_BASE);
    if (pynode != PY_NO_NODE)
        link(w, TORCH_END_TENSOR, k, TORCH_END_PYOBJ, pynode, TORCH_LINK_PYOBJ);
}

struct node_visit {
    struct walk *w;
    enum torch_end end;
    uint32_t from;
};

static void read_context(struct walk *w, uint32_t k);

static void node_ref(void *arg, enum torch_ref kind, uint64_t dst)
{
    struct node_visit *v = arg;
    struct walk *w = v->w;
    uint32_t k;
    switch (kind) {
    case TORCH_REF_NEXT:
    case TORCH_REF_SAVED_NODE:
        if ((k = node_at(w, dst)) != UINT32_MAX)
            link(w, v->end, v->from, TORCH_END_NODE, k,
                 kind == TORCH_REF_NEXT ? TORCH_LINK_NEXT : TORCH_LINK_SAVED_NODE);
        break;
    case TORCH_REF_SAVED:
    case TORCH_REF_VARIABLE:
        k = tensor_at(w, dst, kind == TORCH_REF_SAVED ? TORCH_FROM_SAVED : TORCH_FROM_VARIABLE);
        if (k != UINT32_MAX)
            link(w, v->end, v->from, TORCH_END_TENSOR, k,
                 kind == TORCH_REF_SAVED ? TORCH_LINK_SAVED : TORCH_LINK_VARIABLE);
        break;
    case TORCH_REF_CONTEXT:
        if ((k = py_heap_find(w->h, dst)) != PY_NO_NODE) {
            /* a custom Function's node is called after its ctx's class, as Python does */
            const struct py_type *ty = py_object_type(&w->h->objects, dst);
            if (ty && v->end == TORCH_END_NODE)
                w->out->nodes[v->from].name = context_name(w, ty);
            link(w, v->end, v->from, TORCH_END_PYOBJ, k, TORCH_LINK_CONTEXT);
            read_context(w, k);
        }
        break;
    case TORCH_REF_PACKED:
    case TORCH_REF_HOOK:
    case TORCH_REF_NODE_HOOKS:
        if ((k = py_heap_find(w->h, dst)) != PY_NO_NODE)
            link(w, v->end, v->from, TORCH_END_PYOBJ, k,
                 kind == TORCH_REF_PACKED ? TORCH_LINK_PACKED
                 : kind == TORCH_REF_HOOK ? TORCH_LINK_HOOK
                                          : TORCH_LINK_NODE_HOOKS);
        break;
    }
}

/* The tensors a custom Function's ctx (heap node k) saved, once a ctx, whether its PyNode or the
 * heap leads to it. */
static void read_context(struct walk *w, uint32_t k)
{
    bool inserted;
    if (cl_addrmap_put(&w->contexts_read, cl_addrmap_number_key(k), 1, &inserted) == UINT32_MAX)
        w->oom = true;
    else if (inserted) {
        struct node_visit ctx = {w, TORCH_END_PYOBJ, k};
        torch_context_saved(&w->cxx, w->ag, w->h->nodes[k].addr, node_ref, &ctx);
    }
}

static void ignore_ref(void *arg, enum torch_ref kind, uint64_t dst)
{
    (void)arg, (void)kind, (void)dst;
}

/* How the first CHECKED_NODES grad_fn nodes of the Python tensors read with table l: how many
 * read as graph nodes and how many do not (a node being freed may not); and, for a table read off
 * another release, how many of the tensors the members of the first CHECKED_SAVED_NODES nodes of
 * their graphs (breadth first) hold its SavedVariables explain. */
struct autograd_vote {
    unsigned fits, fails;
    struct torch_saved_fit saved;
};

#define CHECKED_SAVED_NODES 256

struct node_queue {
    uint64_t v[CHECKED_SAVED_NODES];
    unsigned n;
};

/* Queues a next node not queued yet (a linear search: the queue is short). */
static void queue_next(void *arg, enum torch_ref kind, uint64_t dst)
{
    struct node_queue *q = arg;
    if (kind != TORCH_REF_NEXT)
        return;
    for (unsigned i = 0; i < q->n; i++)
        if (q->v[i] == dst)
            return;
    if (q->n < CHECKED_SAVED_NODES)
        q->v[q->n++] = dst;
}

static struct autograd_vote autograd_vote(struct walk *w, const struct torch_autograd_layout *l,
                                          bool check_saved)
{
    struct autograd_vote v = {0, 0, {0, 0, 0, 0}};
    struct node_queue *q = check_saved ? calloc(1, sizeof *q) : NULL;
    for (uint32_t k = 0; k < w->out->n && v.fits + v.fails < CHECKED_NODES; k++) {
        uint64_t node = w->out->v[k].grad_fn;
        if (!node || cxx_classify(&w->cxx, node) != CXX_NODE)
            continue;
        torch_node_refs(&w->cxx, l, node, ignore_ref, NULL) ? v.fails++ : v.fits++;
        if (q)
            queue_next(q, TORCH_REF_NEXT, node);
    }
    for (unsigned i = 0; q && i < q->n; i++) /* q grows as it is read: breadth first */
        if (cxx_classify(&w->cxx, q->v[i]) == CXX_NODE &&
            torch_node_refs(&w->cxx, l, q->v[i], queue_next, q) == 0)
            torch_node_saved_fit(&w->cxx, l, q->v[i], &v.saved);
    if (check_saved && !q)
        w->oom = true;
    free(q);
    return v;
}

/* Most nodes read as nodes. */
static bool edges_fit(const struct autograd_vote *v)
{
    return v->fails <= v->fits;
}

/* Nearly every tensor the nodes' own members hold is a valid SavedVariable's data_ (a wrong
 * SavedVariable layout still validates some: 2.6's on 2.4.1's graphs 61 of 70; a right one all
 * but a stale word in a chunk's slack), and every custom Function's saved_variables reads (2.14's
 * place for it is not 2.13's). */
#define SAVED_FIT_PERCENT 95

static bool saved_fit(const struct autograd_vote *v)
{
    return 100u * v->saved.explained >= SAVED_FIT_PERCENT * v->saved.tensors &&
           v->saved.contexts_read == v->saved.contexts;
}

/* The version's own table when it fits, else the newest whose edges and SavedVariables fit (with
 * a warning); when one reads the edges but not the SavedVariables, the warning says so. */
static const struct torch_autograd_layout *choose_autograd(struct walk *w)
{
    const struct torch_autograd_layout *own = torch_autograd_layout_for(w->major, w->minor), *l;
    struct autograd_vote v;
    if (own && (v = autograd_vote(w, own, false), edges_fit(&v)))
        return own;
    const char *why = own ? "does not fit its own autograd layout" : "has no autograd layout";
    const struct torch_autograd_layout *edges_only = NULL;
    struct autograd_vote edges_only_vote = {0, 0, {0, 0, 0, 0}};
    size_t n;
    const struct torch_autograd_layout *const *all = torch_autograd_layouts(&n);
    while (n-- > 0) {
        if ((l = all[n]) == own || (v = autograd_vote(w, l, true), !edges_fit(&v)))
            continue;
        if (saved_fit(&v)) {
            cl_note_add(&w->out->warnings, "torch %u.%u %s: autograd layout %s was used %s",
                        w->major, w->minor, why, l->name,
                        v.fits ? "because its checks pass on "
                                 "this process's graphs"
                               : "unchecked (this process has no autograd graph "
                                 "to check it on)");
            return l;
        }
        if (!edges_only) {
            edges_only = l;
            edges_only_vote = v;
        }
    }
    const struct torch_saved_fit *f = &edges_only_vote.saved;
    if (edges_only)
        cl_note_add(&w->out->warnings,
                    "no autograd layout fits torch %u.%u's graphs: layout %s "
                    "reads their next edges, but its SavedVariables explain %u of the %u tensors "
                    "their nodes hold and %u of %u custom Functions' saved_variables; tensors held "
                    "only by autograd graphs are not attributed",
                    w->major, w->minor, edges_only->name, f->explained, f->tensors,
                    f->contexts_read, f->contexts);
    else
        cl_note_add(&w->out->warnings,
                    "no autograd layout fits torch %u.%u's graphs: tensors "
                    "held only by autograd graphs are not attributed",
                    w->major, w->minor);
    return NULL;
}

/* Groups the links by source, tensors' first, then nodes', then Python objects', each source's
 * in the order they were read (a node's next edges in next_edges_ order: the order is part of
 * the key), and notes every tensor's and node's first link: the holders' graph asks for a
 * vertex's links once per edge out of it. Sources are dense indices, so a counting sort. */
static void group_links(struct walk *w)
{
    struct torch_tensors *tt = w->out;
    const size_t base[] = {[TORCH_END_TENSOR] = 0,
                           [TORCH_END_NODE] = tt->n,
                           [TORCH_END_PYOBJ] = (size_t)tt->n + tt->nnodes};
    size_t nsources = base[TORCH_END_PYOBJ] + w->h->n;
    uint32_t *next = NULL; /* per source: where its next link goes */
    struct torch_link *v = NULL;
    if (tt->nlinks >= UINT32_MAX || !(next = calloc(nsources + 1, sizeof *next)) ||
        !(v = malloc((tt->nlinks + 1) * sizeof *v)) ||
        !(tt->link_first = malloc((base[TORCH_END_PYOBJ] + 1) * sizeof *tt->link_first))) {
        free(next);
        free(v);
        w->oom = true;
        return;
    }
    for (size_t k = 0; k < tt->nlinks; k++)
        next[base[tt->links[k].src_end] + tt->links[k].src + 1]++;
    for (size_t i = 0; i < nsources; i++)
        next[i + 1] += next[i];
    memcpy(tt->link_first, next, (base[TORCH_END_PYOBJ] + 1) * sizeof *next);
    for (size_t k = 0; k < tt->nlinks; k++)
        v[next[base[tt->links[k].src_end] + tt->links[k].src]++] = tt->links[k];
    free(tt->links);
    tt->links = v;
    tt->links_cap = tt->nlinks + 1;
    free(next);
}

struct link_at {
    const struct torch_tensors *tt;
    enum torch_end end;
    uint32_t src;
};

/* Whether link i's source comes before (end, src): links are sorted by source. */
static bool link_at_before(size_t i, const void *ctx)
{
    const struct link_at *q = ctx;
    const struct torch_link *l = &q->tt->links[i];
    return l->src_end < q->end || (l->src_end == q->end && l->src < q->src);
}

const struct torch_link *torch_links_from(const struct torch_tensors *tt, enum torch_end end,
                                          uint32_t src, size_t *n)
{
    uint32_t limit = end == TORCH_END_TENSOR ? tt->n : tt->nnodes;
    if (end != TORCH_END_PYOBJ && tt->link_first) {
        size_t i = (end == TORCH_END_TENSOR ? 0 : tt->n) + (size_t)src;
        *n = src < limit ? tt->link_first[i + 1] - tt->link_first[i] : 0;
        return tt->links + (src < limit ? tt->link_first[i] : 0);
    }
    /* the first link whose source is not before (end, src) */
    struct link_at q = {tt, end, src};
    size_t lo = cl_partition_point(tt->nlinks, link_at_before, &q), k = lo;
    while (k < tt->nlinks && tt->links[k].src_end == end && tt->links[k].src == src)
        k++;
    *n = k - lo;
    return tt->links + lo;
}

/* The node a grad_fn object (THPCppFunction::cdata, every release) or a custom Function's ctx
 * (THPFunction::cdata, from 2.13) owns, checked by the node's back pointer; UINT32_MAX for none. */
static uint32_t owned_node(struct walk *w, uint32_t i, uint16_t cdata)
{
    uint64_t obj = w->h->nodes[i].addr, node = cdata ? cl_read_ptr_or_0(w->t, obj + cdata) : 0;
    if (cxx_classify(&w->cxx, node) != CXX_NODE ||
        cl_read_ptr_or_0(w->t, node + w->ag->node_pyobj) != obj)
        return UINT32_MAX;
    return node_at(w, node);
}

/* The heap's Python objects of autograd nodes (collect_python found them). A grad_fn object or a
 * ctx (from 2.13) owns its node (a link in; !back), and from 2.13 the node owns a grad_fn object
 * while C++ holds the node (a link out; back, once the graphs are read, so that a node's next
 * edges stay its first links: a ctx's is its PyNode's CONTEXT link). A ctx holds the tensors it
 * saved whatever holds its node. */
static void link_python_nodes(struct walk *w, bool back)
{
    for (size_t k = 0; k < w->nnode_objects; k++) {
        struct node_object *o = &w->node_objects[k];
        bool grad_fn = type_kind(w, o->obj) == TYPE_GRAD_FN;
        if (back) {
            if (o->node != UINT32_MAX && grad_fn && w->ag->node_ptr_words == 1)
                link(w, TORCH_END_NODE, o->node, TORCH_END_PYOBJ, o->obj, TORCH_LINK_PYOBJ);
            continue;
        }
        if (!grad_fn)
            read_context(w, o->obj);
        o->node = owned_node(w, o->obj, grad_fn ? TORCH_THP_NODE : w->ag->thpfunction_cdata);
        if (o->node != UINT32_MAX)
            link(w, TORCH_END_PYOBJ, o->obj, TORCH_END_NODE, o->node, TORCH_LINK_CDATA);
    }
}

/* The gradient buckets of each DDP Reducer, tensors only C++ holds, each linked from the
 * Reducer's Python object in bucket order; a Reducer culeak cannot read is said. */
static void read_reducers(struct walk *w)
{
    const struct torch_reducer_layout *l = torch_reducer_layout_for(w->major, w->minor);
    if (w->nreducers && !l)
        cl_note_add(&w->out->warnings,
                    "DDP's gradient buckets are not read for torch %u.%u (culeak has no layout "
                    "of its c10d::Reducer): memory only they hold is not listed",
                    w->major, w->minor);
    uint64_t *impls = l && w->nreducers ? malloc(TORCH_MAX_BUCKETS * sizeof *impls) : NULL;
    for (size_t k = 0; impls && k < w->nreducers; k++) {
        uint64_t obj = w->h->nodes[w->reducers[k]].addr;
        int n = torch_reducer_buckets(w->t, &w->cxx, l, obj, impls, TORCH_MAX_BUCKETS);
        if (n < 0)
            cl_note_add(&w->out->warnings,
                        "the DDP Reducer at 0x%llx does not check out as torch %u.%u's: its "
                        "gradient buckets are not read",
                        (unsigned long long)obj, w->major, w->minor);
        for (int b = 0; b < n; b++) {
            uint32_t t = tensor_at(w, impls[b], TORCH_FROM_DDP_BUCKET);
            if (t != UINT32_MAX)
                link(w, TORCH_END_PYOBJ, w->reducers[k], TORCH_END_TENSOR, t, TORCH_LINK_BUCKET);
        }
    }
    if (l && w->nreducers && !impls)
        w->oom = true;
    free(impls);
}

/* Every tensor's references, then every node's, breadth first: new tensors and nodes found on
 * the way are expanded in turn. */
static void walk_graphs(struct walk *w)
{
    struct torch_tensors *tt = w->out;
    unsigned failed = 0;
    uint32_t ti = 0, ni = 0;
    tt->autograd = w->ag = choose_autograd(w);
    if (w->ag)
        link_python_nodes(w, false);
    while (ti < tt->n || ni < tt->nnodes) {
        for (; ti < tt->n; ti++)
            tensor_links(w, ti);
        for (; w->ag && ni < tt->nnodes && ti == tt->n; ni++) {
            struct node_visit v = {w, TORCH_END_NODE, ni};
            failed += torch_node_refs(&w->cxx, w->ag, tt->nodes[ni].addr, node_ref, &v) != 0;
        }
        if (!w->ag)
            break;
    }
    if (w->ag)
        link_python_nodes(w, true);
    for (uint32_t k = 0; k < tt->n; k++)
        if (tt->v[k].grad_fn)
            tt->v[k].grad_fn_node = cl_addrmap_get(&w->node_index, tt->v[k].grad_fn);
    if (failed)
        cl_note_add(&tt->warnings,
                    "%u autograd nodes could not be read (being freed?): their "
                    "references are missing",
                    failed);
    if (tt->nnodes >= MAX_GRAPH_NODES)
        cl_note_add(&tt->warnings, "autograd graphs cut at %u nodes", MAX_GRAPH_NODES);
}

/* ---- storages ---- */

/* Storages by index, biggest first (then by address: a total order). */
static int by_bytes(const void *a, const void *b, void *arg)
{
    const struct torch_storage *v = arg, *x = &v[*(const uint32_t *)a],
                               *y = &v[*(const uint32_t *)b];
    if (x->nbytes != y->nbytes)
        return x->nbytes < y->nbytes ? 1 : -1;
    return (x->impl > y->impl) - (x->impl < y->impl);
}

static void read_storage(struct walk *w, uint64_t impl, struct torch_storage *st)
{
    uint8_t dev[2] = {0, 0};
    memset(st, 0, sizeof *st);
    st->impl = impl;
    st->pynode = PY_NO_NODE;
    st->data = cl_read_ptr_or_0(w->t, impl + w->l->si_data);
    st->nbytes = cl_read_ptr_or_0(w->t, impl + w->l->si_size_bytes);
    if ((st->nbytes >> 61) == 5) /* a symbolic size (SymInt heap tag): unknown */
        st->nbytes = 0;
    (void)cl_read(w->t, impl + w->l->si_device, dev, sizeof dev); /* unreadable: cpu:0 */
    st->device_type = (int8_t)dev[0];
    st->device_index = (int8_t)dev[1];
}

/* The storage at impl's index, read and added if new; UINT32_MAX when out of memory. */
static uint32_t storage_at(struct walk *w, uint64_t impl, size_t *cap)
{
    struct torch_tensors *tt = w->out;
    bool inserted;
    uint32_t s = cl_addrmap_put(&w->storage_index, impl, tt->nstorages, &inserted);
    if (s == UINT32_MAX || (inserted && !CL_VEC_RESERVE(tt->storages, tt->nstorages, *cap)))
        return UINT32_MAX;
    if (inserted)
        read_storage(w, impl, &tt->storages[tt->nstorages++]);
    return s;
}

/* Storages biggest first, each with its tensors; every tensor learns its storage's index. The
 * storages of torch.UntypedStorage objects are among them (a link from each object; before 2.4
 * a StorageImpl may have several). */
static int group_storages(struct walk *w)
{
    struct torch_tensors *tt = w->out;
    size_t cap = 0;
    for (uint32_t i = 0; i < tt->n; i++) { /* the distinct storages in the order met */
        struct torch_tensor *x = &tt->v[i];
        if (!x->storage)
            continue;
        uint32_t s = storage_at(w, x->storage, &cap);
        if (s == UINT32_MAX)
            return CL_E_INTERNAL;
        tt->storages[s].ntensors++;
        x->storage_index = s;
    }
    for (size_t k = 0; k < w->npy_storages; k++)
        if (storage_at(w, w->py_storages[k].impl, &cap) == UINT32_MAX)
            return CL_E_INTERNAL;
    /* sorted through their indices, so that each tensor's is renumbered, not looked up again */
    size_t n = tt->nstorages;
    uint32_t *order = malloc((n + 1) * sizeof *order),
             *renumber = malloc((n + 1) * sizeof *renumber);
    struct torch_storage *sorted = malloc((n + 1) * sizeof *sorted);
    tt->storage_tensors = malloc(((size_t)tt->n + 1) * sizeof *tt->storage_tensors);
    if (!order || !renumber || !sorted || !tt->storage_tensors) {
        free(order);
        free(renumber);
        free(sorted);
        return CL_E_INTERNAL;
    }
    for (uint32_t s = 0; s < n; s++)
        order[s] = s;
    qsort_r(order, n, sizeof *order, by_bytes, tt->storages);
    for (uint32_t k = 0, first = 0; k < n; k++) {
        sorted[k] = tt->storages[order[k]];
        renumber[order[k]] = k;
        sorted[k].tensors = tt->storage_tensors + first;
        first += sorted[k].ntensors;
        sorted[k].ntensors = 0;
    }
    free(tt->storages);
    tt->storages = sorted;
    for (uint32_t i = 0; i < tt->n; i++) {
        struct torch_tensor *x = &tt->v[i];
        if (!x->storage)
            continue;
        x->storage_index = renumber[x->storage_index];
        struct torch_storage *st = &tt->storages[x->storage_index];
        st->tensors[st->ntensors++] = i;
    }
    for (size_t k = 0; k < w->npy_storages; k++) {
        const struct py_storage *p = &w->py_storages[k];
        uint32_t s = renumber[cl_addrmap_get(&w->storage_index, p->impl)];
        if (tt->storages[s].pynode == PY_NO_NODE)
            tt->storages[s].pynode = p->node;
        link(w, TORCH_END_PYOBJ, p->node, TORCH_END_STORAGE, s, TORCH_LINK_CDATA);
    }
    free(order);
    free(renumber);
    return 0;
}

/* Every tensor of the heap with layout out->l; fails when the layout's live checks do. */
static int collect_with(struct py_heap *h, unsigned major, unsigned minor,
                        struct torch_tensors *out, struct cl_error *err)
{
    struct walk w = {
        .h = h, .t = h->objects.rt->t, .l = out->l, .major = major, .minor = minor, .out = out};
    w.cxx.t = w.t;
    w.type_kinds = calloc(h->objects.ntypes + 1, 1);
    int rc = w.type_kinds && add_name(&w, 0, "?") == TORCH_NAME_UNKNOWN
                 ? collect_python(&w, err)
                 : cl_error_set(err, CL_E_INTERNAL, "out of memory");
    if (!rc) {
        read_reducers(&w);
        walk_graphs(&w);
        if (!w.oom && group_storages(&w) == 0)
            group_links(&w);
        else
            w.oom = true;
        if (w.oom)
            rc = cl_error_set(err, CL_E_INTERNAL, "out of memory reading tensors");
    }
    cxx_classifier_free(&w.cxx);
    free(w.type_kinds);
    free(w.py_storages);
    free(w.node_objects);
    free(w.reducers);
    cl_addrmap_free(&w.impl_index);
    cl_addrmap_free(&w.storage_index);
    cl_addrmap_free(&w.name_of);
    cl_addrmap_free(&w.node_index);
    cl_addrmap_free(&w.contexts_read);
    if (rc)
        torch_tensors_free(out);
    return rc;
}

/* No table for this version (a newer release, a custom build): the newest checked table whose
 * live checks pass. */
static int collect_by_structure(struct py_heap *h, const char *version, unsigned major,
                                unsigned minor, struct torch_tensors *out, struct cl_error *err)
{
    size_t n;
    const struct torch_layout *const *all = torch_layouts(&n);
    for (size_t i = n; i-- > 0;) {
        struct cl_error mismatch;
        out->l = all[i];
        int rc =
            out->l->verified ? collect_with(h, major, minor, out, &mismatch) : CL_E_UNSUPPORTED;
        if (rc == CL_E_INTERNAL) { /* out of memory: no other table would do better */
            *err = mismatch;
            return rc;
        }
        if (rc == 0) {
            cl_note_add(&out->warnings,
                        "torch %s has no tensor layout of its own: layout %s was "
                        "used because its checks pass on this process's tensors",
                        version, out->l->name);
            return 0;
        }
    }
    char names[256];
    return cl_error_set(err, CL_E_UNSUPPORTED,
                        "culeak has no tensor layout for torch %s, and "
                        "none of its layouts (%s) fits this process's tensors",
                        version, torch_layout_names(names, sizeof names));
}

static int collect(struct py_heap *h, const struct cl_torch_info *torch, struct torch_tensors *out,
                   struct cl_error *err)
{
    memset(out, 0, sizeof *out);
    if (!torch->loaded)
        return 0;
    unsigned major = 0, minor = 0;
    if (sscanf(torch->version, "%u.%u", &major, &minor) != 2)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the torch version is unknown (no readable "
                            "torch/version.py); tensors cannot be reported");
    if (!(out->l = torch_layout_for(major, minor)))
        return collect_by_structure(h, torch->version, major, minor, out, err);
    if (!out->l->verified)
        cl_note_add(&out->warnings,
                    "the torch %s layout was read from headers, not checked on a "
                    "real %s wheel; the live checks passed",
                    out->l->name, out->l->name);
    return collect_with(h, major, minor, out, err);
}

/* Whether the C++ object at obj holds a reference to its Python object, whose pointer is at
 * obj + slot (enum torch_pyobj_owner). */
static bool cxx_holds_pyobj(struct cl_target *t, enum torch_pyobj_owner owner, uint64_t obj,
                            uint16_t slot)
{
    if (owner == TORCH_PYOBJ_REFCOUNT) {
        uint64_t combined = cl_read_ptr_or_0(t, obj + TORCH_COMBINED_REFCOUNT);
        return (combined & TORCH_HAS_PYOBJECT) && (uint32_t)combined > 1;
    }
    return cl_read_ptr_or_0(t, obj + slot) & 1;
}

/* Whether a node holds the Python object its link leads to: what its SavedVariables' hooks and
 * its own hooks own (each Py*Hook increfs its dict: torch/csrc/autograd/python_hook.cpp) always;
 * its ctx, for a PyNode, until 2.12; from 2.13 its Python object (a ctx or a grad_fn object) by
 * the refcount rule. */
static bool node_holds_pyobj(struct cl_target *t, const struct torch_tensors *tt,
                             const struct torch_link *l)
{
    if (l->kind == TORCH_LINK_PACKED || l->kind == TORCH_LINK_HOOK ||
        l->kind == TORCH_LINK_NODE_HOOKS)
        return true;
    return tt->autograd->node_ptr_words == 2
               ? l->kind == TORCH_LINK_CONTEXT
               : cxx_holds_pyobj(t, TORCH_PYOBJ_REFCOUNT, tt->nodes[l->src].addr, 0);
}

/* The books (cpython/balance.h) learn the references C++ holds to Python objects, which the walk
 * of Python objects cannot see: a TensorImpl's to its tensor's, a StorageImpl's to its
 * torch.UntypedStorage's, a node's to its grad_fn object or custom Function's ctx. Each is named
 * after what holds it. True when it added any. */
static bool explain_pyobjs(struct py_heap *h, struct torch_tensors *tt)
{
    struct cl_target *t = h->objects.rt->t;
    const struct torch_layout *tl = tt->l;
    char name[64];
    bool added = false;
    for (uint32_t k = 0; k < tt->n; k++) {
        const struct torch_tensor *x = &tt->v[k];
        if (!x->pyobj || x->node == PY_NO_NODE ||
            !cxx_holds_pyobj(t, tl->pyobj_owner, x->impl, tl->ti_pyobj))
            continue;
        snprintf(name, sizeof name, "<TensorImpl 0x%llx>", (unsigned long long)x->impl);
        added |= py_books_add_c_ref(h, x->node, name);
    }
    for (size_t k = 0; k < tt->nlinks; k++) {
        const struct torch_link *l = &tt->links[k];
        if (l->src_end == TORCH_END_NODE && l->dst_end == TORCH_END_PYOBJ &&
            node_holds_pyobj(t, tt, l)) {
            const struct torch_node *n = &tt->nodes[l->src];
            snprintf(name, sizeof name, "<%s 0x%llx%s>",
                     l->kind == TORCH_LINK_CONTEXT ? "PyNode" : tt->names[n->name],
                     (unsigned long long)n->addr,
                     l->kind == TORCH_LINK_PACKED       ? ": saved, packed by a hook"
                     : l->kind == TORCH_LINK_HOOK       ? ": a saved_tensors_hooks function"
                     : l->kind == TORCH_LINK_NODE_HOOKS ? ": its hooks"
                                                        : "");
            added |= py_books_add_c_ref(h, l->dst, name);
        } else if (l->dst_end == TORCH_END_STORAGE && tl->si_pyobj) {
            uint64_t impl = tt->storages[l->dst].impl;
            if (!cxx_holds_pyobj(t, tl->pyobj_owner, impl, tl->si_pyobj))
                continue;
            snprintf(name, sizeof name, "<StorageImpl 0x%llx>", (unsigned long long)impl);
            added |= py_books_add_c_ref(h, l->src, name);
        }
    }
    return added;
}

int torch_tensors_collect(struct py_heap *h, const struct cl_torch_info *torch,
                          struct torch_tensors *out, struct cl_error *err)
{
    int rc = collect(h, torch, out, err);
    if (rc || !out->l)
        return rc;
    bool added = explain_pyobjs(h, out);
    added |= torch_safepyobjs_explain(h, out);
    added |= torch_data_owners_explain(h, out);
    added |= torch_argparsers_explain(h);
    added |= torch_tensortypes_explain(h);
    if (added && !py_books_resplit(h))
        cl_note_add(&out->warnings, "out of memory balancing the references C++ holds to Python "
                                    "objects: nothing no root reaches is called garbage");
    return rc;
}

void torch_tensors_free(struct torch_tensors *tt)
{
    free(tt->v);
    free(tt->dims);
    free(tt->storages);
    free(tt->storage_tensors);
    free(tt->nodes);
    free(tt->names);
    free(tt->links);
    free(tt->link_first);
    free(tt->warnings);
    memset(tt, 0, sizeof *tt);
}
