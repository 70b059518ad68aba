#include "report/tensors.h"

#include <stdlib.h>
#include <string.h>

#include "report/balance.h"
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
        [TORCH_FROM_DDP_BUCKET] = "c++ tensor (a DDP gradient bucket)",
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
        char retained[CL_BYTES_TEXT], reachable[CL_BYTES_TEXT];
        cl_bytes_text(retained, sizeof retained, dev >= 0 ? hd->retained[dev] : 0);
        cl_bytes_text(reachable, sizeof reachable, dev >= 0 ? hd->reachable[dev] : 0);
        cl_append(line, sizeof line, &len, " retains ");
        cl_append(line, sizeof line, &len, retained);
        cl_append(line, sizeof line, &len, ", reaches ");
        cl_append(line, sizeof line, &len, reachable);
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

/* One tensor of a storage as both writers print it. */
struct tensor_row {
    const struct torch_tensor *x;
    uint64_t address;          /* the Python tensor, or its TensorImpl when Python has none */
    const char *type;
    const char *path;          /* the chain that holds it, or NULL */
};

/* One storage, with the device text and holders both writers print. */
struct storage_row {
    const struct torch_storage *st;
    char device[32];
    const struct cl_storage_holders *holders;
    int devi;                  /* its device among the holders' (-1: none) */
    const struct py_type *owner; /* the type of the object that owns its data, or NULL */
};

static struct storage_row storage_row(struct py_heap *h, const struct torch_tensors *tt,
                                      const struct cl_holders *hs, uint32_t s)
{
    struct storage_row r = {.st = &tt->storages[s], .holders = &hs->storages[s]};
    r.owner = r.st->data_owner ? py_object_type(&h->objects, r.st->data_owner) : NULL;
    cl_device_text(r.device, sizeof r.device, r.st->device_type, r.st->device_index);
    r.devi = cl_holders_device(hs, r.st->device_type, r.st->device_index);
    return r;
}

static struct tensor_row tensor_row(struct py_heap *h, const struct torch_tensors *tt,
                                    const struct cl_holders *hs, uint32_t t)
{
    const struct torch_tensor *x = &tt->v[t];
    return (struct tensor_row){x, x->pyobj ? x->pyobj : x->impl, type_name(h, x),
                               hs->tensor_paths[t]};
}

/* ---- text ---- */

static void storage_text(FILE *out, const struct cl_holders *hs, const struct storage_row *r,
                         size_t width)
{
    char line[1024];
    size_t len = 0;
    cl_append(line, sizeof line, &len, "storage ");
    cl_append_hex(line, sizeof line, &len, r->st->impl);
    cl_append(line, sizeof line, &len, "  ");
    cl_append(line, sizeof line, &len, r->device);
    char size[CL_BYTES_TEXT];
    cl_bytes_text(size, sizeof size, r->st->nbytes);
    cl_append(line, sizeof line, &len, "  ");
    cl_append(line, sizeof line, &len, size);
    cl_append(line, sizeof line, &len, "  held by ");
    cl_append(line, sizeof line, &len, cl_held_by_name(r->holders->held_by));
    if (r->owner) {
        cl_append(line, sizeof line, &len, "  its data owned by ");
        cl_append(line, sizeof line, &len, r->owner->name);
        cl_append(line, sizeof line, &len, " ");
        cl_append_hex(line, sizeof line, &len, r->st->data_owner);
        cl_append(line, sizeof line, &len, r->st->data_owner_dlpack ? " (through DLPack)" : "");
    }
    fputs(line, out);
    putc('\n', out);
    holders_text(out, hs, r->holders, r->devi, width);
}

static void tensor_text(FILE *out, const struct py_heap *h, const struct torch_tensors *tt,
                        const struct tensor_row *r, size_t width)
{
    char shape[256], line[1024];
    const struct torch_tensor *x = r->x;
    shape_text(shape, sizeof shape, tt, x);
    size_t len = 0;
    cl_append(line, sizeof line, &len, "  ");
    cl_append_hex(line, sizeof line, &len, r->address);
    cl_append(line, sizeof line, &len, " ");
    cl_append(line, sizeof line, &len, r->type);
    cl_append(line, sizeof line, &len, " ");
    cl_append(line, sizeof line, &len, torch_dtype_name(x->dtype));
    cl_append(line, sizeof line, &len, " ");
    cl_append(line, sizeof line, &len, shape);
    cl_append(line, sizeof line, &len, x->requires_grad ? " requires_grad" : "");
    cl_append(line, sizeof line, &len, x->grad_fn ? " grad_fn=" : "");
    cl_append(line, sizeof line, &len, x->grad_fn ? torch_grad_fn_name(tt, x) : "");
    fputs(line, out);
    putc('\n', out);
    if (r->path)
        cl_text_path_line(out, "      ", r->path, width);
    else if (x->pyobj && x->node != PY_NO_NODE) {
        char why[600] = "      ";
        cl_unreached_text(h, x->node, why + 6, sizeof why - 6);
        cl_text_line(out, why, width);
    } else
        cl_text_line(out, "      held from C++ by an unknown owner", width);
}

/* A storage's torch.UntypedStorage object (one of them before 2.4, which made one a call), a line
 * below its tensors: for a storage only that object holds, the one line that names it. */
static void storage_object_text(FILE *out, const struct py_heap *h, const struct storage_row *r)
{
    fprintf(out, "  0x%llx %s%s\n", (unsigned long long)h->nodes[r->st->pynode].addr,
            py_node_type(h, r->st->pynode)->name,
            r->st->ntensors ? "" : " (no tensor found on this storage)");
}

/* ---- JSON ---- */

static void storage_object_json(struct cl_json *j, struct py_heap *h, const struct cl_holders *hs,
                                const struct storage_row *s)
{
    cl_json_begin_object(j);
    cl_json_key(j, "address");
    cl_json_hex(j, h->nodes[s->st->pynode].addr);
    cl_json_key(j, "type");
    cl_json_string(j, py_node_type(h, s->st->pynode)->name);
    cl_json_key(j, "device");
    cl_json_string(j, s->device);
    cl_json_key(j, "nbytes");
    cl_json_int(j, (long long)s->st->nbytes);
    cl_json_key(j, "storage");
    cl_json_hex(j, s->st->impl);
    cl_json_key(j, "storage_data_ptr");
    cl_json_hex(j, s->st->data);
    cl_json_key(j, "tensors");
    cl_json_int(j, s->st->ntensors);
    cl_json_key(j, "held_by");
    cl_json_string(j, cl_held_by_name(s->holders->held_by));
    holders_json(j, h, hs, s->holders, s->devi);
    cl_json_end_object(j);
}

static void tensor_json(struct cl_json *j, struct py_heap *h, const struct torch_tensors *tt,
                        const struct cl_holders *hs, const struct storage_row *s,
                        const struct tensor_row *r)
{
    const struct torch_tensor *x = r->x;
    cl_json_begin_object(j);
    cl_json_key(j, "address");
    cl_json_hex(j, r->address);
    cl_json_key(j, "type");
    cl_json_string(j, r->type);
    cl_json_key(j, "device");
    cl_json_string(j, s->device);
    cl_json_key(j, "dtype");
    cl_json_string(j, torch_dtype_name(x->dtype));
    cl_json_key(j, "shape");
    cl_json_begin_array(j);
    for (int d = 0; d < torch_shown_dims(x); d++)
        cl_json_int(j, torch_sizes(tt, x)[d]);
    cl_json_end_array(j);
    cl_json_key(j, "strides");
    cl_json_begin_array(j);
    for (int d = 0; d < torch_shown_dims(x); d++)
        cl_json_int(j, torch_strides(tt, x)[d]);
    cl_json_end_array(j);
    cl_json_key(j, "storage_offset");
    cl_json_int(j, x->storage_offset);
    cl_json_key(j, "nbytes");
    cl_json_int(j, (long long)s->st->nbytes);
    cl_json_key(j, "storage");
    cl_json_hex(j, s->st->impl);
    cl_json_key(j, "data_ptr");
    cl_json_hex(j, x->data_ptr);
    cl_json_key(j, "storage_data_ptr");
    cl_json_hex(j, s->st->data);
    cl_json_key(j, "data_owner");
    if (s->owner) {
        cl_json_begin_object(j);
        cl_json_key(j, "address");
        cl_json_hex(j, s->st->data_owner);
        cl_json_key(j, "type");
        cl_json_string(j, s->owner->name);
        cl_json_key(j, "through");
        cl_json_string(j, s->st->data_owner_dlpack ? "dlpack" : "deleter");
        cl_json_end_object(j);
    } else {
        cl_json_null(j);
    }
    cl_json_key(j, "grad_fn_node");
    if (x->grad_fn_node != TORCH_NO_NODE)
        cl_json_int(j, x->grad_fn_node);
    else
        cl_json_null(j);
    cl_json_key(j, "requires_grad");
    cl_json_bool(j, x->requires_grad);
    cl_json_key(j, "grad_fn");
    cl_json_string(j, torch_grad_fn_name(tt, x));
    cl_json_key(j, "held_by");
    cl_json_string(j, cl_held_by_name(s->holders->held_by));
    cl_json_key(j, "paths");
    cl_json_begin_array(j);
    if (r->path)
        cl_json_path(j, r->path);
    cl_json_end_array(j);
    cl_json_key(j, "steps");
    cl_json_begin_array(j);
    if (r->path)
        cl_json_path_steps(j, r->path);
    cl_json_end_array(j);
    holders_json(j, h, hs, s->holders, s->devi);
    cl_json_end_object(j);
}

/* ---- the report ---- */

/* The storages the filter keeps, and their bytes: the totals both forms give. */
static void totals(const struct torch_tensors *tt, const struct cl_tensor_filter *f,
                   uint64_t *storages, uint64_t *bytes)
{
    *storages = *bytes = 0;
    for (uint32_t s = 0; s < tt->nstorages; s++)
        if (selected(&tt->storages[s], f)) {
            (*storages)++;
            *bytes += tt->storages[s].nbytes;
        }
}

void cl_report_tensors(FILE *out, struct py_heap *h, const struct torch_tensors *tt,
                       const struct cl_holders *hs, const struct cl_tensor_filter *f,
                       const struct cl_text_options *opt, bool json,
                       const struct cl_report_notes *w)
{
    uint64_t storages, bytes;
    totals(tt, f, &storages, &bytes);
    struct cl_json j;
    if (json) {
        cl_json_begin_document(&j, out);
        cl_json_key(&j, "storages");
        cl_json_int(&j, (long long)storages);
        cl_json_key(&j, "bytes");
        cl_json_int(&j, (long long)bytes);
        cl_json_key(&j, "tensors");
        cl_json_begin_array(&j);
    }
    for (uint32_t s = 0; s < tt->nstorages; s++) {
        if (!selected(&tt->storages[s], f))
            continue;
        struct storage_row sr = storage_row(h, tt, hs, s);
        if (!json)
            storage_text(out, hs, &sr, opt->width);
        for (uint32_t k = 0; k < sr.st->ntensors; k++) {
            struct tensor_row tr = tensor_row(h, tt, hs, sr.st->tensors[k]);
            if (json)
                tensor_json(&j, h, tt, hs, &sr, &tr);
            else
                tensor_text(out, h, tt, &tr, opt->width);
        }
        if (!json && sr.st->pynode != PY_NO_NODE)
            storage_object_text(out, h, &sr);
    }
    if (json) {
        cl_json_end_array(&j);
        cl_json_key(&j, "storage_objects");
        cl_json_begin_array(&j);
        for (uint32_t s = 0; s < tt->nstorages; s++)
            if (selected(&tt->storages[s], f) && tt->storages[s].pynode != PY_NO_NODE) {
                struct storage_row sr = storage_row(h, tt, hs, s);
                storage_object_json(&j, h, hs, &sr);
            }
        cl_json_end_array(&j);
        autograd_json(&j, tt);
        cl_report_json_end(out, &j, w);
    } else {
        char size[CL_BYTES_TEXT];
        cl_bytes_text(size, sizeof size, bytes);
        fprintf(out, "%llu storages, %s\n", (unsigned long long)storages, size);
        cl_report_warnings(out, NULL, w, "warning: ");
    }
}
