#include "cudacache/walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torch/cxx.h"
#include "util/addrmap.h"
#include "util/notes.h"
#include "util/vec.h"

#define MAX_DEVICES 64
#define MAX_BLOCKS (1u << 24)        /* per device; a sanity cap */
#define MAX_POOLS 4096               /* BlockPools per device: 2 per private pool, and 2 */

const char *cc_state_name(enum cc_state s)
{
    static const char *const names[] = {"active_allocated", "active_pending_free", "inactive",
                                        "unmapped"};
    return names[s];
}

static void free_devices(struct cc_allocator *a)
{
    for (uint32_t i = 0; i < a->ndevices; i++) {
        free(a->devices[i].segments);
        free(a->devices[i].blocks);
    }
    free(a->devices);
    a->devices = NULL;
    a->ndevices = 0;
}

struct pool {
    uint64_t addr;            /* the BlockPool */
    bool small;
    uint64_t id[2];
};

struct walk {
    struct cl_target *t;
    const struct cc_layout *l;
    uint64_t *found;          /* Block* from the pools and the active set */
    size_t nfound, cap;
    struct cl_addrmap active;
    struct pool pools[MAX_POOLS];
    size_t npools;
    bool oom;                 /* an allocation failed: the walk stopped, and says so */
};

static void found(struct walk *w, uint64_t block)
{
    if (!block || w->nfound >= MAX_BLOCKS)
        return;
    if (!CL_VEC_RESERVE(w->found, w->nfound, w->cap)) {
        w->oom = true;
        return;
    }
    w->found[w->nfound++] = block;
}

/* One step of a tree walk onto node. An in-order walk steps onto each node at most three times
 * (down to it, back up from its left subtree, back up from its right one), so more steps than
 * three per distinct node touched means a cycle, whatever node_count says: a corrupt count of
 * 2^24 once let a looped tree run 2^26 steps. */
static bool tree_step(struct walk *w, struct cl_addrmap *touched, uint64_t node, uint64_t *steps)
{
    bool inserted;
    if (cl_addrmap_put(touched, node, 1, &inserted) == UINT32_MAX) {
        w->oom = true;
        return false;
    }
    return ++*steps <= 3 * (uint64_t)touched->n + 4;
}

/* std::set<Block*> (layout.h), in order from the leftmost node; an in-order walk of n nodes takes
 * at most 2n steps up and down, so more than that means the tree is not one. */
static bool walk_set(struct walk *w, uint64_t set)
{
    uint64_t header = set + CC_SET_HEADER, count = cl_read_ptr_or_0(w->t, set + CC_SET_COUNT);
    uint64_t node = cl_read_ptr_or_0(w->t, header + CC_RB_LEFT);
    uint64_t seen = 0, steps = 0, tsteps = 0;
    if (count > MAX_BLOCKS)
        return false;
    uint64_t budget = 4 * count + 4;
    struct cl_addrmap touched = {0};
    bool ok = true;
    while (ok && node && node != header && seen < count && steps < budget) {
        found(w, cl_read_ptr_or_0(w->t, node + CC_RB_VALUE));
        seen++;
        uint64_t right = cl_read_ptr_or_0(w->t, node + CC_RB_RIGHT);
        if (right) {
            node = right;
            ok = tree_step(w, &touched, node, &tsteps);
            for (uint64_t left;
                 ok && (left = cl_read_ptr_or_0(w->t, node + CC_RB_LEFT)) && ++steps < budget;) {
                node = left;
                ok = tree_step(w, &touched, node, &tsteps);
            }
        } else {
            uint64_t parent = cl_read_ptr_or_0(w->t, node + CC_RB_PARENT);
            while (ok && parent && parent != header &&
                   node == cl_read_ptr_or_0(w->t, parent + CC_RB_RIGHT) && ++steps < budget) {
                node = parent;
                parent = cl_read_ptr_or_0(w->t, node + CC_RB_PARENT);
                ok = tree_step(w, &touched, node, &tsteps);
            }
            node = parent;
            ok = ok && tree_step(w, &touched, node, &tsteps);
        }
    }
    cl_addrmap_free(&touched);
    return ok && seen == count && (count == 0 || node == header);
}

/* A ska::flat_hash_map/set (layout.h): visits each live entry. */
static bool walk_ska(struct walk *w, uint64_t table, unsigned entry_size,
                     bool (*visit)(struct walk *, uint64_t entry))
{
    uint64_t entries = cl_read_ptr_or_0(w->t, table);
    uint64_t slots = cl_read_ptr_or_0(w->t, table + CC_SKA_SLOTS);
    uint64_t count = cl_read_ptr_or_0(w->t, table + CC_SKA_COUNT);
    uint64_t seen = 0;
    int8_t max_lookups = 0;
    if (slots > MAX_BLOCKS || count > slots + 1 ||
        cl_read(w->t, table + CC_SKA_MAX_LOOKUPS, &max_lookups, sizeof max_lookups) ||
        max_lookups < 0)
        return false;
    for (uint64_t i = 0; i < slots + (uint64_t)max_lookups; i++) {
        int8_t distance;
        if (cl_read(w->t, entries + entry_size * i, &distance, sizeof distance))
            return false;
        if (distance < 0)
            continue;
        if (!visit(w, entries + entry_size * i))
            return false;
        seen++;
    }
    return seen == count;
}

/* active_blocks entry: {distance, Block*} */
static bool visit_active(struct walk *w, uint64_t entry)
{
    uint64_t b = cl_read_ptr_or_0(w->t, entry + CC_SKA_VALUE);
    bool inserted;
    if (cl_addrmap_put(&w->active, b, 1, &inserted) == UINT32_MAX) {
        w->oom = true;
        return false;
    }
    found(w, b);
    return !w->oom;
}

/* A BlockPool: its free blocks and its unmapped ranges. Its is_small flag must be a bool. */
static bool add_pool(struct walk *w, uint64_t pool, const uint64_t id[2])
{
    uint8_t small = 2;
    if (w->npools == MAX_POOLS || cl_read(w->t, pool + w->l->bp_is_small, &small, sizeof small) ||
        small > 1)
        return false;
    w->pools[w->npools++] = (struct pool){.addr = pool, .small = small, .id = {id[0], id[1]}};
    return walk_set(w, pool) && walk_set(w, pool + w->l->bp_unmapped);
}

/* graph_pools entry: {distance, MempoolId_t {u64, u64}, PrivatePool*}; a pool that has its id
 * must repeat it */
static bool visit_private_pool(struct walk *w, uint64_t entry)
{
    uint64_t key = entry + CC_SKA_VALUE;
    uint64_t id[2] = {cl_read_ptr_or_0(w->t, key), cl_read_ptr_or_0(w->t, key + 8)};
    uint64_t pp = cl_read_ptr_or_0(w->t, key + 16);
    return pp &&
           (!w->l->pp_has_id ||
            (cl_read_ptr_or_0(w->t, pp) == id[0] && cl_read_ptr_or_0(w->t, pp + 8) == id[1])) &&
           add_pool(w, pp + w->l->pp_large_blocks, id) &&
           add_pool(w, pp + w->l->pp_large_blocks + w->l->bp_size, id);
}

static const struct pool *pool_of(const struct walk *w, uint64_t addr)
{
    for (size_t i = 0; i < w->npools; i++)
        if (w->pools[i].addr == addr)
            return &w->pools[i];
    return NULL;
}

static int by_addr(const void *a, const void *b)
{
    const struct cc_segment *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Every block found, chained into segments; false when a chain breaks or a block is in no pool,
 * or (w->oom) when an allocation fails. */
static bool build_segments(struct walk *w, struct cc_device *d)
{
    const struct cc_layout *l = w->l;
    struct cl_addrmap heads = {0};
    size_t block_cap = 0, segment_cap = 0;   /* d's arrays start empty */
    bool ok = true;
    for (size_t i = 0; ok && i < w->nfound; i++) {
        /* Every block of a chain is in a pool or the active set, so a chain has at most nfound
         * blocks: more steps back than that have gone round a cycle. */
        uint64_t head = w->found[i];
        size_t steps = 0;
        for (; steps <= w->nfound && cl_read_ptr_or_0(w->t, head + l->blk_prev); steps++)
            head = cl_read_ptr_or_0(w->t, head + l->blk_prev);
        if (steps > w->nfound) {
            ok = false;
            break;
        }
        bool inserted;
        if (cl_addrmap_put(&heads, head, 1, &inserted) == UINT32_MAX) {
            w->oom = true;
            ok = false;
            break;
        }
        if (!inserted)
            continue;
        const struct pool *pool = pool_of(w, cl_read_ptr_or_0(w->t, head + l->blk_pool));
        if (!pool) {
            ok = false;
            break;
        }
        struct cc_segment seg = {.addr = cl_read_ptr_or_0(w->t, head + l->blk_ptr),
                                 .first = d->nblocks,
                                 .stream = cl_read_ptr_or_0(w->t, head + l->blk_stream),
                                 .small = pool->small,
                                 .pool_id = {pool->id[0], pool->id[1]},
                                 .expandable =
                                     cl_read_ptr_or_0(w->t, head + l->blk_expandable) != 0};
        for (uint64_t b = head, prev = 0; b && ok;
             prev = b, b = cl_read_ptr_or_0(w->t, b + l->blk_next)) {
            uint64_t context = b + l->blk_context;
            struct cc_block blk = {.addr = b,
                                   .ptr = cl_read_ptr_or_0(w->t, b + l->blk_ptr),
                                   .size = cl_read_ptr_or_0(w->t, b + l->blk_size),
                                   .requested = cl_read_ptr_or_0(w->t, b + l->blk_requested),
                                   .context = cl_read_ptr_or_0(w->t, context),
                                   .segment_context =
                                       cl_read_ptr_or_0(w->t, context + CC_SEGMENT_CONTEXT_AFTER)};
            uint8_t flags[2] = {0, 1};
            /* stays {0, 1} (not allocated, mapped) when unreadable */
            (void)cl_read(w->t, b + l->blk_allocated, flags, sizeof flags);
            blk.state = !flags[1]                                     ? CC_UNMAPPED
                        : flags[0]                                    ? CC_ACTIVE_ALLOCATED
                        : cl_addrmap_get(&w->active, b) != UINT32_MAX ? CC_ACTIVE_PENDING_FREE
                                                                      : CC_INACTIVE;
            /* a chain links both ways, its blocks tile the segment and share its pool */
            if (cl_read_ptr_or_0(w->t, b + l->blk_prev) != prev || blk.ptr != seg.addr + seg.size ||
                cl_read_ptr_or_0(w->t, b + l->blk_pool) != pool->addr || flags[0] > 1 ||
                flags[1] > 1 || d->nblocks >= MAX_BLOCKS) {
                ok = false;
                break;
            }
            if (!CL_VEC_RESERVE(d->blocks, d->nblocks, block_cap)) {
                w->oom = true;
                ok = false;
                break;
            }
            d->blocks[d->nblocks++] = blk;
            seg.size += blk.size;
            seg.mapped += blk.state == CC_UNMAPPED ? 0 : blk.size;
            seg.nblocks++;
        }
        if (!ok)
            break;
        if (!CL_VEC_RESERVE(d->segments, d->nsegments, segment_cap)) {
            w->oom = true;
            ok = false;
            break;
        }
        d->segments[d->nsegments++] = seg;
    }
    cl_addrmap_free(&heads);
    return ok;
}

/* Segments in address order, blocks renumbered to follow them. */
static bool order_segments(struct cc_device *d)
{
    qsort(d->segments, d->nsegments, sizeof *d->segments, by_addr);
    struct cc_block *ordered = malloc((d->nblocks ? d->nblocks : 1) * sizeof *ordered);
    if (!ordered)
        return false;
    uint32_t n = 0;
    for (uint32_t s = 0; s < d->nsegments; s++) {
        memcpy(ordered + n, d->blocks + d->segments[s].first,
               d->segments[s].nblocks * sizeof *ordered);
        d->segments[s].first = n;
        n += d->segments[s].nblocks;
    }
    free(d->blocks);
    d->blocks = ordered;
    return true;
}

static int walk_device(struct walk *w, uint64_t dca, struct cc_device *d, struct cl_error *err)
{
    const struct cc_layout *l = w->l;
    static const uint64_t no_id[2];
    d->dca = dca;
    d->reserved = cl_read_ptr_or_0(w->t, dca + l->dca_reserved_bytes);
    d->allocated = cl_read_ptr_or_0(w->t, dca + l->dca_allocated_bytes);
    w->nfound = 0;
    w->npools = 0;
    w->oom = false;
    cl_addrmap_free(&w->active);
    bool ok = add_pool(w, dca + l->dca_large_blocks, no_id) &&
              add_pool(w, dca + l->dca_large_blocks + l->bp_size, no_id) && w->pools[1].small &&
              !w->pools[0].small && walk_ska(w, dca + l->dca_active_blocks, 16, visit_active) &&
              walk_ska(w, dca + l->dca_graph_pools, 32, visit_private_pool) && build_segments(w, d);
    if (w->oom)
        return cl_error_set(err, CL_E_INTERNAL,
                            "out of memory while walking the allocator of "
                            "device %d (%zu blocks found)",
                            d->index, w->nfound);
    uint64_t reserved = 0, allocated = 0; /* reserved_bytes counts mapped memory only */
    for (uint32_t i = 0; i < d->nsegments; i++)
        reserved += d->segments[i].mapped;
    for (uint32_t i = 0; i < d->nblocks; i++)
        allocated += d->blocks[i].state == CC_ACTIVE_ALLOCATED ? d->blocks[i].size : 0;
    if (!ok || reserved != d->reserved || allocated != d->allocated)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the allocator layout %s does not fit device "
                            "%d: the walk finds %llu bytes reserved and %llu allocated, the "
                            "allocator's own statistics say %llu and %llu%s",
                            l->name, d->index, (unsigned long long)reserved,
                            (unsigned long long)allocated, (unsigned long long)d->reserved,
                            (unsigned long long)d->allocated,
                            ok ? "" : " (and the pools or block chains do not hold together)");
    return order_segments(d) ? 0 : cl_error_set(err, CL_E_INTERNAL, "out of memory");
}

int cc_walk_object(struct cl_target *t, const struct cc_layout *l, uint64_t object,
                   struct cc_allocator *out, struct cl_error *err)
{
    out->l = l;
    out->object = object;
    struct walk *w = calloc(1, sizeof *w);
    if (!w)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    w->t = t;
    w->l = l;
    uint64_t vec = out->object + out->l->nca_device_allocator;
    uint64_t begin = cl_read_ptr_or_0(w->t, vec), end = cl_read_ptr_or_0(w->t, vec + CC_VECTOR_END);
    int rc = 0;
    /* CUDA's initialisation fills the device list before the first allocation; until then there
     * is nothing to walk, and an empty list would fit any layout. */
    if (begin == end && begin == 0)
        rc = cl_error_set(err, CL_E_UNSUPPORTED,
                          "the allocator has no devices (layout %s): CUDA "
                          "is not initialised in this process, or the layout does not fit",
                          out->l->name);
    else if (end < begin || (end - begin) / 8 > MAX_DEVICES || (end - begin) % 8)
        rc = cl_error_set(err, CL_E_UNSUPPORTED,
                          "the allocator layout %s does not fit: its "
                          "device list is not readable",
                          out->l->name);
    out->ndevices = rc ? 0 : (uint32_t)((end - begin) / 8);
    out->devices = rc ? NULL : calloc(out->ndevices ? out->ndevices : 1, sizeof *out->devices);
    if (!rc && !out->devices)
        rc = cl_error_set(err, CL_E_INTERNAL, "out of memory");
    for (uint32_t i = 0; !rc && i < out->ndevices; i++) {
        out->devices[i].index = (int)i;
        uint64_t dca = cl_read_ptr_or_0(w->t, begin + 8 * i);
        if (dca)
            rc = walk_device(w, dca, &out->devices[i], err);
    }
    free(w->found);
    cl_addrmap_free(&w->active);
    free(w);
    if (rc)
        free_devices(out);
    return rc;
}

/* l, or its variant for the other CUDA major (kept in out) when the build is one and l's
 * allocator embeds a cudaDeviceProp. */
static const struct cc_layout *for_cuda(const struct cc_layout *l, unsigned cuda_major,
                                        struct cc_allocator *out)
{
    if (!l->device_prop || cuda_major == l->cuda_major || (cuda_major != 12 && cuda_major != 13))
        return l;
    struct cc_layout *o = &out->other_cuda;
    int32_t by = cuda_major == 12 ? CC_CUDA12_DEVICE_PROP_GROWTH : -CC_CUDA12_DEVICE_PROP_GROWTH;
    *o = *l;
    o->cuda_major = cuda_major;
    o->dca_graph_pools += by; /* the members after the cudaDeviceProp */
    o->dca_trace_entries += by;
    o->dca_trace_next += by;
    o->dca_trace_max += by;
    return o;
}

/* No table for this torch version: the newest table the structure fits. */
static int walk_by_structure(struct cl_target *t, const char *version, unsigned cuda_major,
                             struct cc_allocator *out, struct cl_error *err)
{
    size_t n;
    const struct cc_layout *const *all = cc_layouts(&n);
    for (size_t i = n; i-- > 0;) {
        struct cl_error mismatch;
        int rc = cc_walk_object(t, for_cuda(all[i], cuda_major, out), out->object, out, &mismatch);
        if (rc == CL_E_INTERNAL) { /* out of memory: no answer from this or any other table */
            *err = mismatch;
            return rc;
        }
        if (rc == 0) {
            cl_note_add(&out->warnings,
                        "torch %s has no allocator layout of its own: layout %s "
                        "was used because the allocator's structure fits it (its statistics and "
                        "block chains check out)",
                        version, out->l->name);
            return 0;
        }
    }
    out->l = NULL;
    char names[256];
    return cl_error_set(err, CL_E_UNSUPPORTED,
                        "culeak has no caching-allocator layout for torch "
                        "%s, and none of its layouts (%s) fits this allocator's structure; "
                        "tensors are still reported by `tensors`",
                        version, cc_layout_names(names, sizeof names));
}

int cc_walk(struct cl_target *t, const struct cl_symbols *syms, const struct cl_torch_info *torch,
            const char *force, struct cc_allocator *out, struct cl_error *err)
{
    memset(out, 0, sizeof *out);
    const struct cl_module *c10 = cl_symbols_module_named(syms, "libc10_cuda");
    uint64_t root;
    if (!c10 ||
        !cl_module_symbol(c10, "_ZN3c104cuda20CUDACachingAllocator9allocatorE", &root, NULL))
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "no CUDA caching allocator in this process "
                            "(libc10_cuda.so is not loaded, or has no allocator symbol)");
    if (force && !(out->l = cc_layout_named(force)))
        return cl_error_set(err, CL_E_USAGE, "no allocator layout called '%s'", force);
    char cls[160];
    if (cl_read_u64(t, root, &out->object) || !out->object)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the CUDA allocator is not initialised yet "
                            "(no CUDA tensor has been made)");
    if (!cxx_class_name(t, out->object, cls, sizeof cls))
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the CUDA allocator object has no readable "
                            "class name");
    if (!strstr(cls, "NativeCachingAllocator"))
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the CUDA allocator backend is %s, not the "
                            "native caching allocator: only tensors can be reported",
                            strstr(cls, "CudaMallocAsync") ? "cudaMallocAsync" : cls);
    unsigned major = 0, minor = 0, cuda_major = 0;
    const char *version = torch->version[0] ? torch->version : "(unknown version)";
    if (!out->l && sscanf(torch->version, "%u.%u", &major, &minor) == 2)
        out->l = cc_layout_for(major, minor);
    sscanf(torch->cuda, "%u", &cuda_major);
    int rc = out->l ? cc_walk_object(t, for_cuda(out->l, cuda_major, out), out->object, out, err)
                    : walk_by_structure(t, version, cuda_major, out, err);
    if (rc)
        cc_free(out);
    else if (force)
        cl_note_add(&out->warnings,
                    "allocator layout %s forced by --allocator-layout (torch %s); "
                    "the allocator's structure fits it",
                    out->l->name, version);
    if (!rc && out->l == &out->other_cuda)
        cl_note_add(
            &out->warnings,
            "a CUDA %s build: layout %s was read off CUDA %u builds, and "
            "the places of the private-pool map and the trace ring are computed for CUDA %u (cudaDeviceProp's size "
            "differs by %d bytes), not read off such a wheel; the allocator's structure "
            "fits it",
            torch->cuda, out->l->name, cuda_major == 12 ? 13 : 12, cuda_major,
            CC_CUDA12_DEVICE_PROP_GROWTH);
    return rc;
}

void cc_free(struct cc_allocator *a)
{
    free_devices(a);
    for (uint32_t i = 0; i < a->nowners; i++)
        free(a->owners[i]);
    free(a->owners);
    for (uint32_t i = 0; i < a->npools; i++)
        free(a->pools[i].name);
    free(a->pools);
    free(a->warnings);
    memset(a, 0, sizeof *a);
}
