#include "torch/autograd.h"

#include <string.h>

#include "util/error.h"

#define MAX_EDGES 65536            /* next edges of one node: one per differentiable input */
#define MAX_SAVED_VECTOR 4096      /* SavedVariables in one std::vector member */
#define MAX_NODE_BYTES (64u << 10) /* a node's allocation */
#define MAX_USE_COUNT (1u << 30)   /* a shared_ptr use count beyond this is not one */

/* A shared_ptr's control block for obj: a live use count, and the object either inside the block
 * (make_shared: right after its 16-byte header) or pointed to from it. */
static bool valid_control_block(struct cl_target *t, uint64_t ctrl, uint64_t obj)
{
    uint32_t use;
    if (!ctrl || (ctrl & 7) || cl_read_u32(t, ctrl + CXX_SP_USE_COUNT, &use) || use == 0 ||
        use > MAX_USE_COUNT)
        return false;
    /* torch's nodes are _Sp_counted_deleter blocks (with deleteNode) */
    return ctrl + CXX_SP_HEADER == obj || cl_read_ptr_or_0(t, ctrl + CXX_SP_HEADER) == obj ||
           cl_read_ptr_or_0(t, ctrl + CXX_SP_HEADER + 8) == obj;
}

/* A std::shared_ptr / std::weak_ptr's two words: both null, or both set and aligned. */
static bool pointer_pair(const uint64_t *w)
{
    return (!w[0] && !w[1]) || (w[0] && w[1] && !(w[0] & 7) && !(w[1] & 7));
}

/* An owning reference to a node as the build holds them (w: its one or two words): a node whose
 * intrusive refcount, or whose shared_ptr control block, is live. */
static bool owned_node(struct cxx_classifier *c, const struct torch_autograd_layout *l,
                       const uint64_t *w)
{
    uint32_t refs;
    if (cxx_classify(c, w[0]) != CXX_NODE)
        return false;
    if (l->node_ptr_words == 2)
        return valid_control_block(c->t, w[1], w[0]);
    return cl_read_u32(c->t, w[0] + TORCH_NODE_REFCOUNT, &refs) == 0 && refs > 0 &&
           refs <= MAX_USE_COUNT;
}

static uint64_t at(const uint8_t *buf, uint16_t off)
{
    uint64_t v;
    memcpy(&v, buf + off, sizeof v);
    return v;
}

/* The Python objects a saved_tensors_hooks pair's PySavedVariableHooks at hooks owns: the object
 * pack returned, then the two functions. Other hooks (C++ ones) are not read. */
static void python_hooks(struct cxx_classifier *c, const struct torch_autograd_layout *l,
                         uint64_t hooks, torch_ref_fn *fn, void *arg)
{
    char type[64];
    const uint8_t members[] = {l->svh_data, l->svh_pack, l->svh_unpack};
    uint64_t span = 0;   /* the hooks object up to the end of the last member read */
    for (unsigned i = 0; i < sizeof members / sizeof *members; i++)
        if (members[i] + (l->svh_optional ? TORCH_SVH_OPTIONAL_FLAG + 1u : 8u) > span)
            span = members[i] + (l->svh_optional ? TORCH_SVH_OPTIONAL_FLAG + 1u : 8u);
    /* held: a dump an older culeak wrote, before it read hooks, has none of their memory */
    if (!cl_target_holds_range(c->t, hooks, span) ||
        !cxx_class_name_held(c->t, hooks, type, sizeof type) || strcmp(type, TORCH_PY_SAVED_HOOKS))
        return;
    for (unsigned i = 0; i < sizeof members / sizeof *members; i++) {
        uint64_t obj;
        uint8_t set = 1;
        if (cl_read_u64(c->t, hooks + members[i], &obj) || !obj || (obj & 7) ||
            (l->svh_optional &&
             cl_read(c->t, hooks + members[i] + TORCH_SVH_OPTIONAL_FLAG, &set, 1)) ||
            set != 1)
            continue;
        fn(arg, i == 0 ? TORCH_REF_PACKED : TORCH_REF_HOOK, obj);
    }
}

/* Whether [a, a + sv_size) holds a whole, valid SavedVariable; if so, sends what it owns. */
static bool saved_variable(struct cxx_classifier *c, const struct torch_autograd_layout *l,
                           uint64_t a, torch_ref_fn *fn, void *arg)
{
    uint8_t buf[TORCH_MAX_SAVED_VARIABLE];
    if (l->sv_size > sizeof buf || cl_read(c->t, a, buf, l->sv_size))
        return false;
    uint64_t data = at(buf, l->sv_data);
    enum cxx_kind kind = cxx_classify(c, data);
    if (kind != CXX_TENSOR && kind != CXX_UNDEFINED_TENSOR)
        return false;
    for (unsigned i = 0; i < l->sv_nflags; i++)
        if (buf[l->sv_flags + i] > 1)
            return false;
    bool default_constructed = buf[l->sv_flags] == 1;   /* was_default_constructed_ comes first */
    if (default_constructed && kind == CXX_TENSOR)
        return false;
    uint32_t output_nr;
    memcpy(&output_nr, buf + l->sv_output_nr, sizeof output_nr);
    if (output_nr > MAX_EDGES)
        return false;
    uint64_t fw_grad[2] = {at(buf, l->sv_fw_grad), at(buf, l->sv_fw_grad + 8)};   /* shared_ptr */
    if (!pointer_pair(fw_grad))
        return false;
    /* weak_grad_fn_ (never an edge), then the owning grad_fn_ and grad_accumulator_ */
    const uint16_t nodes[] = {l->sv_weak_grad_fn, l->sv_grad_fn, l->sv_grad_accumulator};
    uint64_t owned[2] = {0, 0};
    for (unsigned i = 0; i < sizeof nodes / sizeof *nodes; i++) {
        uint64_t w[2] = {at(buf, nodes[i]), l->node_ptr_words == 2 ? at(buf, nodes[i] + 8) : 0};
        if ((l->node_ptr_words == 2 && !pointer_pair(w)) || (w[0] & 7))
            return false;
        if (i > 0 && w[0]) {
            if (!owned_node(c, l, w))
                return false;
            owned[i - 1] = w[0];
        }
    }
    if (l->sv_grad_accumulator_weak)
        owned[1] = 0;
    uint64_t hooks = l->sv_hooks ? at(buf, l->sv_hooks) : 0;
    if (hooks & 7)
        return false;
    if (kind == CXX_TENSOR)
        fn(arg, TORCH_REF_SAVED, data);
    for (unsigned i = 0; i < 2; i++)
        if (owned[i])
            fn(arg, TORCH_REF_SAVED_NODE, owned[i]);
    if (hooks)
        python_hooks(c, l, hooks, fn, arg);
    return true;
}

static void ignore_ref(void *arg, enum torch_ref kind, uint64_t dst)
{
    (void)arg, (void)kind, (void)dst;
}

/* A std::vector<SavedVariable> whose triple sits at a: every element must be valid. */
static bool saved_vector(struct cxx_classifier *c, const struct torch_autograd_layout *l,
                         uint64_t a, torch_ref_fn *fn, void *arg)
{
    uint64_t v[3];
    if (!cxx_vector(c->t, a, l->sv_size, MAX_SAVED_VECTOR, v) || !v[0] || (v[0] & 7) ||
        (v[2] - v[0]) % l->sv_size || v[1] == v[0])
        return false;
    for (uint64_t p = v[0]; p < v[1]; p += l->sv_size)
        if (!saved_variable(c, l, p, ignore_ref, NULL))
            return false;
    for (uint64_t p = v[0]; p < v[1]; p += l->sv_size)
        saved_variable(c, l, p, fn, arg);
    return true;
}

#define MAX_FIT_SAVED 256   /* SavedVariables of one node remembered for the layout check */

/* Where the SavedVariables found lie in place (not in a vector): their data_ members. */
struct saved_places {
    uint64_t data[MAX_FIT_SAVED];
    unsigned n;
};

/* Every SavedVariable, alone or in a vector, lying inside [lo, hi); those in place are noted in
 * places unless it is NULL. */
static void scan_saved(struct cxx_classifier *c, const struct torch_autograd_layout *l, uint64_t lo,
                       uint64_t hi, torch_ref_fn *fn, void *arg, struct saved_places *places)
{
    for (uint64_t a = lo; a + 8 <= hi;) {
        if (a + l->sv_size <= hi && saved_variable(c, l, a, fn, arg)) {
            if (places && places->n < MAX_FIT_SAVED)
                places->data[places->n++] = a + l->sv_data;
            a += l->sv_size;
            continue;
        }
        if (a + 24 <= hi && saved_vector(c, l, a, fn, arg)) {
            a += 24;
            continue;
        }
        a += 8;
    }
}

/* The bytes of the allocation holding a node: its own malloc chunk (new), else after a 16-byte
 * control block (make_shared, whose counts before the node cannot pass for a chunk header: the
 * weak count is at least 1, so the word is at least 2^32). 0 when neither looks like one. */
static uint64_t node_bytes(struct cl_target *t, uint64_t node)
{
    uint64_t size = cxx_malloc_size(t, node, MAX_NODE_BYTES);
    if (size)
        return size;
    size = cxx_malloc_size(t, node - CXX_SP_HEADER, MAX_NODE_BYTES + CXX_SP_HEADER);
    return size > CXX_SP_HEADER ? size - CXX_SP_HEADER : 0;
}

static int next_edges(struct cxx_classifier *c, const struct torch_autograd_layout *l,
                      uint64_t node, torch_ref_fn *fn, void *arg)
{
    uint64_t v[3];
    unsigned edge_size = 8u * l->node_ptr_words + 8;   /* the function, then input_nr (padded) */
    if (!cxx_vector(c->t, node + l->node_next_edges, edge_size, MAX_EDGES, v) || (!v[0] && v[2]))
        return CL_E_UNSUPPORTED;
    for (uint64_t e = v[0]; e < v[1]; e += edge_size) {
        uint64_t edge[2] = {0, 0};
        if (cl_read(c->t, e, edge, 8u * l->node_ptr_words))
            return CL_E_UNSUPPORTED;
        if (!edge[0] && !edge[1])
            continue;   /* an input that needs no gradient */
        if (!owned_node(c, l, edge))
            return CL_E_UNSUPPORTED;
        fn(arg, TORCH_REF_NEXT, edge[0]);
    }
    return 0;
}

static bool python_hook(const char *type)
{
    static const char *const python[] = TORCH_PY_NODE_HOOKS;
    for (size_t k = 0; k < sizeof python / sizeof *python; k++)
        if (strcmp(type, python[k]) == 0)
            return true;
    return false;
}

/* The dicts of the node's Python hooks (pre, tensor pre and post hooks), each in a
 * std::vector<std::unique_ptr<Hook>> (1.13 keeps tensor pre hooks among the pre hooks); C++
 * hooks are not read, nor a vector that is none. */
static void node_hooks(struct cxx_classifier *c, const struct torch_autograd_layout *l,
                       uint64_t node, torch_ref_fn *fn, void *arg)
{
    const uint16_t vectors[] = {l->node_pre_hooks, l->node_tensor_pre_hooks, l->node_post_hooks};
    for (unsigned k = 0; k < sizeof vectors / sizeof *vectors; k++) {
        uint64_t v[3];
        /* held: a dump an older culeak wrote, before it read hooks, has none of their memory */
        if (!vectors[k] || !cxx_vector_held(c->t, node + vectors[k], 8, TORCH_MAX_NODE_HOOKS, v))
            continue;
        for (uint64_t p = v[0]; p < v[1]; p += 8) {
            uint64_t hook = 0, dict;
            char type[64];
            if (cl_read_held(c->t, p, &hook, sizeof hook) || !hook ||
                !cl_target_holds_range(c->t, hook, TORCH_PY_HOOK_DICT + 8) ||
                !cxx_class_name_held(c->t, hook, type, sizeof type) || !python_hook(type) ||
                cl_read_u64(c->t, hook + TORCH_PY_HOOK_DICT, &dict) || !dict || (dict & 7))
                continue;
            fn(arg, TORCH_REF_NODE_HOOKS, dict);
        }
    }
}

int torch_node_refs(struct cxx_classifier *c, const struct torch_autograd_layout *l, uint64_t node,
                    torch_ref_fn *fn, void *arg)
{
    int rc = next_edges(c, l, node, fn, arg);
    if (rc)
        return rc;
    node_hooks(c, l, node, fn, arg);
    const char *name = cxx_short_class(c, node);
    if (!name)
        return CL_E_UNSUPPORTED;
    uint64_t first =
        cl_read_ptr_or_0(c->t, node + l->node_size); /* a derived class's first member */
    if (strcmp(name, "AccumulateGrad") == 0) {
        if (cxx_classify(c, first) == CXX_TENSOR)
            fn(arg, TORCH_REF_VARIABLE, first);
        return 0;
    }
    if (strcmp(name, "PyNode") == 0) {
        uint64_t ctx = cl_read_ptr_or_0(c->t, node + l->pynode_obj);
        if (ctx)
            fn(arg, TORCH_REF_CONTEXT, ctx);
        return 0;
    }
    uint64_t size = node_bytes(c->t, node);
    if (size > l->node_size)
        scan_saved(c, l, node + l->node_size, node + size, fn, arg, NULL);
    return 0;
}

static bool is_place(const struct saved_places *p, uint64_t addr)
{
    for (unsigned i = 0; i < p->n; i++)
        if (p->data[i] == addr)
            return true;
    return false;
}

/* Whether a ctx's saved_variables, the std::vector at a, is empty or a vector of valid
 * SavedVariables. */
static bool context_saved_reads(struct cxx_classifier *c, const struct torch_autograd_layout *l,
                                uint64_t a)
{
    uint64_t v[3];
    if (cl_read(c->t, a, v, sizeof v))
        return false;
    if (v[0] == v[1]) /* empty (after backward the capacity may stay) */
        return !(v[0] & 7) && v[2] >= v[1];
    return saved_vector(c, l, a, ignore_ref, NULL);
}

void torch_node_saved_fit(struct cxx_classifier *c, const struct torch_autograd_layout *l,
                          uint64_t node, struct torch_saved_fit *fit)
{
    const char *name = cxx_short_class(c, node);
    if (!name || strcmp(name, "AccumulateGrad") == 0)
        return;
    if (strcmp(name, "PyNode") == 0) {
        uint64_t ctx = cl_read_ptr_or_0(c->t, node + l->pynode_obj);
        if (ctx) {
            fit->contexts++;
            fit->contexts_read += context_saved_reads(c, l, ctx + l->thpfunction_saved);
        }
        return;
    }
    uint64_t size = node_bytes(c->t, node);
    if (size <= l->node_size)
        return;
    struct saved_places places = {.n = 0};
    scan_saved(c, l, node + l->node_size, node + size, ignore_ref, NULL, &places);
    for (uint64_t a = node + l->node_size; a + 8 <= node + size; a += 8) {
        uint64_t impl = cl_read_ptr_or_0(c->t, a);
        if (impl && !(impl & 7) && cxx_classify(c, impl) == CXX_TENSOR) {
            fit->tensors++;
            fit->explained += is_place(&places, a);
        }
    }
}

void torch_context_saved(struct cxx_classifier *c, const struct torch_autograd_layout *l,
                         uint64_t ctx, torch_ref_fn *fn, void *arg)
{
    uint64_t v[3];
    if (cl_read(c->t, ctx + l->thpfunction_saved, v, sizeof v) == 0 && v[0] != v[1])
        (void)saved_vector(c, l, ctx + l->thpfunction_saved, fn, arg); /* invalid: no edges */
}
