#include "report/blocks.h"

#include <string.h>

#include "report/json.h"
#include "report/paths.h"
#include "report/warnings.h"

static bool wanted(const struct cl_block_filter *f, enum cc_state st)
{
    bool active = st == CC_ACTIVE_ALLOCATED || st == CC_ACTIVE_PENDING_FREE;
    return f->state == 0 || (f->state == 1) == active;
}

bool cl_storage_in_block(const struct torch_storage *st, uint64_t ptr, uint64_t size)
{
    return st->device_type == 1 && st->data >= ptr && st->data < ptr + size;
}

/* Storages whose data lies in [ptr, ptr+size): their tensors, with paths. */
static unsigned block_tensors(FILE *out, struct cl_json *j, const struct torch_tensors *tt,
                              const struct cl_holders *hs, uint64_t ptr, uint64_t size)
{
    unsigned n = 0;
    for (uint32_t k = 0; tt && hs && k < tt->nstorages; k++) {
        const struct torch_storage *st = &tt->storages[k];
        if (!cl_storage_in_block(st, ptr, size))
            continue;
        for (uint32_t i = 0; i < st->ntensors; i++) {
            const struct torch_tensor *x = &tt->v[st->tensors[i]];
            const char *path = hs->tensor_paths[st->tensors[i]];
            const char *held_by = cl_held_by_name(hs->storages[k].held_by);
            bool has = path != NULL;
            n++;
            if (j) {
                cl_json_begin_object(j);
                cl_json_key(j, "address");
                cl_json_hex(j, x->pyobj ? x->pyobj : x->impl);
                cl_json_key(j, "paths");
                cl_json_begin_array(j);
                if (has)
                    cl_json_path(j, path);
                cl_json_end_array(j);
                cl_json_key(j, "steps");
                cl_json_begin_array(j);
                if (has)
                    cl_json_path_steps(j, path);
                cl_json_end_array(j);
                cl_json_key(j, "held_by");
                cl_json_string(j, held_by);
                cl_json_end_object(j);
            } else {
                char text[CL_PATH_TEXT_CAP];
                fprintf(out, "        tensor 0x%llx  %s\n",
                        (unsigned long long)(x->pyobj ? x->pyobj : x->impl),
                        has ? cl_path_text(path, text) : held_by);
            }
        }
    }
    return n;
}

uint64_t cl_blocks_unattributed(const struct torch_tensors *tt, const struct cc_device *d)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < d->nblocks; i++) {
        const struct cc_block *b = &d->blocks[i];
        bool held = false;
        for (uint32_t k = 0; tt && k < tt->nstorages && !held; k++)
            held = cl_storage_in_block(&tt->storages[k], b->ptr, b->size);
        if (b->state == CC_ACTIVE_ALLOCATED && !held)
            bytes += b->size;
    }
    return bytes;
}

/* How a segment is used: what is allocated, the largest free block, and the free bytes in
 * segments that live blocks share (inactive_split). A cudaMalloc'ed segment whose live blocks
 * fill less than an eighth of it is pinned by them: empty_cache() cannot give it back. */
struct usage {
    uint64_t allocated, largest_free, inactive_split;
    bool pinned;
};

static struct usage segment_usage(const struct cc_device *d, const struct cc_segment *seg)
{
    struct usage u = {0};
    uint64_t free_bytes = 0;
    for (uint32_t i = seg->first; i < seg->first + seg->nblocks; i++) {
        const struct cc_block *b = &d->blocks[i];
        if (b->state == CC_ACTIVE_ALLOCATED)
            u.allocated += b->size;
        if (b->state == CC_INACTIVE) {
            free_bytes += b->size;
            if (b->size > u.largest_free)
                u.largest_free = b->size;
        }
    }
    u.inactive_split = u.allocated ? free_bytes : 0;
    /* an expandable segment gives back its free pages, so live blocks pin only their own */
    u.pinned = u.allocated && u.allocated * 8 < seg->mapped && !seg->expandable;
    return u;
}

void cl_report_blocks(FILE *out, const struct cc_allocator *a, const struct torch_tensors *tt,
                      const struct cl_holders *hs, const struct cl_block_filter *f, bool json,
                      const struct cl_report_notes *w)
{
    struct cl_json j;
    if (json) {
        cl_json_begin_document(&j, out);
        cl_json_key(&j, "devices");
        cl_json_begin_array(&j);
    }
    for (uint32_t di = 0; di < a->ndevices; di++) {
        const struct cc_device *d = &a->devices[di];
        if (f->device >= 0 && d->index != f->device)
            continue;
        if (json) {
            cl_json_begin_object(&j);
            cl_json_key(&j, "device");
            cl_json_int(&j, d->index);
            cl_json_key(&j, "reserved");
            cl_json_int(&j, (long long)d->reserved);
            cl_json_key(&j, "allocated");
            cl_json_int(&j, (long long)d->allocated);
            cl_json_key(&j, "segments");
            cl_json_begin_array(&j);
        } else {
            fprintf(out, "device %d: %llu bytes reserved, %llu allocated, %u segments\n", d->index,
                    (unsigned long long)d->reserved, (unsigned long long)d->allocated,
                    d->nsegments);
        }
        for (uint32_t si = 0; si < d->nsegments; si++) {
            const struct cc_segment *seg = &d->segments[si];
            struct usage u = segment_usage(d, seg);
            if (json) {
                cl_json_begin_object(&j);
                cl_json_key(&j, "address");
                cl_json_hex(&j, seg->addr);
                cl_json_key(&j, "size");
                cl_json_int(&j, (long long)seg->size);
                cl_json_key(&j, "stream");
                cl_json_hex(&j, seg->stream);
                cl_json_key(&j, "pool");
                cl_json_string(&j, seg->small ? "small" : "large");
                cl_json_key(&j, "pool_id");
                cl_json_begin_array(&j);
                cl_json_int(&j, (long long)seg->pool_id[0]);
                cl_json_int(&j, (long long)seg->pool_id[1]);
                cl_json_end_array(&j);
                cl_json_key(&j, "expandable");
                cl_json_bool(&j, seg->expandable);
                cl_json_key(&j, "mapped");
                cl_json_int(&j, (long long)seg->mapped);
                cl_json_key(&j, "allocated_size");
                cl_json_int(&j, (long long)u.allocated);
                cl_json_key(&j, "largest_free");
                cl_json_int(&j, (long long)u.largest_free);
                cl_json_key(&j, "inactive_split");
                cl_json_int(&j, (long long)u.inactive_split);
                cl_json_key(&j, "pinned");
                cl_json_bool(&j, u.pinned);
                cl_json_key(&j, "blocks");
                cl_json_begin_array(&j);
            } else {
                char pool[64] = "", expandable[80] = "";
                if (seg->pool_id[0] || seg->pool_id[1])
                    snprintf(pool, sizeof pool, " of private pool (%llu, %llu)",
                             (unsigned long long)seg->pool_id[0],
                             (unsigned long long)seg->pool_id[1]);
                if (seg->expandable)
                    snprintf(expandable, sizeof expandable, "  expandable, %llu bytes mapped",
                             (unsigned long long)seg->mapped);
                fprintf(out,
                        "  segment 0x%llx  %llu bytes  %s pool%s  stream 0x%llx%s\n"
                        "    %llu allocated, largest free block %llu, %llu free but split%s\n",
                        (unsigned long long)seg->addr, (unsigned long long)seg->size,
                        seg->small ? "small" : "large", pool, (unsigned long long)seg->stream,
                        expandable, (unsigned long long)u.allocated,
                        (unsigned long long)u.largest_free, (unsigned long long)u.inactive_split,
                        u.pinned ? "; pinned: its few live blocks keep the whole segment reserved"
                                 : "");
            }
            for (uint32_t bi = seg->first; bi < seg->first + seg->nblocks; bi++) {
                const struct cc_block *b = &d->blocks[bi];
                if (!wanted(f, b->state))
                    continue;
                if (json) {
                    cl_json_begin_object(&j);
                    cl_json_key(&j, "address");
                    cl_json_hex(&j, b->ptr);
                    cl_json_key(&j, "size");
                    cl_json_int(&j, (long long)b->size);
                    cl_json_key(&j, "requested_size");
                    cl_json_int(&j, (long long)b->requested);
                    cl_json_key(&j, "state");
                    cl_json_string(&j, cc_state_name(b->state));
                    cl_json_key(&j, "tensors");
                    cl_json_begin_array(&j);
                    unsigned n = b->state == CC_ACTIVE_ALLOCATED
                                     ? block_tensors(out, &j, tt, hs, b->ptr, b->size)
                                     : 0;
                    cl_json_end_array(&j);
                    cl_json_key(&j, "unattributed");   /* unknown without the tensors */
                    if (tt)
                        cl_json_bool(&j, b->state == CC_ACTIVE_ALLOCATED && n == 0);
                    else
                        cl_json_null(&j);
                    cl_json_end_object(&j);
                } else {
                    fprintf(out, "    block 0x%llx  %llu bytes  %s\n", (unsigned long long)b->ptr,
                            (unsigned long long)b->size, cc_state_name(b->state));
                    if (tt && b->state == CC_ACTIVE_ALLOCATED &&
                        block_tensors(out, NULL, tt, hs, b->ptr, b->size) == 0)
                        fprintf(out, "        unattributed: no tensor known from Python or the "
                                     "autograd graph holds it\n");
                }
            }
            if (json) {
                cl_json_end_array(&j);
                cl_json_end_object(&j);
            }
        }
        if (json) {
            cl_json_end_array(&j);
            cl_json_end_object(&j);
        }
    }
    if (json) {
        cl_json_end_array(&j);
        cl_report_json_end(out, &j, w);
    } else {
        cl_report_warnings(out, NULL, w, "warning: ");
    }
}
