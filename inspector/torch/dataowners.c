#include "torch/dataowners.h"

#include <string.h>

#include "cpython/object.h"
#include "symbols/symbols.h"
#include "torch/cxxrefs.h"

/* c10::DataPtr, the same in every release: UniqueVoidPtr {data_; std::unique_ptr<void,
 * DeleterFnPtr> ctx_}, libstdc++'s unique_ptr a tuple that lays out its deleter first. */
#define DATAPTR_DELETER 8
#define DATAPTR_CTX 16

/* InefficientStdFunctionContext: the data pointer and libstdc++'s std::function {_Any_data (16
 * bytes, where a lambda of one captured pointer lies), _M_manager, _M_invoker}, 40 bytes: a
 * 48-byte malloc chunk, or a 64-byte one malloc did not split (what is left of a free chunk
 * below its 32-byte minimum stays with the chunk). It has had two layouts: {void *ptr_; std::function deleter_} (2.x), and
 * before, a std::unique_ptr<void, std::function> (1.13), whose tuple lays out the deleter
 * first: the function at 0, the pointer at 32. Where the data pointer is tells them apart. */
#define CTX_SIZE 40
#define CTX_CHUNK_MIN 48
#define CTX_CHUNK_MAX 64
#define FN_CAPTURE 0
#define FN_MANAGER 16
#define FN_INVOKER 24
static const struct {
    uint8_t ptr, function;
} ctx_layouts[] = {{0, 8}, {32, 0}};

/* DLPack's DLManagedTensor {DLTensor dl_tensor (data first, byte_offset last); manager_ctx;
 * deleter}, and DLManagedTensorVersioned {DLPackVersion version (major 1); manager_ctx; deleter;
 * flags; DLTensor dl_tensor} (dlpack.h). */
#define DL_BYTE_OFFSET 40
#define DL_MANAGER_CTX 48
#define DLV_MANAGER_CTX 8
#define DLV_TENSOR 32
#define DL_WORDS 10 /* the larger, versioned struct up to its byte_offset */

static bool in_module(const struct cl_symbols *s, uint64_t addr, const char *prefix)
{
    const struct cl_module *m = s ? cl_symbols_module_at(s, addr) : NULL;
    const char *base = m ? strrchr(m->path, '/') : NULL;
    base = base ? base + 1 : m ? m->path : NULL;
    return base && strncmp(base, prefix, strlen(prefix)) == 0;
}

/* The object a DLManagedTensor (or its versioned kind) at dl keeps for the producer, where its
 * tensor's data is the storage's; 0 otherwise. */
static uint64_t dlpack_owner(struct cl_target *t, uint64_t dl, uint64_t data)
{
    uint64_t m[DL_WORDS];
    if (!dl || (dl & 7) || cl_read_held(t, dl, m, sizeof m))
        return 0;
    uint64_t dl_data = m[0], offset = m[DL_BYTE_OFFSET / 8];
    if (dl_data == data || dl_data + offset == data)
        return m[DL_MANAGER_CTX / 8];
    dl_data = m[DLV_TENSOR / 8];
    offset = m[(DLV_TENSOR + DL_BYTE_OFFSET) / 8];
    if ((uint32_t)m[0] == 1 && (dl_data == data || dl_data + offset == data))
        return m[DLV_MANAGER_CTX / 8];
    return 0;
}

/* The object whose reference the storage's data deleter keeps, checked whole; 0 for none. */
static uint64_t data_owner(struct py_heap *h, const struct torch_tensors *tt, uint64_t impl,
                           bool *dlpack)
{
    struct cl_target *t = h->objects.rt->t;
    const struct cl_symbols *syms = h->objects.rt->module ? h->objects.rt->module->owner : NULL;
    uint64_t dp[3], c[1 + CTX_SIZE / 8];
    if (cl_read_held(t, impl + tt->l->si_data, dp, sizeof dp))
        return 0;
    uint64_t data = dp[0], deleter = dp[DATAPTR_DELETER / 8], ctx = dp[DATAPTR_CTX / 8];
    /* the chunk's header, then the context */
    if (!ctx || ctx == data || (ctx & 15) || cl_read_held(t, ctx - 8, c, sizeof c) ||
        (c[0] & ~7ull) < CTX_CHUNK_MIN || (c[0] & ~7ull) > CTX_CHUNK_MAX || (c[0] & 2) ||
        !in_module(syms, deleter, "libc10"))
        return 0;
    size_t k = 0;
    while (k < sizeof ctx_layouts / sizeof *ctx_layouts && c[1 + ctx_layouts[k].ptr / 8] != data)
        k++;
    if (k == sizeof ctx_layouts / sizeof *ctx_layouts)
        return 0;
    const uint64_t *fn = c + 1 + ctx_layouts[k].function / 8;
    uint64_t manager = fn[FN_MANAGER / 8], invoker = fn[FN_INVOKER / 8],
             capture = fn[FN_CAPTURE / 8];
    if (!in_module(syms, manager, "libtorch") ||
        cl_symbols_module_at(syms, manager) != cl_symbols_module_at(syms, invoker))
        return 0;
    /* an object (a DLManagedTensor's second word is a device, no type) */
    *dlpack = !py_held_object_type(&h->objects, capture);
    return *dlpack ? dlpack_owner(t, capture, data) : capture;
}

bool torch_data_owners_explain(struct py_heap *h, struct torch_tensors *tt)
{
    struct cxx_refs r = {0};
    for (uint32_t k = 0; k < tt->nstorages; k++) {
        struct torch_storage *st = &tt->storages[k];
        bool dlpack;
        uint64_t owner = data_owner(h, tt, st->impl, &dlpack);
        /* an owner the walk never met (untracked, and held by this storage alone) is named, and
         * has no books to balance */
        if (!owner || (dlpack && !py_held_object_type(&h->objects, owner)))
            continue;
        st->data_owner = owner;
        st->data_owner_dlpack = dlpack;
        if (py_heap_find(h, owner) != PY_NO_NODE)
            cxx_refs_add(&r, owner, "<StorageImpl 0x%llx: the owner of its data%s>",
                         (unsigned long long)st->impl, dlpack ? ", through DLPack" : "");
    }
    return cxx_refs_confirm(h, &r);
}
