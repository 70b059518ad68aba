#include "report/blocks.h"

#include <stdlib.h>
#include <string.h>

#include "cudacache/mempools.h"
#include "report/json.h"
#include "report/paths.h"
#include "util/bsearch.h"
#include "util/vec.h"
#include "report/text.h"

/* ---- CUDA storages by data pointer ---- */

static int by_data(const void *a, const void *b, void *tt)
{
    const struct torch_storage *s = ((const struct torch_tensors *)tt)->storages;
    uint64_t x = s[*(const uint32_t *)a].data, y = s[*(const uint32_t *)b].data;
    return x < y ? -1 : x > y;
}

bool cl_block_storages_build(const struct torch_tensors *tt, struct cl_block_storages *out)
{
    *out = (struct cl_block_storages){.tt = tt};
    uint32_t n = tt ? tt->nstorages : 0;
    if (!n)
        return true;
    out->by_data = malloc(n * sizeof *out->by_data);
    out->found = malloc(n * sizeof *out->found);
    if (!out->by_data || !out->found) {
        cl_block_storages_free(out);
        return false;
    }
    for (uint32_t k = 0; k < n; k++)
        if (tt->storages[k].device_type == TORCH_DEVICE_CUDA)
            out->by_data[out->n++] = k;
    qsort_r(out->by_data, out->n, sizeof *out->by_data, by_data, (void *)tt);
    return true;
}

void cl_block_storages_free(struct cl_block_storages *s)
{
    free(s->by_data);
    free(s->found);
    memset(s, 0, sizeof *s);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

struct data_below {
    const struct cl_block_storages *s;
    uint64_t addr;
};

static bool data_below(size_t i, const void *ctx)
{
    const struct data_below *q = ctx;
    return q->s->tt->storages[q->s->by_data[i]].data < q->addr;
}

uint32_t cl_block_storages_in(struct cl_block_storages *s, uint64_t ptr, uint64_t size)
{
    struct data_below lo = {s, ptr}, hi = {s, ptr + size};
    size_t first = cl_partition_point(s->n, data_below, &lo);
    size_t end = ptr + size > ptr ? cl_partition_point(s->n, data_below, &hi) : first;
    if (end > first) {
        memcpy(s->found, s->by_data + first, (end - first) * sizeof *s->found);
        qsort(s->found, end - first, sizeof *s->found, cmp_u32);
    }
    return (uint32_t)(end - first);
}

void cl_blocks_unheld(struct cl_block_storages *s, const struct cc_device *d,
                      struct cl_blocks_unheld *out)
{
    *out = (struct cl_blocks_unheld){0};
    for (uint32_t i = 0; i < d->nblocks; i++) {
        const struct cc_block *b = &d->blocks[i];
        if (b->state != CC_ACTIVE_ALLOCATED || cl_block_storages_in(s, b->ptr, b->size))
            continue;
        if (b->owner) {
            out->owned += b->size;
            out->nowned++;
        } else {
            out->unattributed += b->size;
        }
    }
}

const char *cl_block_owner(const struct cc_allocator *a, const struct cc_block *b)
{
    return a && b->owner && b->owner <= a->nowners ? a->owners[b->owner - 1] : NULL;
}

/* ---- the rows ---- */

static bool wanted(const struct cl_block_filter *f, enum cc_state st)
{
    bool active = st == CC_ACTIVE_ALLOCATED || st == CC_ACTIVE_PENDING_FREE;
    return f->state == CL_BLOCKS_ALL || (f->state == CL_BLOCKS_ALLOCATED) == active;
}

/* How a segment is used. A cudaMalloc'ed segment whose live blocks fill less than an eighth of it
 * is pinned by them: empty_cache() cannot give it back; an expandable segment gives back its free
 * pages, so live blocks pin only their own. */
static void segment_usage(const struct cc_device *d, struct cl_segment_row *row)
{
    const struct cc_segment *seg = row->segment;
    uint64_t free_bytes = 0;
    for (uint32_t i = seg->first; i < seg->first + seg->nblocks; i++) {
        const struct cc_block *b = &d->blocks[i];
        if (b->state == CC_ACTIVE_ALLOCATED)
            row->allocated += b->size;
        if (b->state == CC_INACTIVE) {
            free_bytes += b->size;
            if (b->size > row->largest_free)
                row->largest_free = b->size;
        }
    }
    row->inactive_split = row->allocated ? free_bytes : 0;
    row->pinned = row->allocated && row->allocated * 8 < seg->mapped && !seg->expandable;
}

/* The array capacities while building. */
struct caps {
    size_t devices, segments, blocks, tensors;
};

/* The tensors of an allocated block's storages, in storage order, with what holds each. */
static bool block_tensors(struct cl_blocks_report *r, struct caps *cap, struct cl_block_storages *s,
                          const struct cl_holders *hs, struct cl_block_row *row)
{
    const struct cc_block *b = row->block;
    row->first_tensor = r->ntensors;
    uint32_t n = cl_block_storages_in(s, b->ptr, b->size);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = s->found[i];
        const struct torch_storage *st = &s->tt->storages[k];
        for (uint32_t t = 0; t < st->ntensors; t++) {
            const struct torch_tensor *x = &s->tt->v[st->tensors[t]];
            if (!CL_VEC_RESERVE(r->tensors, r->ntensors, cap->tensors))
                return false;
            r->tensors[r->ntensors++] = (struct cl_block_tensor_row){
                x->pyobj ? x->pyobj : x->impl, hs->tensor_paths[st->tensors[t]],
                cl_held_by_name(hs->storages[k].held_by)};
        }
    }
    row->ntensors = r->ntensors - row->first_tensor;
    return true;
}

static bool add_segment(struct cl_blocks_report *r, struct caps *cap, struct cl_block_storages *s,
                        const struct cl_holders *hs, const struct cl_block_filter *f,
                        const struct cc_device *d, const struct cc_segment *seg)
{
    if (!CL_VEC_RESERVE(r->segments, r->nsegments, cap->segments))
        return false;
    struct cl_segment_row *row = &r->segments[r->nsegments++];
    *row = (struct cl_segment_row){.segment = seg,
                                   .pool_owner = cc_pool_owner(r->allocator, seg->pool_id),
                                   .first_block = r->nblocks};
    segment_usage(d, row);
    for (uint32_t i = seg->first; i < seg->first + seg->nblocks; i++) {
        if (!wanted(f, d->blocks[i].state))
            continue;
        if (!CL_VEC_RESERVE(r->blocks, r->nblocks, cap->blocks))
            return false;
        struct cl_block_row *b = &r->blocks[r->nblocks++];
        *b = (struct cl_block_row){.block = &d->blocks[i], .first_tensor = r->ntensors};
        if (r->tensors_known && b->block->state == CC_ACTIVE_ALLOCATED &&
            !block_tensors(r, cap, s, hs, b))
            return false;
    }
    row->nblocks = r->nblocks - row->first_block;
    return true;
}

int cl_blocks_report_build(const struct cc_allocator *a, const struct torch_tensors *tt,
                           const struct cl_holders *hs, const struct cl_block_filter *f,
                           struct cl_blocks_report *out, struct cl_error *err)
{
    memset(out, 0, sizeof *out);
    out->tensors_known = tt && hs;
    out->allocator = a;
    struct cl_block_storages s;
    struct caps cap = {0};
    bool ok = cl_block_storages_build(out->tensors_known ? tt : NULL, &s);
    for (uint32_t di = 0; ok && di < a->ndevices; di++) {
        const struct cc_device *d = &a->devices[di];
        if (f->device >= 0 && d->index != f->device)
            continue;
        ok = CL_VEC_RESERVE(out->devices, out->ndevices, cap.devices);
        if (!ok)
            break;
        struct cl_device_row *row = &out->devices[out->ndevices++];
        *row = (struct cl_device_row){.device = d, .first_segment = out->nsegments};
        for (uint32_t si = 0; ok && si < d->nsegments; si++)
            ok = add_segment(out, &cap, &s, hs, f, d, &d->segments[si]);
        row->nsegments = out->nsegments - row->first_segment;
    }
    cl_block_storages_free(&s);
    if (ok)
        return 0;
    cl_blocks_report_free(out);
    return cl_error_set(err, CL_E_INTERNAL, "out of memory listing the allocator's blocks");
}

void cl_blocks_report_free(struct cl_blocks_report *r)
{
    free(r->devices);
    free(r->segments);
    free(r->blocks);
    free(r->tensors);
    memset(r, 0, sizeof *r);
}

bool cl_block_unattributed(const struct cl_blocks_report *r, const struct cl_block_row *b)
{
    return r->tensors_known && b->block->state == CC_ACTIVE_ALLOCATED && b->ntensors == 0 &&
           !cl_block_owner(r->allocator, b->block);
}

/* ---- text ---- */

static void segment_text(FILE *out, const struct cl_segment_row *row)
{
    const struct cc_segment *seg = row->segment;
    char pool[1200] = "", expandable[80] = "", size[CL_BYTES_TEXT], allocated[CL_BYTES_TEXT],
         largest[CL_BYTES_TEXT], split[CL_BYTES_TEXT], mapped[CL_BYTES_TEXT];
    if (seg->pool_id[0] || seg->pool_id[1])
        snprintf(pool, sizeof pool, " of private pool (%llu, %llu)%s%s",
                 (unsigned long long)seg->pool_id[0], (unsigned long long)seg->pool_id[1],
                 row->pool_owner ? ", " : "", row->pool_owner ? row->pool_owner : "");
    cl_bytes_text(mapped, sizeof mapped, seg->mapped);
    if (seg->expandable)
        snprintf(expandable, sizeof expandable, "  expandable, %s mapped", mapped);
    cl_bytes_text(size, sizeof size, seg->size);
    cl_bytes_text(allocated, sizeof allocated, row->allocated);
    cl_bytes_text(largest, sizeof largest, row->largest_free);
    cl_bytes_text(split, sizeof split, row->inactive_split);
    fprintf(out,
            "  segment 0x%llx  %s  %s pool%s  stream 0x%llx%s\n"
            "    %s allocated, largest free block %s, %s free but split%s\n",
            (unsigned long long)seg->addr, size, seg->small ? "small" : "large", pool,
            (unsigned long long)seg->stream, expandable, allocated, largest, split,
            row->pinned ? "; pinned: its few live blocks keep the whole segment reserved" : "");
}

static void block_text(FILE *out, const struct cl_blocks_report *r, const struct cl_block_row *b)
{
    char size[CL_BYTES_TEXT];
    cl_bytes_text(size, sizeof size, b->block->size);
    fprintf(out, "    block 0x%llx  %s  %s\n", (unsigned long long)b->block->ptr, size,
            cc_state_name(b->block->state));
    for (uint32_t t = b->first_tensor; t < b->first_tensor + b->ntensors; t++) {
        const struct cl_block_tensor_row *x = &r->tensors[t];
        char text[CL_PATH_TEXT_CAP];
        fprintf(out, "        tensor 0x%llx  %s\n", (unsigned long long)x->address,
                x->path ? cl_path_text(x->path, text) : x->held_by);
    }
    const char *owner = b->ntensors ? NULL : cl_block_owner(r->allocator, b->block);
    if (owner)
        fprintf(out, "        held by %s\n", owner);
    if (cl_block_unattributed(r, b))
        fprintf(out, "        unattributed: no tensor known from Python or the "
                     "autograd graph holds it\n");
}

void cl_blocks_write_text(FILE *out, const struct cl_blocks_report *r,
                          const struct cl_report_notes *w)
{
    for (uint32_t di = 0; di < r->ndevices; di++) {
        const struct cl_device_row *dr = &r->devices[di];
        const struct cc_device *d = dr->device;
        char reserved[CL_BYTES_TEXT], allocated[CL_BYTES_TEXT];
        cl_bytes_text(reserved, sizeof reserved, d->reserved);
        cl_bytes_text(allocated, sizeof allocated, d->allocated);
        fprintf(out, "device %d: %s reserved, %s allocated, %u segments\n", d->index, reserved,
                allocated, dr->nsegments);
        for (uint32_t si = dr->first_segment; si < dr->first_segment + dr->nsegments; si++) {
            const struct cl_segment_row *sr = &r->segments[si];
            segment_text(out, sr);
            for (uint32_t bi = sr->first_block; bi < sr->first_block + sr->nblocks; bi++)
                block_text(out, r, &r->blocks[bi]);
        }
    }
    cl_report_warnings(out, NULL, w, "warning: ");
}

/* ---- JSON ---- */

static void segment_json(struct cl_json *j, const struct cl_segment_row *row)
{
    const struct cc_segment *seg = row->segment;
    cl_json_key(j, "address");
    cl_json_hex(j, seg->addr);
    cl_json_key(j, "size");
    cl_json_int(j, (long long)seg->size);
    cl_json_key(j, "stream");
    cl_json_hex(j, seg->stream);
    cl_json_key(j, "pool");
    cl_json_string(j, seg->small ? "small" : "large");
    cl_json_key(j, "pool_id");
    cl_json_pool_id(j, seg->pool_id);
    cl_json_key(j, "pool_owner");
    cl_json_string(j, row->pool_owner);   /* null for none */
    cl_json_key(j, "expandable");
    cl_json_bool(j, seg->expandable);
    cl_json_key(j, "mapped");
    cl_json_int(j, (long long)seg->mapped);
    cl_json_key(j, "allocated_size");
    cl_json_int(j, (long long)row->allocated);
    cl_json_key(j, "largest_free");
    cl_json_int(j, (long long)row->largest_free);
    cl_json_key(j, "inactive_split");
    cl_json_int(j, (long long)row->inactive_split);
    cl_json_key(j, "pinned");
    cl_json_bool(j, row->pinned);
}

static void tensor_json(struct cl_json *j, const struct cl_block_tensor_row *x)
{
    cl_json_begin_object(j);
    cl_json_key(j, "address");
    cl_json_hex(j, x->address);
    cl_json_key(j, "paths");
    cl_json_begin_array(j);
    if (x->path)
        cl_json_path(j, x->path);
    cl_json_end_array(j);
    cl_json_key(j, "steps");
    cl_json_begin_array(j);
    if (x->path)
        cl_json_path_steps(j, x->path);
    cl_json_end_array(j);
    cl_json_key(j, "held_by");
    cl_json_string(j, x->held_by);
    cl_json_end_object(j);
}

static void block_json(struct cl_json *j, const struct cl_blocks_report *r,
                       const struct cl_block_row *b)
{
    cl_json_begin_object(j);
    cl_json_key(j, "address");
    cl_json_hex(j, b->block->ptr);
    cl_json_key(j, "size");
    cl_json_int(j, (long long)b->block->size);
    cl_json_key(j, "requested_size");
    cl_json_int(j, (long long)b->block->requested);
    cl_json_key(j, "state");
    cl_json_string(j, cc_state_name(b->block->state));
    cl_json_key(j, "tensors");
    cl_json_begin_array(j);
    for (uint32_t t = b->first_tensor; t < b->first_tensor + b->ntensors; t++)
        tensor_json(j, &r->tensors[t]);
    cl_json_end_array(j);
    cl_json_key(j, "unattributed");   /* unknown without the tensors */
    if (r->tensors_known)
        cl_json_bool(j, cl_block_unattributed(r, b));
    else
        cl_json_null(j);
    cl_json_key(j, "owner");   /* null for none */
    cl_json_string(j, b->ntensors ? NULL : cl_block_owner(r->allocator, b->block));
    cl_json_end_object(j);
}

void cl_blocks_write_json(FILE *out, const struct cl_blocks_report *r,
                          const struct cl_report_notes *w)
{
    struct cl_json j;
    cl_json_begin_document(&j, out);
    cl_json_key(&j, "devices");
    cl_json_begin_array(&j);
    for (uint32_t di = 0; di < r->ndevices; di++) {
        const struct cl_device_row *dr = &r->devices[di];
        cl_json_begin_object(&j);
        cl_json_key(&j, "device");
        cl_json_int(&j, dr->device->index);
        cl_json_key(&j, "reserved");
        cl_json_int(&j, (long long)dr->device->reserved);
        cl_json_key(&j, "allocated");
        cl_json_int(&j, (long long)dr->device->allocated);
        cl_json_key(&j, "segments");
        cl_json_begin_array(&j);
        for (uint32_t si = dr->first_segment; si < dr->first_segment + dr->nsegments; si++) {
            const struct cl_segment_row *sr = &r->segments[si];
            cl_json_begin_object(&j);
            segment_json(&j, sr);
            cl_json_key(&j, "blocks");
            cl_json_begin_array(&j);
            for (uint32_t bi = sr->first_block; bi < sr->first_block + sr->nblocks; bi++)
                block_json(&j, r, &r->blocks[bi]);
            cl_json_end_array(&j);
            cl_json_end_object(&j);
        }
        cl_json_end_array(&j);
        cl_json_end_object(&j);
    }
    cl_json_end_array(&j);
    cl_report_json_end(out, &j, w);
}

int cl_report_blocks(FILE *out, const struct cc_allocator *a, const struct torch_tensors *tt,
                     const struct cl_holders *hs, const struct cl_block_filter *f, bool json,
                     const struct cl_report_notes *w, struct cl_error *err)
{
    struct cl_blocks_report r;
    int rc = cl_blocks_report_build(a, tt, hs, f, &r, err);
    if (rc)
        return rc;
    if (json)
        cl_blocks_write_json(out, &r, w);
    else
        cl_blocks_write_text(out, &r, w);
    cl_blocks_report_free(&r);
    return 0;
}
