#include "report/tensors.h"

#include <stdlib.h>
#include <string.h>

#include "report/blocks.h"
#include "report/json.h"
#include "report/paths.h"
#include "report/warnings.h"
#include "util/error.h"
#include "util/text.h"
#include "util/vec.h"

void cl_device_text(char *out, size_t cap, int8_t type, int8_t index)
{
    if (index >= 0 && type != 0)
        snprintf(out, cap, "%s:%d", torch_device_name(type), index);
    else
        (void)cl_copy_span(out, cap, torch_device_name(type), SIZE_MAX);
}

static void shape_text(char *out, size_t cap, const struct torch_tensors *tt,
                       const struct torch_tensor *x)
{
    size_t len = 0;
    bool fits = cl_append(out, cap, &len, "[");
    for (int d = 0; fits && d < torch_shown_dims(x); d++)
        fits = cl_append(out, cap, &len, d ? ", " : "") &&
               cl_append_int(out, cap, &len, torch_sizes(tt, x)[d]);
    if (fits && x->ndim > TORCH_MAX_DIMS)
        fits = cl_append(out, cap, &len, ", ...");
    if (fits)
        cl_append(out, cap, &len, "]");
}

static const char *type_name(struct py_heap *h, const struct torch_tensor *x)
{
    static const char *const cxx[] = {
        [TORCH_FROM_SAVED] = "c++ tensor (saved for backward)",
        [TORCH_FROM_GRAD] = "c++ tensor (.grad, no Python object yet)",
        [TORCH_FROM_VARIABLE] = "c++ tensor (an AccumulateGrad's leaf)",
        [TORCH_FROM_VIEW_BASE] = "c++ tensor (a view's base)",
    };
    if (!x->pyobj)
        return x->origin < sizeof cxx / sizeof *cxx && cxx[x->origin] ? cxx[x->origin]
                                                                      : "c++ tensor";
    return x->node < h->n ? py_node_type(h, x->node)->name : "?";
}

/* The autograd graphs as culeak read them: every node with its next nodes (in next_edges_
 * order), the storages its SavedVariables hold (a custom Function's through its ctx) and an
 * AccumulateGrad's variable, so tests can compare them with next_functions and _saved_*. */
static void node_refs_json(struct cl_json *j, const struct torch_tensors *tt, enum torch_end end,
                           uint32_t src, enum torch_link_kind kind)
{
    size_t n;
    const struct torch_link *from = torch_links_from(tt, end, src, &n);
    for (const struct torch_link *l = from; l < from + n; l++) {
        if (l->kind != kind)
            continue;
        if (kind == TORCH_LINK_NEXT)
            cl_json_int(j, l->dst);
        else if (kind == TORCH_LINK_CONTEXT)
            node_refs_json(j, tt, TORCH_END_PYOBJ, l->dst, TORCH_LINK_SAVED);
        else if (tt->v[l->dst].storage_index != UINT32_MAX)
            cl_json_hex(j, tt->storages[tt->v[l->dst].storage_index].data);
    }
}

static void autograd_json(struct cl_json *j, const struct torch_tensors *tt)
{
    static const struct {
        const char *key;
        enum torch_link_kind kind;
    } lists[] = {
        {"next", TORCH_LINK_NEXT}, {"saved", TORCH_LINK_SAVED}, {"variable", TORCH_LINK_VARIABLE}};
    cl_json_key(j, "autograd");
    cl_json_begin_object(j);
    cl_json_key(j, "layout");
    cl_json_string(j, tt->autograd ? tt->autograd->name : NULL);
    cl_json_key(j, "nodes");
    cl_json_begin_array(j);
    for (uint32_t g = 0; g < tt->nnodes; g++) {
        cl_json_begin_object(j);
        cl_json_key(j, "address");
        cl_json_hex(j, tt->nodes[g].addr);
        cl_json_key(j, "class");
        cl_json_string(j, torch_node_name(tt, g));
        for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
            cl_json_key(j, lists[i].key);
            cl_json_begin_array(j);
            node_refs_json(j, tt, TORCH_END_NODE, g, lists[i].kind);
            if (lists[i].kind == TORCH_LINK_SAVED)
                node_refs_json(j, tt, TORCH_END_NODE, g, TORCH_LINK_CONTEXT);
            cl_json_end_array(j);
        }
        cl_json_end_object(j);
    }
    cl_json_end_array(j);
    cl_json_end_object(j);
}

#define TEXT_HOLDERS 8   /* holders listed per storage in text; --json lists them all */

/* A storage's holders: each one's path, then what dropping the holder (the path's first step,
 * `__main__.history` of `__main__.history[17].grad_fn ...`) frees and what it reaches on the
 * storage's device: the holder's bytes, not the path's last object's. */
static void holders_text(FILE *out, const struct cl_holders *hs,
                         const struct cl_storage_holders *sh, int dev, size_t width)
{
    char line[CL_PATH_TEXT_CAP + 64], name[CL_PATH_TEXT_CAP];
    for (uint32_t k = 0; k < sh->n && k < TEXT_HOLDERS; k++) {
        const struct cl_holder *hd = &hs->v[sh->v[k].holder];
        cl_text_path_line(out, "  holder ", sh->v[k].path, width);
        size_t len = 0;
        cl_append(line, sizeof line, &len, "      ");
        cl_append(line, sizeof line, &len, cl_path_text(hd->name, name));
        cl_append(line, sizeof line, &len, " retains ");
        cl_append_uint(line, sizeof line, &len, dev >= 0 ? hd->retained[dev] : 0);
        cl_append(line, sizeof line, &len, ", reaches ");
        cl_append_uint(line, sizeof line, &len, dev >= 0 ? hd->reachable[dev] : 0);
        cl_append(line, sizeof line, &len, " bytes");
        cl_text_line(out, line, width);
    }
    if (sh->n > TEXT_HOLDERS)
        fprintf(out, "  ... and %u more holders (--json lists them all)\n", sh->n - TEXT_HOLDERS);
}

static void holders_json(struct cl_json *j, struct py_heap *h, const struct cl_holders *hs,
                         const struct cl_storage_holders *sh, int dev)
{
    cl_json_key(j, "holders");
    cl_json_begin_array(j);
    for (uint32_t k = 0; k < sh->n; k++) {
        const struct cl_holder *hd = &hs->v[sh->v[k].holder];
        cl_json_begin_object(j);
        cl_json_key(j, "root");
        cl_json_string(j, h->roots[hd->root]);
        cl_json_key(j, "holder");
        cl_json_path(j, hd->name);
        cl_json_key(j, "path");
        cl_json_path(j, sh->v[k].path);
        cl_json_key(j, "steps");
        cl_json_path_steps(j, sh->v[k].path);
        cl_json_key(j, "via_autograd");
        cl_json_bool(j, sh->v[k].via_autograd);
        cl_json_key(j, "retained_bytes");
        cl_json_int(j, dev >= 0 ? (long long)hd->retained[dev] : 0);
        cl_json_key(j, "reachable_bytes");
        cl_json_int(j, dev >= 0 ? (long long)hd->reachable[dev] : 0);
        cl_json_end_object(j);
    }
    cl_json_end_array(j);
}

static bool selected(const struct torch_storage *st, const struct cl_tensor_filter *f)
{
    return !f || ((f->device < 0 || st->device_type == f->device) &&
                  (!f->by_index || st->device_index == f->index) && st->nbytes >= f->min_bytes);
}

void cl_report_tensors(FILE *out, struct py_heap *h, const struct torch_tensors *tt,
                       const struct cl_holders *hs, const struct cl_tensor_filter *f,
                       const struct cl_text_options *opt, bool json,
                       const struct cl_report_notes *w)
{
    char dev[32], shape[256], line[1024];
    struct cl_json j;
    if (json) {
        cl_json_begin_document(&j, out);
        cl_json_key(&j, "tensors");
        cl_json_begin_array(&j);
    }
    uint64_t shown = 0, bytes = 0;
    for (uint32_t s = 0; s < tt->nstorages; s++) {
        const struct torch_storage *st = &tt->storages[s];
        if (!selected(st, f))
            continue;
        shown++;
        bytes += st->nbytes;
        cl_device_text(dev, sizeof dev, st->device_type, st->device_index);
        const struct cl_storage_holders *sh = &hs->storages[s];
        int devi = cl_holders_device(hs, st->device_type, st->device_index);
        if (!json) {
            size_t len = 0;
            cl_append(line, sizeof line, &len, "storage ");
            cl_append_hex(line, sizeof line, &len, st->impl);
            cl_append(line, sizeof line, &len, "  ");
            cl_append(line, sizeof line, &len, dev);
            cl_append(line, sizeof line, &len, "  ");
            cl_append_uint(line, sizeof line, &len, st->nbytes);
            cl_append(line, sizeof line, &len, " bytes  held by ");
            cl_append(line, sizeof line, &len, cl_held_by_name(sh->held_by));
            fputs(line, out);
            putc('\n', out);
            holders_text(out, hs, sh, devi, opt->width);
        }
        for (uint32_t k = 0; k < st->ntensors; k++) {
            const struct torch_tensor *x = &tt->v[st->tensors[k]];
            const char *path = hs->tensor_paths[st->tensors[k]];
            bool has_path = path != NULL;
            shape_text(shape, sizeof shape, tt, x);
            if (!json) {
                size_t len = 0;
                cl_append(line, sizeof line, &len, "  ");
                cl_append_hex(line, sizeof line, &len, x->pyobj ? x->pyobj : x->impl);
                cl_append(line, sizeof line, &len, " ");
                cl_append(line, sizeof line, &len, type_name(h, x));
                cl_append(line, sizeof line, &len, " ");
                cl_append(line, sizeof line, &len, torch_dtype_name(x->dtype));
                cl_append(line, sizeof line, &len, " ");
                cl_append(line, sizeof line, &len, shape);
                cl_append(line, sizeof line, &len, x->requires_grad ? " requires_grad" : "");
                cl_append(line, sizeof line, &len, x->grad_fn ? " grad_fn=" : "");
                cl_append(line, sizeof line, &len, x->grad_fn ? torch_grad_fn_name(tt, x) : "");
                fputs(line, out);
                putc('\n', out);
                if (has_path)
                    cl_text_path_line(out, "      ", path, opt->width);
                else
                    cl_text_line(out,
                                 x->pyobj ? "      reachable from no root (a garbage cycle "
                                            "awaiting collection, or held only from C)"
                                          : "      held from C++ by an unknown owner",
                                 opt->width);
                continue;
            }
            cl_json_begin_object(&j);
            cl_json_key(&j, "address");
            cl_json_hex(&j, x->pyobj ? x->pyobj : x->impl);
            cl_json_key(&j, "type");
            cl_json_string(&j, type_name(h, x));
            cl_json_key(&j, "device");
            cl_json_string(&j, dev);
            cl_json_key(&j, "dtype");
            cl_json_string(&j, torch_dtype_name(x->dtype));
            cl_json_key(&j, "shape");
            cl_json_begin_array(&j);
            for (int d = 0; d < torch_shown_dims(x); d++)
                cl_json_int(&j, torch_sizes(tt, x)[d]);
            cl_json_end_array(&j);
            cl_json_key(&j, "strides");
            cl_json_begin_array(&j);
            for (int d = 0; d < torch_shown_dims(x); d++)
                cl_json_int(&j, torch_strides(tt, x)[d]);
            cl_json_end_array(&j);
            cl_json_key(&j, "storage_offset");
            cl_json_int(&j, x->storage_offset);
            cl_json_key(&j, "nbytes");
            cl_json_int(&j, (long long)st->nbytes);
            cl_json_key(&j, "storage");
            cl_json_hex(&j, st->impl);
            cl_json_key(&j, "data_ptr");
            cl_json_hex(&j, x->data_ptr);
            cl_json_key(&j, "storage_data_ptr");
            cl_json_hex(&j, st->data);
            cl_json_key(&j, "grad_fn_node");
            if (x->grad_fn_node != TORCH_NO_NODE)
                cl_json_int(&j, x->grad_fn_node);
            else
                cl_json_null(&j);
            cl_json_key(&j, "requires_grad");
            cl_json_bool(&j, x->requires_grad);
            cl_json_key(&j, "grad_fn");
            cl_json_string(&j, torch_grad_fn_name(tt, x));
            cl_json_key(&j, "held_by");
            cl_json_string(&j, cl_held_by_name(sh->held_by));
            cl_json_key(&j, "paths");
            cl_json_begin_array(&j);
            if (has_path)
                cl_json_path(&j, path);
            cl_json_end_array(&j);
            cl_json_key(&j, "steps");
            cl_json_begin_array(&j);
            if (has_path)
                cl_json_path_steps(&j, path);
            cl_json_end_array(&j);
            holders_json(&j, h, hs, sh, devi);
            cl_json_end_object(&j);
        }
    }
    if (json) {
        cl_json_end_array(&j);
        autograd_json(&j, tt);
        cl_report_json_end(out, &j, w);
    } else {
        fprintf(out, "%llu storages, %llu bytes\n", (unsigned long long)shown,
                (unsigned long long)bytes);
        cl_report_warnings(out, NULL, w, "warning: ");
    }
}

struct total {
    char key[256];
    uint64_t storages, bytes;
};

/* Counts a storage of bytes under key; false when out of memory. */
static bool add_total(struct total **v, size_t *n, size_t *cap, const char *key, uint64_t bytes)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i].key, key) == 0) {
            (*v)[i].storages++;
            (*v)[i].bytes += bytes;
            return true;
        }
    if (!CL_VEC_RESERVE(*v, *n, *cap))
        return false;
    struct total *nv = &(*v)[(*n)++];
    snprintf(nv->key, sizeof nv->key, "%s", key);
    nv->storages = 1;
    nv->bytes = bytes;
    return true;
}

static int by_total_bytes(const void *a, const void *b)
{
    const struct total *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->key, y->key);
}

/* The root a path starts from: `__main__`, `sys`, `<thread main: f() at x.py:3>`. */
static void owner_of(const char *path, char *out, size_t cap)
{
    const char *close = path[0] == '<' ? strchr(path, '>') : NULL;
    size_t n = close ? (size_t)(close - path) + 1 : strcspn(path, ".[{");
    cl_copy_span(out, cap, path, n);   /* cut to cap: a key, grouping alike roots */
}

static void print_totals(FILE *out, struct cl_json *j, const char *key, struct total *v, size_t n)
{
    if (n > 1)   /* v is NULL when there is nothing to total */
        qsort(v, n, sizeof *v, by_total_bytes);
    if (j) {
        cl_json_key(j, key);
        cl_json_begin_array(j);
        for (size_t i = 0; i < n; i++) {
            cl_json_begin_object(j);
            cl_json_key(j, "name");
            cl_json_string(j, v[i].key);
            cl_json_key(j, "storages");
            cl_json_int(j, (long long)v[i].storages);
            cl_json_key(j, "bytes");
            cl_json_int(j, (long long)v[i].bytes);
            cl_json_end_object(j);
        }
        cl_json_end_array(j);
        return;
    }
    fprintf(out, "by %s:\n", key);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %14llu bytes %6llu storages  %s\n", (unsigned long long)v[i].bytes,
                (unsigned long long)v[i].storages, v[i].key);
}

static uint64_t sum(const uint64_t *v, uint32_t n)
{
    uint64_t t = 0;
    for (uint32_t d = 0; d < n; d++)
        t += v[d];
    return t;
}

/* CUDA first: a holder's bytes on CUDA devices, then on all. */
static uint64_t cuda_sum(const struct cl_holders *hs, const uint64_t *v)
{
    uint64_t t = 0;
    for (uint32_t d = 0; d < hs->ndevices; d++)
        t += hs->devices[d].type == TORCH_DEVICE_CUDA ? v[d] : 0;
    return t;
}

/* A holder with its sort keys: retained on CUDA, retained, reachable on CUDA, reachable. */
struct ranked {
    uint64_t keys[4];
    const char *name;
    uint32_t k;
};

static struct ranked rank(const struct cl_holders *hs, uint32_t k)
{
    const struct cl_holder *x = &hs->v[k];
    return (struct ranked){{cuda_sum(hs, x->retained), sum(x->retained, hs->ndevices),
                            cuda_sum(hs, x->reachable), sum(x->reachable, hs->ndevices)},
                           x->name,
                           k};
}

static int by_retained(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    for (int k = 0; k < 4; k++)
        if (x->keys[k] != y->keys[k])
            return x->keys[k] < y->keys[k] ? 1 : -1;
    return strcmp(x->name, y->name);
}


static void bytes_by_device(struct cl_json *j, const struct cl_holders *hs, const uint64_t *v)
{
    char dev[32];
    cl_json_begin_object(j);
    for (uint32_t d = 0; d < hs->ndevices; d++) {
        cl_device_text(dev, sizeof dev, hs->devices[d].type, hs->devices[d].index);
        cl_json_key(j, dev);
        cl_json_int(j, (long long)v[d]);
    }
    cl_json_end_object(j);
}

/* One holder of the leak report as text: totals, then what it is made of. */
static void holder_text(FILE *out, const struct cl_holders *hs, const struct cl_holder *hd,
                        size_t width)
{
    char retained[32], reachable[32], line[4096], dev[32], b[32];
    cl_bytes_text(retained, sizeof retained, sum(hd->retained, hs->ndevices));
    cl_bytes_text(reachable, sizeof reachable, sum(hd->reachable, hs->ndevices));
    size_t len = 0;
    char name[CL_PATH_TEXT_CAP];
    bool fits = cl_appendf(line, sizeof line, &len, "  %10s %10s %8u  %s", retained, reachable,
                           hd->storages, cl_path_text(hd->name, name));
    bool split = false;   /* where its retained bytes are, when there are several devices */
    for (uint32_t d = 0; fits && hs->ndevices > 1 && d < hs->ndevices; d++) {
        if (!hd->retained[d])
            continue;
        cl_device_text(dev, sizeof dev, hs->devices[d].type, hs->devices[d].index);
        cl_bytes_text(b, sizeof b, hd->retained[d]);
        fits = cl_appendf(line, sizeof line, &len, "%s%s %s", split ? ", " : "  (", dev, b);
        split = true;
    }
    if (fits && split)
        fits = cl_appendf(line, sizeof line, &len, ")");
    if (fits && hd->saved)
        cl_appendf(line, sizeof line, &len, "  %u of them through autograd graphs (%u nodes)",
                   hd->saved, hd->nodes);
    cl_text_line(out, line, width);
}

/* The holders that reach a storage, by what dropping each alone would free, CUDA first, into
 * order (hs->n + 1 entries); returns how many. ranked is scratch of as many. */
static uint32_t order_holders(const struct cl_holders *hs, uint32_t *order, struct ranked *ranked)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < hs->n; k++)
        if (hs->v[k].storages)
            ranked[n++] = rank(hs, k);
    qsort(ranked, n, sizeof *ranked, by_retained);
    for (uint32_t i = 0; i < n; i++)
        order[i] = ranked[i].k;
    return n;
}

/* The leak report: the holders in order (n of them), top bounding the lines (0: all). */
static void print_holders(FILE *out, struct cl_json *j, struct py_heap *h,
                          const struct cl_holders *hs, const uint32_t *order, uint32_t n,
                          size_t top, size_t width)
{
    if (top && top < n)
        n = (uint32_t)top;
    if (j) {
        cl_json_key(j, "holders");
        cl_json_begin_array(j);
    } else {
        fprintf(out,
                "leak report, by what dropping each reference alone would free:\n"
                "  %10s %10s %8s  %s\n",
                "retained", "reachable", "storages", "holder");
    }
    for (uint32_t i = 0; i < n; i++) {
        const struct cl_holder *hd = &hs->v[order[i]];
        if (!j) {
            holder_text(out, hs, hd, width);
            continue;
        }
        cl_json_begin_object(j);
        cl_json_key(j, "holder");
        cl_json_path(j, hd->name);
        cl_json_key(j, "steps");
        cl_json_path_steps(j, hd->name);
        cl_json_key(j, "root");
        cl_json_string(j, h->roots[hd->root]);
        cl_json_key(j, "storages");
        cl_json_int(j, hd->storages);
        cl_json_key(j, "storages_via_autograd");
        cl_json_int(j, hd->saved);
        cl_json_key(j, "autograd_nodes");
        cl_json_int(j, hd->nodes);
        cl_json_key(j, "retained_bytes");
        cl_json_int(j, (long long)sum(hd->retained, hs->ndevices));
        cl_json_key(j, "reachable_bytes");
        cl_json_int(j, (long long)sum(hd->reachable, hs->ndevices));
        cl_json_key(j, "retained_by_device");
        bytes_by_device(j, hs, hd->retained);
        cl_json_key(j, "reachable_by_device");
        bytes_by_device(j, hs, hd->reachable);
        cl_json_end_object(j);
    }
    if (j)
        cl_json_end_array(j);
}

/* The CUDA allocator's own figures per device, and the allocated blocks no tensor accounts for
 * (the leak report's last line: memory culeak cannot name a holder for). */
static void allocator_part(FILE *out, struct cl_json *j, const struct torch_tensors *tt,
                           const struct cc_allocator *a)
{
    char b[32];
    if (j) {
        cl_json_key(j, "cuda");
        cl_json_begin_array(j);
    }
    for (uint32_t i = 0; a && i < a->ndevices; i++) {
        const struct cc_device *d = &a->devices[i];
        uint64_t unattributed = cl_blocks_unattributed(tt, d);
        if (!j) {
            cl_bytes_text(b, sizeof b, unattributed);
            fprintf(out,
                    "  %10s %10s %8s  cuda:%d blocks no tensor known from Python or "
                    "autograd lies in (culeak blocks lists them)\n",
                    b, "", "", d->index);
            fprintf(out, "cuda:%d caching allocator: %llu reserved, %llu allocated, %llu cached\n",
                    d->index, (unsigned long long)d->reserved, (unsigned long long)d->allocated,
                    (unsigned long long)(d->reserved - d->allocated));
            continue;
        }
        cl_json_begin_object(j);
        cl_json_key(j, "device");
        cl_json_int(j, d->index);
        cl_json_key(j, "reserved");
        cl_json_int(j, (long long)d->reserved);
        cl_json_key(j, "allocated");
        cl_json_int(j, (long long)d->allocated);
        cl_json_key(j, "cached");
        cl_json_int(j, (long long)(d->reserved - d->allocated));
        cl_json_key(j, "unattributed");
        cl_json_int(j, (long long)unattributed);
        cl_json_end_object(j);
    }
    if (j)
        cl_json_end_array(j);
}

int cl_report_summary(FILE *out, struct py_heap *h, const struct torch_tensors *tt,
                      const struct cl_holders *hs, const struct cc_allocator *a,
                      const struct cl_text_options *opt, bool json, const struct cl_report_notes *w,
                      struct cl_error *err)
{
    struct total *devices = NULL, *owners = NULL;
    size_t ndev = 0, nown = 0, dev_cap = 0, own_cap = 0;
    char dev[32], owner[256], text[CL_PATH_TEXT_CAP];
    bool ok = true;
    for (uint32_t k = 0; ok && k < tt->nstorages; k++) {
        const struct torch_storage *st = &tt->storages[k];
        cl_device_text(dev, sizeof dev, st->device_type, st->device_index);
        ok = add_total(&devices, &ndev, &dev_cap, dev, st->nbytes);
        const struct cl_storage_holders *sh = &hs->storages[k];
        if (sh->n)
            owner_of(cl_path_text(sh->v[0].path, text), owner, sizeof owner);
        else
            snprintf(owner, sizeof owner, "(%s)", cl_held_by_name(sh->held_by));
        ok = ok && add_total(&owners, &nown, &own_cap, owner, st->nbytes);
    }
    uint32_t *order = ok ? malloc((hs->n + 1) * sizeof *order) : NULL;
    struct ranked *ranked = order ? malloc((hs->n + 1) * sizeof *ranked) : NULL;
    if (!ranked) {
        free(devices);
        free(owners);
        free(order);
        return cl_error_set(err, CL_E_INTERNAL, "out of memory totalling %u storages",
                            tt->nstorages);
    }
    /* cl_json_begin_document fills j before any read; cppcheck 2.10 takes &j for a read */
    /* cppcheck-suppress uninitvar */
    struct cl_json j, *jp = json ? &j : NULL;
    if (json) {
        cl_json_begin_document(&j, out);
        cl_json_key(&j, "objects");
        cl_json_int(&j, h->n);
        cl_json_key(&j, "tensors");
        cl_json_int(&j, tt->n);
        cl_json_key(&j, "storages");
        cl_json_int(&j, tt->nstorages);
    } else {
        fprintf(out, "%u Python objects, %u tensors in %u storages\n", h->n, tt->n, tt->nstorages);
    }
    print_totals(out, jp, "device", devices, ndev);
    if (json)   /* by root, for scripts; the holders say it better for people */
        print_totals(out, jp, "owner", owners, nown);
    print_holders(out, jp, h, hs, order, order_holders(hs, order, ranked), opt->top, opt->width);
    allocator_part(out, jp, tt, a);
    if (json)
        cl_report_json_end(out, &j, w);
    else
        cl_report_warnings(out, NULL, w, "warning: ");
    free(devices);
    free(owners);
    free(order);
    free(ranked);
    return 0;
}
