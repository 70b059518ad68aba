#include "cudacache/walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torch/cxx.h"
#include "util/addrmap.h"

#define MAX_DEVICES 64
#define MAX_BLOCKS (1u << 24)        /* per device; a sanity cap */

const char *cc_state_name(enum cc_state s)
{
    static const char *const names[] = {"active_allocated", "active_pending_free", "inactive",
                                        "unmapped"};
    return names[s];
}

struct walk {
    struct cl_target *t;
    const struct cc_layout *l;
    uint64_t *found;          /* Block* from the pools and the active set */
    size_t nfound, cap;
    struct cl_addrmap active;
};

static uint64_t word(struct walk *w, uint64_t addr)
{
    uint64_t v = 0;
    return cl_read_u64(w->t, addr, &v) == 0 ? v : 0;
}

static void found(struct walk *w, uint64_t block)
{
    if (!block || w->nfound >= MAX_BLOCKS)
        return;
    if (w->nfound == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        uint64_t *v = realloc(w->found, cap * sizeof *v);
        if (!v)
            return;
        w->found = v;
        w->cap = cap;
    }
    w->found[w->nfound++] = block;
}

/* std::set<Block*>: header at +8 {colour, parent, left, right}, node_count at +40; a node is
 * {colour, parent, left, right, value}. In-order, bounded by node_count. */
static bool walk_set(struct walk *w, uint64_t set)
{
    uint64_t header = set + 8, count = word(w, set + 40), node = word(w, header + 16);
    uint64_t seen = 0;
    while (node && node != header && seen <= count) {
        found(w, word(w, node + 32));
        seen++;
        uint64_t right = word(w, node + 24);
        if (right) {
            node = right;
            for (uint64_t left; (left = word(w, node + 16)) && seen <= count;)
                node = left;
        } else {
            uint64_t parent = word(w, node + 8);
            while (parent != header && node == word(w, parent + 24)) {
                node = parent;
                parent = word(w, node + 8);
            }
            node = parent;
        }
    }
    return seen == count;
}

/* ska::flat_hash_set<Block*>: entries at +0 (16 bytes: int8 distance, Block*), slot count - 1 at
 * +8, max_lookups (int8) at +17, element count at +24. */
static bool walk_ska_set(struct walk *w, uint64_t set)
{
    uint64_t entries = word(w, set), slots = word(w, set + 8), count = word(w, set + 24), seen = 0;
    int8_t max_lookups = 0;
    if (slots > MAX_BLOCKS || cl_read(w->t, set + 17, &max_lookups, 1) || max_lookups < 0)
        return false;
    for (uint64_t i = 0; i < slots + (uint64_t)max_lookups; i++) {
        int8_t distance;
        if (cl_read(w->t, entries + 16 * i, &distance, 1))
            return false;
        if (distance < 0)
            continue;
        uint64_t b = word(w, entries + 16 * i + 8);
        bool inserted;
        cl_addrmap_put(&w->active, b, 1, &inserted);
        found(w, b);
        seen++;
    }
    return seen == count;
}

static int by_addr(const void *a, const void *b)
{
    const struct cc_segment *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int walk_device(struct walk *w, uint64_t dca, struct cc_device *d, struct cl_error *err)
{
    const struct cc_layout *l = w->l;
    d->dca = dca;
    d->reserved = word(w, dca + l->dca_reserved_bytes);
    d->allocated = word(w, dca + l->dca_allocated_bytes);
    w->nfound = 0;
    cl_addrmap_free(&w->active);
    bool ok = walk_set(w, dca + l->dca_large_blocks) && walk_set(w, dca + l->dca_small_blocks) &&
              walk_ska_set(w, dca + l->dca_active_blocks);
    /* Segments: from every block back to its head, then along next. */
    struct cl_addrmap heads = {0};
    uint64_t reserved = 0, allocated = 0;
    for (size_t i = 0; ok && i < w->nfound; i++) {
        uint64_t head = w->found[i];
        for (uint32_t n = 0; n < MAX_BLOCKS && word(w, head + l->blk_prev); n++)
            head = word(w, head + l->blk_prev);
        bool inserted;
        cl_addrmap_put(&heads, head, 1, &inserted);
        if (!inserted)
            continue;
        struct cc_segment seg = {.addr = word(w, head + l->blk_ptr), .first = d->nblocks,
                                 .stream = word(w, head + l->blk_stream)};
        uint64_t pool = word(w, head + l->blk_pool);
        seg.pool = pool == dca + l->dca_small_blocks ? "small"
                 : pool == dca + l->dca_large_blocks ? "large" : "private";
        seg.expandable = word(w, head + l->blk_expandable) != 0;
        for (uint64_t b = head, prev = 0; b && ok; prev = b, b = word(w, b + l->blk_next)) {
            struct cc_block blk = {.addr = b, .ptr = word(w, b + l->blk_ptr),
                                   .size = word(w, b + l->blk_size),
                                   .requested = word(w, b + l->blk_requested)};
            uint8_t flags[2] = {0, 1};
            cl_read(w->t, b + l->blk_allocated, flags, 2);
            blk.state = !flags[1] ? CC_UNMAPPED
                      : flags[0]  ? CC_ACTIVE_ALLOCATED
                      : cl_addrmap_get(&w->active, b) != UINT32_MAX ? CC_ACTIVE_PENDING_FREE
                                                                    : CC_INACTIVE;
            /* a chain links both ways and its blocks tile the segment */
            if (word(w, b + l->blk_prev) != prev || blk.ptr != seg.addr + seg.size ||
                d->nblocks >= MAX_BLOCKS) {
                ok = false;
                break;
            }
            struct cc_block *v = realloc(d->blocks, (d->nblocks + 1) * sizeof *v);
            if (!v) {
                ok = false;
                break;
            }
            d->blocks = v;
            d->blocks[d->nblocks++] = blk;
            seg.size += blk.size;
            seg.nblocks++;
            if (blk.state == CC_ACTIVE_ALLOCATED)
                allocated += blk.size;
        }
        struct cc_segment *v = ok ? realloc(d->segments, (d->nsegments + 1) * sizeof *v) : NULL;
        if (!v) {
            ok = false;
            break;
        }
        d->segments = v;
        d->segments[d->nsegments++] = seg;
        reserved += seg.size;
    }
    cl_addrmap_free(&heads);
    if (!ok || reserved != d->reserved || allocated != d->allocated)
        return cl_error_set(err, CL_E_UNSUPPORTED, "the allocator layout %s does not fit device "
                            "%d: the walk finds %llu bytes reserved and %llu allocated, the "
                            "allocator's own statistics say %llu and %llu%s", l->name, d->index,
                            (unsigned long long)reserved, (unsigned long long)allocated,
                            (unsigned long long)d->reserved, (unsigned long long)d->allocated,
                            ok ? "" : " (and a block chain is broken)");
    /* segments in address order, blocks renumbered to follow them */
    qsort(d->segments, d->nsegments, sizeof *d->segments, by_addr);
    struct cc_block *ordered = malloc((d->nblocks ? d->nblocks : 1) * sizeof *ordered);
    if (!ordered)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    uint32_t n = 0;
    for (uint32_t s = 0; s < d->nsegments; s++) {
        memcpy(ordered + n, d->blocks + d->segments[s].first, d->segments[s].nblocks * sizeof *ordered);
        d->segments[s].first = n;
        n += d->segments[s].nblocks;
    }
    free(d->blocks);
    d->blocks = ordered;
    return 0;
}

int cc_walk(struct cl_target *t, const struct cl_symbols *syms, const struct cl_torch_info *torch,
            struct cc_allocator *out, struct cl_error *err)
{
    memset(out, 0, sizeof *out);
    const struct cl_module *c10 = cl_symbols_module_named(syms, "libc10_cuda");
    uint64_t root;
    if (!c10 || !cl_module_symbol(c10, "_ZN3c104cuda20CUDACachingAllocator9allocatorE", &root, NULL))
        return cl_error_set(err, CL_E_UNSUPPORTED, "no CUDA caching allocator in this process "
                            "(libc10_cuda.so is not loaded, or has no allocator symbol)");
    unsigned major = 0, minor = 0;
    sscanf(torch->version, "%u.%u", &major, &minor);
    if (!(out->l = cc_layout_for(major, minor)))
        return cl_error_set(err, CL_E_UNSUPPORTED, "culeak has no caching-allocator layout for "
                            "torch %s (known: 2.14); tensors are still reported by `tensors`",
                            torch->version[0] ? torch->version : "(unknown version)");
    char cls[160];
    out->object = 0;
    if (cl_read_u64(t, root, &out->object) || !out->object)
        return cl_error_set(err, CL_E_UNSUPPORTED, "the CUDA allocator is not initialised yet "
                            "(no CUDA tensor has been made)");
    if (!cxx_class_name(t, out->object, cls, sizeof cls))
        return cl_error_set(err, CL_E_UNSUPPORTED, "the CUDA allocator object has no readable "
                            "class name");
    if (!strstr(cls, "NativeCachingAllocator"))
        return cl_error_set(err, CL_E_UNSUPPORTED, "the CUDA allocator backend is %s, not the "
                            "native caching allocator: only tensors can be reported",
                            strstr(cls, "CudaMallocAsync") ? "cudaMallocAsync" : cls);
    struct walk w = {.t = t, .l = out->l};
    uint64_t vec = out->object + out->l->nca_device_allocator;
    uint64_t begin = word(&w, vec), end = word(&w, vec + 8);
    if (end < begin || (end - begin) / 8 > MAX_DEVICES)
        return cl_error_set(err, CL_E_UNSUPPORTED, "the allocator's device list is not readable");
    out->ndevices = (uint32_t)((end - begin) / 8);
    out->devices = calloc(out->ndevices ? out->ndevices : 1, sizeof *out->devices);
    int rc = out->devices ? 0 : cl_error_set(err, CL_E_INTERNAL, "out of memory");
    for (uint32_t i = 0; !rc && i < out->ndevices; i++) {
        out->devices[i].index = (int)i;
        uint64_t dca = word(&w, begin + 8 * i);
        if (dca)
            rc = walk_device(&w, dca, &out->devices[i], err);
    }
    free(w.found);
    cl_addrmap_free(&w.active);
    if (rc)
        cc_free(out);
    return rc;
}

void cc_free(struct cc_allocator *a)
{
    for (uint32_t i = 0; i < a->ndevices; i++) {
        free(a->devices[i].segments);
        free(a->devices[i].blocks);
    }
    free(a->devices);
    memset(a, 0, sizeof *a);
}
