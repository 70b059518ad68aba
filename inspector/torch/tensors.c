#include "torch/tensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torch/cxx.h"
#include "util/notes.h"

#define MAX_GRAPH_NODES 1000000u     /* over all graphs */
#define MAX_NODE_BYTES (64u << 10)   /* a Node's allocation, and a buffer it points to */
#define MAX_INDIRECT 64              /* buffers followed per node (vectors of edges, saved lists) */
#define CHECKED_TENSORS 64           /* reachable tensors that vote on the layout */

static const char *const dtype_names[] = {
    "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex32",
    "complex64", "complex128", "bool", "qint8", "quint8", "qint32", "bfloat16", "quint4x2",
    "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16", "float8_e5m2",
    "float8_e4m3fn", "float8_e5m2fnuz", "float8_e4m3fnuz", "uint16", "uint32", "uint64", "uint1",
    "uint2", "uint3", "uint4", "uint5", "uint6", "uint7", "int1", "int2", "int3", "int4", "int5",
    "int6", "int7", "float8_e8m0fnu", "float4_e2m1fn_x2"};
static const uint8_t dtype_sizes[] = {1, 1, 2, 4, 8, 2, 4, 8, 4, 8, 16, 1, 1, 1, 4, 2, 1, 1, 1, 1,
                                      1, 1, 2, 1, 1, 1, 1, 2, 4, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                      1, 1, 1, 1, 1, 1, 1};
static const char *const device_names[] = {
    "cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip", "fpga", "maia", "xla", "vulkan",
    "metal", "xpu", "mps", "meta", "hpu", "ve", "lazy", "ipu", "mtia", "privateuseone"};

const char *torch_dtype_name(uint8_t d)
{
    return d < sizeof dtype_names / sizeof *dtype_names ? dtype_names[d] : "unknown";
}

const char *torch_device_name(int8_t type)
{
    return type >= 0 && (size_t)type < sizeof device_names / sizeof *device_names ? device_names[type]
                                                                                : "unknown";
}

bool torch_tensor_path(struct py_heap *h, const struct torch_tensor *x, char *out, size_t cap)
{
    if (x->pyobj && py_heap_path(h, x->node, out, cap))
        return true;
    if (!x->autograd_path)
        return false;
    snprintf(out, cap, "%s", x->autograd_path);
    return true;
}

bool torch_storage_path(struct py_heap *h, const struct torch_tensors *tt,
                        const struct torch_storage *st, char *out, size_t cap)
{
    for (uint32_t i = 0; i < st->ntensors; i++)
        if (torch_tensor_path(h, &tt->v[st->tensors[i]], out, cap))
            return true;
    return false;
}

const char *torch_holder_name(enum torch_holder h)
{
    static const char *const names[] = {"python", "autograd", "unreachable", "unknown"};
    return names[h];
}

/* ---- the walk's state ---- */

enum cls { CLS_OTHER = 1, CLS_TENSOR, CLS_NODE };

struct graph_node {
    uint64_t addr;
    uint32_t parent;          /* graph node, or UINT32_MAX for a grad_fn */
    uint32_t owner;           /* the Python tensor whose grad_fn starts the chain */
    char name[48];
};

struct walk {
    struct py_heap *h;
    struct cl_target *t;
    const struct torch_layout *l;
    struct torch_tensors *out;
    struct cl_addrmap tensor_types;   /* type -> 1 tensor, 2 not */
    struct cl_addrmap vptr_class;     /* vtable -> enum cls */
    struct cl_addrmap impl_index;     /* TensorImpl -> tensor */
    struct cl_addrmap storage_index;  /* StorageImpl -> storage */
    struct cl_addrmap seen_nodes;     /* Node -> graph node */
    struct graph_node *nodes;
    uint32_t nnodes, nodes_cap;
};

static uint64_t word(struct walk *w, uint64_t addr)
{
    uint64_t v = 0;
    return cl_read_u64(w->t, addr, &v) == 0 ? v : 0;
}

/* Whether a Python type is torch.Tensor or derives from it: its base chain reaches the C type
 * torch._C.TensorBase (torch._C._TensorBase before 2.2). */
static bool is_tensor_type(struct walk *w, uint64_t type)
{
    uint32_t known = cl_addrmap_get(&w->tensor_types, type);
    if (known != UINT32_MAX)
        return known == 1;
    bool yes = false;
    const struct py_layout *pl = w->h->objects.rt->l;
    uint64_t base = type;
    for (int i = 0; i < 64 && base && !yes; i++) {
        char name[32] = "";
        cl_read_cstr(w->t, word(w, base + pl->tp_name), name, sizeof name);
        yes = strcmp(name, "torch._C.TensorBase") == 0 || strcmp(name, "torch._C._TensorBase") == 0;
        base = word(w, base + pl->tp_base);
    }
    bool inserted;
    cl_addrmap_put(&w->tensor_types, type, yes ? 1 : 2, &inserted);
    return yes;
}

static enum cls classify(struct walk *w, uint64_t p, char *name, size_t cap)
{
    uint64_t vptr = word(w, p);
    uint32_t known = vptr ? cl_addrmap_get(&w->vptr_class, vptr) : CLS_OTHER;
    if (known != UINT32_MAX && !(known == CLS_NODE && name))
        return (enum cls)known;
    char mangled[160];
    enum cls c = CLS_OTHER;
    if (cxx_class_name(w->t, p, mangled, sizeof mangled)) {
        if (strstr(mangled, "TensorImpl") && !strstr(mangled, "Undefined"))
            c = CLS_TENSOR;
        else if (strncmp(mangled, "N5torch8autograd", 16) == 0 && !strstr(mangled, "Meta") &&
                 !strstr(mangled, "SavedVariable") && !strstr(mangled, "ViewInfo") &&
                 !strstr(mangled, "ForwardGrad") && !strstr(mangled, "Hooks"))
            c = CLS_NODE;
        if (c == CLS_NODE && name)
            cxx_short_name(mangled, name, cap);
    }
    bool inserted;
    cl_addrmap_put(&w->vptr_class, vptr, c, &inserted);
    return c;
}

/* ---- tensors ---- */

static struct torch_tensor *new_tensor(struct walk *w)
{
    struct torch_tensors *tt = w->out;
    if (tt->n == tt->cap) {
        uint32_t cap = tt->cap ? tt->cap * 2 : 1024;
        struct torch_tensor *v = realloc(tt->v, cap * sizeof *v);
        if (!v)
            return NULL;
        tt->v = v;
        tt->cap = cap;
    }
    struct torch_tensor *x = &tt->v[tt->n];
    memset(x, 0, sizeof *x);
    x->node = PY_NO_NODE;
    return x;
}

/* Reads a TensorImpl's facts into x; false when it does not look like one. */
/* The address of an AutogradMeta field (see torch_layout.am_abi_varies). */
static uint64_t am_field(struct walk *w, uint64_t meta, uint16_t off)
{
    bool new_abi_string = w->l->am_abi_varies && word(w, meta + 8) == meta + 24;
    return meta + off + (new_abi_string ? 24 : 0);
}

static bool read_impl(struct walk *w, uint64_t impl, struct torch_tensor *x)
{
    const struct torch_layout *l = w->l;
    struct cl_target *t = w->t;
    uint8_t dev[3];
    uint16_t dtype;
    int64_t ndim;
    x->impl = impl;
    x->storage = word(w, impl + l->ti_storage);
    uint64_t ss = impl + l->ti_sizes_strides;
    if (cl_read(t, impl + l->ti_dtype, &dtype, 2) || cl_read(t, impl + l->ti_device, dev, 3) ||
        cl_read(t, impl + l->ti_storage_offset, &x->storage_offset, 8) ||
        cl_read(t, ss, &ndim, 8) || ndim < 0 || ndim > 64 || dtype >= l->dtype_undefined)
        return false;
    x->dtype = (uint8_t)dtype;
    x->device_type = (int8_t)(l->device_engaged_last ? dev[0] : dev[1]);
    x->device_index = (int8_t)(l->device_engaged_last ? dev[1] : dev[2]);
    x->ndim = (int)ndim;
    int shown = ndim < TORCH_MAX_DIMS ? (int)ndim : TORCH_MAX_DIMS;
    /* SizesAndStrides: up to 5 dims inline (sizes at +8, strides at +48), else out of line */
    uint64_t sizes = ndim <= 5 ? ss + 8 : word(w, ss + 8);
    uint64_t strides = ndim <= 5 ? ss + 48 : sizes + 8 * (uint64_t)ndim;
    if (shown && (cl_read(t, sizes, x->sizes, 8 * (size_t)shown) ||
                  cl_read(t, strides, x->strides, 8 * (size_t)shown)))
        return false;
    if (x->storage) {
        uint64_t data = word(w, x->storage + l->si_data);
        size_t item = x->dtype < sizeof dtype_sizes ? dtype_sizes[x->dtype] : 1;
        x->data_ptr = data + (uint64_t)x->storage_offset * item;
    }
    uint64_t meta = word(w, impl + l->ti_autograd_meta);
    if (meta) {
        uint8_t rg = 0;
        cl_read(t, am_field(w, meta, l->am_requires_grad), &rg, 1);
        x->grad_fn = word(w, am_field(w, meta, l->am_grad_fn));
        x->requires_grad = rg || x->grad_fn;
        if (x->grad_fn && classify(w, x->grad_fn, x->grad_fn_name, sizeof x->grad_fn_name) != CLS_NODE)
            snprintf(x->grad_fn_name, sizeof x->grad_fn_name, "?");
    }
    return true;
}

static uint32_t add_impl(struct walk *w, struct torch_tensor *x)
{
    bool inserted;
    uint32_t i = cl_addrmap_put(&w->impl_index, x->impl, w->out->n, &inserted);
    if (inserted)
        w->out->n++;
    return i;
}

/* Every Python tensor must point to a TensorImpl that points back to it: that both confirms the
 * layout table and drops objects being torn down (whose cdata is already undefined). The back
 * pointer's low bits may carry a tag (1.13 marks a PyObject the TensorImpl owns). */
static int collect_python(struct walk *w, struct cl_error *err)
{
    struct py_heap *h = w->h;
    unsigned confirmed = 0, refuted = 0, skipped = 0;
    uint64_t first_bad = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        if (!is_tensor_type(w, h->nodes[i].type))
            continue;
        struct torch_tensor *x = new_tensor(w);
        if (!x)
            return cl_error_set(err, CL_E_INTERNAL, "out of memory");
        x->pyobj = h->nodes[i].addr;
        x->pytype = h->nodes[i].type;
        x->node = i;
        uint64_t impl = word(w, x->pyobj + w->l->thp_impl);
        char cls[96];
        bool ok = impl && (word(w, impl + w->l->ti_pyobj) & ~7ull) == x->pyobj &&
                  cxx_class_name(w->t, impl, cls, sizeof cls) && strstr(cls, "TensorImpl") &&
                  read_impl(w, impl, x);
        if (i < h->nreachable && confirmed + refuted < CHECKED_TENSORS) {
            ok ? confirmed++ : refuted++;
            if (!ok && !first_bad)
                first_bad = x->pyobj;
        }
        if (ok)
            add_impl(w, x);
        else
            skipped++;
    }
    if (refuted > confirmed)
        return cl_error_set(err, CL_E_UNSUPPORTED, "the torch %s layout does not fit this process "
                            "(%u of %u tensors checked fail the TensorImpl checks, e.g. 0x%llx); "
                            "tensors cannot be reported", w->l->name, refuted, refuted + confirmed,
                            (unsigned long long)first_bad);
    if (skipped)
        cl_note_add(&w->out->warnings, "%u tensor objects have no live TensorImpl (being torn down) and are not "
             "listed", skipped);
    return 0;
}

/* ---- the autograd graph ---- */

static uint32_t add_graph_node(struct walk *w, uint64_t addr, uint32_t parent, uint32_t owner)
{
    if (w->nnodes >= MAX_GRAPH_NODES)
        return UINT32_MAX;
    bool inserted;
    uint32_t i = cl_addrmap_put(&w->seen_nodes, addr, w->nnodes, &inserted);
    if (!inserted || i == UINT32_MAX)
        return UINT32_MAX;
    if (w->nnodes == w->nodes_cap) {
        uint32_t cap = w->nodes_cap ? w->nodes_cap * 2 : 1024;
        struct graph_node *v = realloc(w->nodes, cap * sizeof *v);
        if (!v)
            return UINT32_MAX;
        w->nodes = v;
        w->nodes_cap = cap;
    }
    struct graph_node *n = &w->nodes[w->nnodes];
    *n = (struct graph_node){.addr = addr, .parent = parent, .owner = owner};
    classify(w, addr, n->name, sizeof n->name);
    return w->nnodes++;
}

/* The chain from the owner's Python path through the graph to node g. */
static char *graph_path(struct walk *w, uint32_t g, const char *suffix)
{
    uint32_t chain[256], n = 0;
    for (uint32_t c = g; c != UINT32_MAX && n < 256; c = w->nodes[c].parent)
        chain[n++] = c;
    char base[4096];
    const struct torch_tensor *owner = &w->out->v[w->nodes[g].owner];
    if (!py_heap_path(w->h, owner->node, base, sizeof base))
        return NULL;
    size_t cap = strlen(base) + 64 * (n + 2), len;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    len = (size_t)snprintf(s, cap, "%s.grad_fn", base);
    while (n-- > 0)
        len += (size_t)snprintf(s + len, cap - len, " → %s", w->nodes[chain[n]].name);
    snprintf(s + len, cap - len, "%s", suffix);
    return s;
}

/* A Python tensor that no root reaches is held from C++ (its object is kept alive for it): name
 * that holder. */
static bool adopt(struct walk *w, uint64_t impl, const char *base, const char *suffix, uint32_t g,
                  bool via_grad)
{
    uint32_t k = cl_addrmap_get(&w->impl_index, impl);
    if (k == UINT32_MAX)
        return false;
    struct torch_tensor *x = &w->out->v[k];
    if (x->pyobj && x->node >= w->h->nreachable && !x->autograd_path) {
        if (base) {
            size_t n = strlen(base) + strlen(suffix) + 1;
            if ((x->autograd_path = malloc(n)))
                snprintf(x->autograd_path, n, "%s%s", base, suffix);
        } else {
            x->autograd_path = graph_path(w, g, suffix);
        }
        x->via_grad = via_grad;
    }
    return true;
}

static void saved_tensor(struct walk *w, uint32_t g, uint64_t impl)
{
    if (adopt(w, impl, NULL, " (saved)", g, false))
        return;   /* already known: a Python tensor, or saved by a node found earlier */
    struct torch_tensor *x = new_tensor(w);
    if (!x || !read_impl(w, impl, x) || word(w, impl + w->l->ti_pyobj))
        return;   /* not readable, or it has a Python object after all (an unreachable one) */
    x->autograd_path = graph_path(w, g, " (saved)");
    add_impl(w, x);
}

/* Node pointers and TensorImpl pointers in [p, p+len), recorded against graph node g. */
static void scan_words(struct walk *w, uint32_t g, uint64_t p, uint64_t len, int depth,
                       uint32_t *queue_end)
{
    static uint64_t buf[MAX_NODE_BYTES / 8];
    uint64_t n = len / 8;
    if (n > MAX_NODE_BYTES / 8 || cl_read(w->t, p, buf, n * 8) != 0)
        return;
    uint64_t local[MAX_NODE_BYTES / 8 < 8192 ? MAX_NODE_BYTES / 8 : 8192];
    memcpy(local, buf, n * 8);   /* the static buffer is reused by the nested scan */
    int followed = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = local[i];
        if (!v || (v & 7) || v == w->nodes[g].addr)
            continue;
        switch (classify(w, v, NULL, 0)) {
        case CLS_TENSOR:
            saved_tensor(w, g, v);
            break;
        case CLS_NODE:
            if (add_graph_node(w, v, g, w->nodes[g].owner) != UINT32_MAX)
                (*queue_end)++;
            break;
        default:
            if (depth == 0 && followed < MAX_INDIRECT) {   /* a vector's buffer, one level down */
                uint64_t size = cxx_malloc_size(w->t, v, MAX_NODE_BYTES);
                if (size) {
                    followed++;
                    scan_words(w, g, v, size, 1, queue_end);
                }
            }
        }
    }
}

/* A .grad that was never read from Python has no Python object: hold it by its owner's path. */
static void grad_tensor(struct walk *w, uint32_t owner)
{
    uint64_t meta = word(w, w->out->v[owner].impl + w->l->ti_autograd_meta);
    uint64_t grad = meta ? word(w, am_field(w, meta, w->l->am_grad)) : 0;
    char cls[96], base[4096];
    if (!grad || !cxx_class_name(w->t, grad, cls, sizeof cls) || strstr(cls, "Undefined") ||
        !py_heap_path(w->h, w->out->v[owner].node, base, sizeof base) ||
        adopt(w, grad, base, ".grad", 0, true))
        return;
    struct torch_tensor *x = new_tensor(w);
    if (!x || !read_impl(w, grad, x) || word(w, grad + w->l->ti_pyobj))
        return;
    size_t n = strlen(base) + 8;
    if ((x->autograd_path = malloc(n)))
        snprintf(x->autograd_path, n, "%s.grad", base);
    x->via_grad = true;
    add_impl(w, x);
}

static void walk_graphs(struct walk *w)
{
    uint32_t python_tensors = w->out->n;
    for (uint32_t ti = 0; ti < python_tensors; ti++) {
        const struct torch_tensor *x = &w->out->v[ti];
        if (x->node >= w->h->nreachable)
            continue;
        grad_tensor(w, ti);
        x = &w->out->v[ti];   /* grad_tensor may have grown the array */
        if (!x->grad_fn)
            continue;
        uint32_t start = add_graph_node(w, x->grad_fn, UINT32_MAX, ti);
        if (start == UINT32_MAX)
            continue;
        uint32_t end = start + 1;
        for (uint32_t g = start; g < end && g < w->nnodes; g++) {
            uint64_t size = cxx_malloc_size(w->t, w->nodes[g].addr, MAX_NODE_BYTES);
            if (!size)   /* make_shared: the node follows a 16-byte control block */
                size = cxx_malloc_size(w->t, w->nodes[g].addr - 16, MAX_NODE_BYTES + 16);
            scan_words(w, g, w->nodes[g].addr, size >= 16 ? size : 512, 0, &end);
        }
    }
    if (w->nnodes >= MAX_GRAPH_NODES)
        cl_note_add(&w->out->warnings, "autograd graphs cut at %u nodes", MAX_GRAPH_NODES);
}

/* ---- storages ---- */

static int by_bytes(const void *a, const void *b)
{
    const struct torch_storage *x = a, *y = b;
    return x->nbytes < y->nbytes ? 1 : x->nbytes > y->nbytes ? -1 : (x->impl > y->impl) - (x->impl < y->impl);
}

static int group_storages(struct walk *w)
{
    struct torch_tensors *tt = w->out;
    for (uint32_t i = 0; i < tt->n; i++) {
        struct torch_tensor *x = &tt->v[i];
        if (!x->storage)
            continue;
        bool inserted;
        uint32_t s = cl_addrmap_put(&w->storage_index, x->storage, tt->nstorages, &inserted);
        if (s == UINT32_MAX)
            return CL_E_INTERNAL;
        if (inserted) {
            struct torch_storage *v = realloc(tt->storages, (tt->nstorages + 1) * sizeof *v);
            if (!v)
                return CL_E_INTERNAL;
            tt->storages = v;
            struct torch_storage *st = &tt->storages[tt->nstorages++];
            memset(st, 0, sizeof *st);
            uint8_t dev[2] = {0, 0};
            st->impl = x->storage;
            st->data = word(w, x->storage + w->l->si_data);
            st->nbytes = word(w, x->storage + w->l->si_size_bytes);
            if ((st->nbytes >> 61) == 5)   /* a symbolic size (SymInt heap tag): unknown */
                st->nbytes = 0;
            cl_read(w->t, x->storage + w->l->si_device, dev, 2);
            st->device_type = (int8_t)dev[0];
            st->device_index = (int8_t)dev[1];
            st->held_by = TORCH_HELD_UNKNOWN;
        }
        struct torch_storage *st = &tt->storages[s];
        uint32_t *v = realloc(st->tensors, (st->ntensors + 1) * sizeof *v);
        if (!v)
            return CL_E_INTERNAL;
        st->tensors = v;
        st->tensors[st->ntensors++] = i;
        /* python beats autograd beats unreachable: the most direct holder names the storage */
        enum torch_holder h = x->pyobj && x->node < w->h->nreachable ? TORCH_HELD_PYTHON
                            : x->via_grad                               ? TORCH_HELD_PYTHON
                            : x->autograd_path                          ? TORCH_HELD_AUTOGRAD
                            : x->pyobj                                  ? TORCH_HELD_UNREACHABLE
                                                                        : TORCH_HELD_UNKNOWN;
        if (h < st->held_by)
            st->held_by = h;
    }
    /* Sorting moves storages, so the index is rebuilt by whoever needs it; none does after this. */
    qsort(tt->storages, tt->nstorages, sizeof *tt->storages, by_bytes);
    return 0;
}

/* Every tensor of the heap with layout out->l; fails when the layout's live checks do. */
static int collect_with(struct py_heap *h, struct torch_tensors *out, struct cl_error *err)
{
    struct walk w = {.h = h, .t = h->objects.rt->t, .l = out->l, .out = out};
    int rc = collect_python(&w, err);
    if (!rc) {
        walk_graphs(&w);
        if (group_storages(&w))
            rc = cl_error_set(err, CL_E_INTERNAL, "out of memory");
    }
    cl_addrmap_free(&w.tensor_types);
    cl_addrmap_free(&w.vptr_class);
    cl_addrmap_free(&w.impl_index);
    cl_addrmap_free(&w.storage_index);
    cl_addrmap_free(&w.seen_nodes);
    free(w.nodes);
    if (rc)
        torch_tensors_free(out);
    return rc;
}

/* No table for this version (a newer release, a custom build): the newest checked table whose
 * live checks pass. */
static int collect_by_structure(struct py_heap *h, const char *version, struct torch_tensors *out,
                                struct cl_error *err)
{
    size_t n = 0;
    while (torch_layout_at(n))
        n++;
    for (size_t i = n; i-- > 0;) {
        struct cl_error ignored;
        out->l = torch_layout_at(i);
        if (out->l->verified && collect_with(h, out, &ignored) == 0) {
            cl_note_add(&out->warnings, "torch %s has no tensor layout of its own: layout %s was "
                        "used because its checks pass on this process's tensors", version,
                        out->l->name);
            return 0;
        }
    }
    return cl_error_set(err, CL_E_UNSUPPORTED, "culeak has no tensor layout for torch %s, and "
                        "none of its layouts (%s) fits this process's tensors", version,
                        torch_layout_names());
}

int torch_tensors_collect(struct py_heap *h, const struct cl_torch_info *torch,
                          struct torch_tensors *out, struct cl_error *err)
{
    memset(out, 0, sizeof *out);
    if (!torch->loaded)
        return 0;
    unsigned major = 0, minor = 0;
    if (sscanf(torch->version, "%u.%u", &major, &minor) != 2)
        return cl_error_set(err, CL_E_UNSUPPORTED, "the torch version is unknown (no readable "
                            "torch/version.py); tensors cannot be reported");
    if (!(out->l = torch_layout_for(major, minor)))
        return collect_by_structure(h, torch->version, out, err);
    if (!out->l->verified)
        cl_note_add(&out->warnings, "the torch %s layout was read from headers, not checked on a "
                    "real %s wheel; the live checks passed", out->l->name, out->l->name);
    return collect_with(h, out, err);
}

void torch_tensors_free(struct torch_tensors *tt)
{
    for (uint32_t i = 0; i < tt->n; i++)
        free(tt->v[i].autograd_path);
    for (uint32_t i = 0; i < tt->nstorages; i++)
        free(tt->storages[i].tensors);
    free(tt->v);
    free(tt->storages);
    free(tt->warnings);
    memset(tt, 0, sizeof *tt);
}
