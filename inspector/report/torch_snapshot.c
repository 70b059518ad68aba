#include "report/torch_snapshot.h"

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

/* A recorded stack as torch symbolizes one. */
static void recorded_frames(struct cl_pickle *p, const struct cc_stacks *s,
                            const struct cc_stack *st)
{
    cl_pickle_list_begin(p);
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
    cl_pickle_list_end(p);
}

/* An allocated block's frames: every holder path of every storage in it, else what culeak
 * knows of why nothing names it. */
static void block_frames(struct cl_pickle *p, const struct cc_block *b, struct cl_block_storages *s,
                         const struct torch_tensors *tt, const struct cl_holders *hs)
{
    char text[CL_PATH_TEXT_CAP];
    size_t n = 0;
    uint32_t in_block =
        b->state == CC_ACTIVE_ALLOCATED ? cl_block_storages_in(s, b->ptr, b->size) : 0;
    cl_pickle_list_begin(p);
    for (uint32_t i = 0; i < in_block; i++) {
        const struct cl_storage_holders *sh = &hs->storages[s->found[i]];
        for (uint32_t h = 0; h < sh->n; h++, n++)
            frame(p, cl_path_text(sh->v[h].path, text));
        if (!sh->n && ++n)
            frame(p, cl_held_by_name(sh->held_by));
    }
    if (b->state == CC_ACTIVE_ALLOCATED && !n)
        frame(p, tt ? "no tensor culeak found (a custom op or library)" : "tensors not read");
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
    const struct cc_stack *st =
        m->stacks ? cc_stack_at(m->stacks, d->blocks[first].segment_context) : NULL;
    recorded_frames(p, m->stacks, st);
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
        st = m->stacks ? cc_stack_at(m->stacks, b->context) : NULL;
        cl_pickle_str(p, "frames");
        if (st) {   /* who allocated it as its frames, and who holds it beside them */
            recorded_frames(p, m->stacks, st);
            cl_pickle_str(p, "culeak_holders");
        }
        block_frames(p, b, s, m->tensors, m->holders);
        cl_pickle_dict_end(p);
    }
    cl_pickle_list_end(p);
    cl_pickle_dict_end(p);
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
    cl_pickle_str(&p, "device_traces");   /* no history: culeak reads state, not events */
    cl_pickle_list_begin(&p);
    for (int d = 0; d < devices && d < 64; d++) {
        cl_pickle_list_begin(&p);
        cl_pickle_list_end(&p);
    }
    cl_pickle_list_end(&p);
    cl_pickle_dict_end(&p);
    cl_pickle_end(&p);
    cl_block_storages_free(&storages);
    return 0;
}
