#include "report/torch_snapshot.h"

#include <stdlib.h>

#include "report/blocks.h"
#include "report/paths.h"
#include "report/pickle.h"

/* Named as torch names them (a block's "state"). */
static const char *state_name(enum cc_state s)
{
    switch (s) {
    case CC_ACTIVE_ALLOCATED: return "active_allocated";
    case CC_ACTIVE_PENDING_FREE: return "active_pending_free";
    case CC_INACTIVE: return "inactive";
    case CC_UNMAPPED: break;
    }
    return "unmapped";
}

static void frame(struct cl_pickle *p, const char *name)
{
    cl_pickle_dict_begin(p);
    cl_pickle_str(p, "filename");
    cl_pickle_str(p, "held by (culeak)");
    cl_pickle_str(p, "line");
    cl_pickle_int(p, 0);
    cl_pickle_str(p, "name");
    cl_pickle_str(p, name);
    cl_pickle_dict_end(p);
}

/* A recorded stack's frames as torch symbolizes them. */
static void recorded_frames(struct cl_pickle *p, const struct cc_stacks *s,
                            const struct cc_stack *st)
{
    for (uint32_t i = 0; st && i < st->n; i++) {
        const struct cc_frame *where = &s->sites[s->frames[st->first + i]];
        cl_pickle_dict_begin(p);
        cl_pickle_str(p, "filename");
        cl_pickle_str(p, where->file);
        cl_pickle_str(p, "line");
        cl_pickle_uint(p, (uint64_t)(int64_t)where->line);   /* torch's cast: -1 wraps too */
        cl_pickle_str(p, "name");
        cl_pickle_str(p, where->name);
        cl_pickle_dict_end(p);
    }
}

/* An allocated block's holder frames: every holder path of every storage in it, else its C++
 * owner, else what culeak knows of why nothing names it. */
static void holder_frames(struct cl_pickle *p, const struct cl_torch_snapshot_models *m,
                          const struct cc_block *b, struct cl_block_storages *s)
{
    const struct cl_holders *hs = m->holders;
    char text[CL_PATH_TEXT_CAP];
    size_t n = 0;
    uint32_t in_block =
        b->state == CC_ACTIVE_ALLOCATED ? cl_block_storages_in(s, b->ptr, b->size) : 0;
    for (uint32_t i = 0; i < in_block; i++) {
        const struct cl_storage_holders *sh = &hs->storages[s->found[i]];
        for (uint32_t h = 0; h < sh->n; h++, n++)
            frame(p, cl_path_text(sh->v[h].path, text));
        if (!sh->n && ++n)
            frame(p, cl_held_by_name(sh->held_by));
    }
    const char *owner = cl_block_owner(m->allocator, b);
    if (b->state == CC_ACTIVE_ALLOCATED && !n)
        frame(p, owner        ? owner
                 : m->tensors ? "no tensor culeak found (a custom op or library)"
                              : "tensors not read");
}

/* A block's or trace entry's frames as the viewers show them on hover: who holds it (the
 * block b, when it is allocated), then the stack recorded at context, innermost first. */
static void frames(struct cl_pickle *p, const struct cl_torch_snapshot_models *m,
                   struct cl_block_storages *s, const struct cc_block *b, uint64_t context)
{
    cl_pickle_list_begin(p);
    if (b)
        holder_frames(p, m, b, s);
    recorded_frames(p, m->stacks, m->stacks ? cc_stack_at(m->stacks, context) : NULL);
    cl_pickle_list_end(p);
}

static void key_uint(struct cl_pickle *p, const char *key, uint64_t v)
{
    cl_pickle_str(p, key);
    cl_pickle_uint(p, v);
}

/* One segment as torch shows it: blocks [first, end) of device d, which an expandable segment
 * has one run of per mapped range. */
static void segment(struct cl_pickle *p, const struct cc_device *d, const struct cc_segment *seg,
                    uint32_t first, uint32_t end, const struct cl_torch_snapshot_models *m,
                    struct cl_block_storages *s)
{
    uint64_t total = 0, allocated = 0, active = 0, requested = 0;
    for (uint32_t i = first; i < end; i++) {
        const struct cc_block *b = &d->blocks[i];
        bool is_active = b->state == CC_ACTIVE_ALLOCATED || b->state == CC_ACTIVE_PENDING_FREE;
        total += b->size;
        allocated += b->state == CC_ACTIVE_ALLOCATED ? b->size : 0;
        active += is_active ? b->size : 0;
        requested += is_active ? b->requested : 0;
    }
    cl_pickle_dict_begin(p);
    cl_pickle_str(p, "device");
    cl_pickle_int(p, d->index);
    key_uint(p, "address", d->blocks[first].ptr);
    key_uint(p, "total_size", total);
    key_uint(p, "allocated_size", allocated);
    key_uint(p, "active_size", active);
    key_uint(p, "requested_size", requested);
    key_uint(p, "stream", seg->stream);
    cl_pickle_str(p, "segment_type");
    cl_pickle_str(p, seg->small ? "small" : "large");
    cl_pickle_str(p, "segment_pool_id");
    cl_pickle_uint(p, seg->pool_id[0]);
    cl_pickle_uint(p, seg->pool_id[1]);
    cl_pickle_pair(p);
    cl_pickle_str(p, "is_expandable");
    cl_pickle_bool(p, seg->expandable);
    cl_pickle_str(p, "frames");   /* torch's are the first block's segment context too */
    frames(p, m, s, NULL, d->blocks[first].segment_context);
    cl_pickle_str(p, "blocks");
    cl_pickle_list_begin(p);
    for (uint32_t i = first; i < end; i++) {
        const struct cc_block *b = &d->blocks[i];
        cl_pickle_dict_begin(p);
        key_uint(p, "address", b->ptr);
        key_uint(p, "size", b->size);
        key_uint(p, "requested_size", b->requested);
        cl_pickle_str(p, "state");
        cl_pickle_str(p, state_name(b->state));
        cl_pickle_str(p, "frames");
        frames(p, m, s, b, b->context);
        cl_pickle_dict_end(p);
    }
    cl_pickle_list_end(p);
    cl_pickle_dict_end(p);
}

/* Which entries of a device's trace allocated a block still allocated, newest first: the last
 * allocation at the block's address with no free after it. Their hover then shows who holds
 * it. NULL when memory ran out. */
static const struct cc_block **live_allocations(const struct cc_device *d,
                                                const struct cc_device_trace *dt)
{
    const struct cc_block **live = calloc(dt->n ? dt->n : 1, sizeof *live);
    struct cl_addrmap allocated = {0}, done = {0};   /* block by ptr; addresses settled */
    bool inserted, ok = live != NULL;
    for (uint32_t i = 0; ok && dt->n && i < d->nblocks; i++)   /* (no trace: no entry to mark) */
        if (d->blocks[i].state == CC_ACTIVE_ALLOCATED)
            ok = cl_addrmap_put(&allocated, d->blocks[i].ptr, i, &inserted) != UINT32_MAX;
    for (uint32_t i = dt->n; ok && i-- > 0;) {
        const struct cc_trace_entry *e = &dt->v[i];
        bool alloc = e->action == CC_TRACE_ALLOC;
        if ((!alloc && e->action != CC_TRACE_FREE_REQUESTED &&
             e->action != CC_TRACE_FREE_COMPLETED) ||
            !e->addr)
            continue;
        if (cl_addrmap_get(&done, e->addr) == UINT32_MAX) {
            uint32_t b = alloc ? cl_addrmap_get(&allocated, e->addr) : UINT32_MAX;
            live[i] = b != UINT32_MAX ? &d->blocks[b] : NULL;
            ok = cl_addrmap_put(&done, e->addr, 1, &inserted) != UINT32_MAX;
        }
    }
    cl_addrmap_free(&allocated);
    cl_addrmap_free(&done);
    if (!ok) {
        free(live);
        return NULL;
    }
    return live;
}

/* Device di's trace entries, as torch's snapshot lists them (the keys of the newest torch that
 * the line records); false when memory ran out. */
static bool device_trace(struct cl_pickle *p, const struct cl_torch_snapshot_models *m, uint32_t di,
                         struct cl_block_storages *s)
{
    const struct cc_device_trace *dt = &m->trace->devices[di];
    const struct cc_layout *l = m->allocator->l;
    const struct cc_block **live = live_allocations(&m->allocator->devices[di], dt);
    if (!live)
        return false;
    for (uint32_t i = 0; i < dt->n; i++) {
        const struct cc_trace_entry *e = &dt->v[i];
        cl_pickle_dict_begin(p);
        cl_pickle_str(p, "action");
        cl_pickle_str(p, cc_trace_action_name(e->action));
        key_uint(p, e->action == CC_TRACE_OOM ? "device_free" : "addr", e->addr);
        cl_pickle_str(p, "size");
        cl_pickle_int(p, (int64_t)e->size);
        cl_pickle_str(p, "stream");
        cl_pickle_int(p, (int64_t)e->stream);
        if (m->trace->times) {
            cl_pickle_str(p, "time_us");
            cl_pickle_int(p, e->time_us);
        }
        if (e->compile_context != CC_TRACE_NO_TEXT) {
            cl_pickle_str(p, "compile_context");
            cl_pickle_str(p, m->trace->texts[e->compile_context]);
        }
        if (e->user_metadata != CC_TRACE_NO_TEXT) {
            cl_pickle_str(p, "user_metadata");
            cl_pickle_str(p, m->trace->texts[e->user_metadata]);
        }
        if (l->te_mempool) {
            cl_pickle_str(p, "pool_id");
            cl_pickle_uint(p, e->pool_id[0]);
            cl_pickle_uint(p, e->pool_id[1]);
            cl_pickle_pair(p);
        }
        if (e->context || live[i]) {
            cl_pickle_str(p, "frames");
            frames(p, m, s, live[i], e->context);
        }
        cl_pickle_dict_end(p);
    }
    free(live);
    return true;
}

int cl_torch_snapshot_write(FILE *out, const struct cl_torch_snapshot_models *m,
                            struct cl_error *err)
{
    const struct cc_allocator *a = m->allocator;
    struct cl_block_storages storages;
    if (!cl_block_storages_build(m->holders ? m->tensors : NULL, &storages))
        return cl_error_set(err, CL_E_INTERNAL, "out of memory indexing the storages");
    struct cl_pickle p;
    int devices = 0;
    bool oom = false;
    cl_pickle_begin(&p, out);
    cl_pickle_dict_begin(&p);
    cl_pickle_str(&p, "segments");
    cl_pickle_list_begin(&p);
    for (uint32_t di = 0; di < a->ndevices; di++) {
        const struct cc_device *d = &a->devices[di];
        devices = d->index >= devices ? d->index + 1 : devices;
        for (uint32_t s = 0; s < d->nsegments; s++) {
            const struct cc_segment *seg = &d->segments[s];
            uint32_t end = seg->first + seg->nblocks;
            for (uint32_t i = seg->first; i < end;) {   /* each run of mapped blocks */
                uint32_t run = i;
                while (run < end && d->blocks[run].state != CC_UNMAPPED)
                    run++;
                if (run > i)
                    segment(&p, d, seg, i, run, m, &storages);
                i = run + 1;
            }
        }
    }
    cl_pickle_list_end(&p);
    cl_pickle_str(&p, "device_traces");
    cl_pickle_list_begin(&p);
    for (int d = 0; d < devices && d < 64; d++) {
        cl_pickle_list_begin(&p);
        for (uint32_t di = 0; m->trace && di < m->trace->ndevices; di++)
            if (a->devices[di].index == d && !device_trace(&p, m, di, &storages))
                oom = true;
        cl_pickle_list_end(&p);
    }
    cl_pickle_list_end(&p);
    cl_pickle_dict_end(&p);
    cl_pickle_end(&p);
    cl_block_storages_free(&storages);
    return oom ? cl_error_set(err, CL_E_INTERNAL, "out of memory writing the trace") : 0;
}
