#include "report/tensors.h"

#include <stdlib.h>
#include <string.h>

#include "report/blocks.h"
#include "report/json.h"
#include "report/warnings.h"

static void device_text(char *out, size_t cap, int8_t type, int8_t index)
{
    if (index >= 0 && type != 0)
        snprintf(out, cap, "%s:%d", torch_device_name(type), index);
    else
        snprintf(out, cap, "%s", torch_device_name(type));
}

static void shape_text(char *out, size_t cap, const struct torch_tensor *x)
{
    size_t len = (size_t)snprintf(out, cap, "[");
    for (int d = 0; d < x->ndim && d < TORCH_MAX_DIMS && len < cap; d++)
        len += (size_t)snprintf(out + len, cap - len, "%s%lld", d ? ", " : "", (long long)x->sizes[d]);
    if (x->ndim > TORCH_MAX_DIMS && len < cap)
        len += (size_t)snprintf(out + len, cap - len, ", ...");
    if (len < cap)
        snprintf(out + len, cap - len, "]");
}

static const char *type_name(struct py_heap *h, const struct torch_tensor *x)
{
    if (!x->pyobj)
        return x->via_grad ? "c++ tensor (.grad, no Python object yet)" : "c++ tensor (saved for backward)";
    struct py_type *ty = py_type_at(&h->objects, x->pytype);
    return ty ? ty->name : "?";
}

static bool selected(const struct torch_storage *st, const struct cl_tensor_filter *f)
{
    return (!f || f->device < 0 || st->device_type == f->device) && (!f || st->nbytes >= f->min_bytes);
}

void cl_report_tensors(FILE *out, struct py_heap *h, const struct torch_tensors *tt,
                       const struct cl_tensor_filter *f, bool json, const struct cl_report_notes *w)
{
    char path[4096];
    char dev[32], shape[256];
    struct cl_json j;
    if (json) {
        cl_json_init(&j, out);
        cl_json_begin_object(&j);
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
        device_text(dev, sizeof dev, st->device_type, st->device_index);
        if (!json)
            fprintf(out, "storage 0x%llx  %s  %llu bytes  held by %s\n", (unsigned long long)st->impl,
                    dev, (unsigned long long)st->nbytes, torch_holder_name(st->held_by));
        for (uint32_t k = 0; k < st->ntensors; k++) {
            const struct torch_tensor *x = &tt->v[st->tensors[k]];
            bool has_path = torch_tensor_path(h, x, path, sizeof path);
            shape_text(shape, sizeof shape, x);
            if (!json) {
                fprintf(out, "  0x%llx %s %s %s%s%s%s\n      %s\n",
                        (unsigned long long)(x->pyobj ? x->pyobj : x->impl), type_name(h, x),
                        torch_dtype_name(x->dtype), shape, x->requires_grad ? " requires_grad" : "",
                        x->grad_fn ? " grad_fn=" : "", x->grad_fn ? x->grad_fn_name : "",
                        has_path ? path : x->pyobj ? "reachable from no root (a garbage cycle "
                                                     "awaiting collection, or held only from C)"
                                                   : "held from C++ by an unknown owner");
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
            for (int d = 0; d < x->ndim && d < TORCH_MAX_DIMS; d++)
                cl_json_int(&j, x->sizes[d]);
            cl_json_end_array(&j);
            cl_json_key(&j, "strides");
            cl_json_begin_array(&j);
            for (int d = 0; d < x->ndim && d < TORCH_MAX_DIMS; d++)
                cl_json_int(&j, x->strides[d]);
            cl_json_end_array(&j);
            cl_json_key(&j, "storage_offset");
            cl_json_int(&j, x->storage_offset);
            cl_json_key(&j, "nbytes");
            cl_json_int(&j, (long long)st->nbytes);
            cl_json_key(&j, "storage");
            cl_json_hex(&j, st->impl);
            cl_json_key(&j, "data_ptr");
            cl_json_hex(&j, x->data_ptr);
            cl_json_key(&j, "requires_grad");
            cl_json_bool(&j, x->requires_grad);
            cl_json_key(&j, "grad_fn");
            cl_json_string(&j, x->grad_fn ? x->grad_fn_name : NULL);
            cl_json_key(&j, "held_by");
            cl_json_string(&j, torch_holder_name(st->held_by));
            cl_json_key(&j, "paths");
            cl_json_begin_array(&j);
            if (has_path)
                cl_json_string(&j, path);
            cl_json_end_array(&j);
            cl_json_end_object(&j);
        }
    }
    if (json) {
        cl_json_end_array(&j);
        cl_report_json_end(out, &j, w);
    } else {
        fprintf(out, "%llu storages, %llu bytes\n", (unsigned long long)shown, (unsigned long long)bytes);
        cl_report_warnings(out, NULL, w, "warning: ");
    }
}

struct total { char key[256]; uint64_t storages, bytes; };

static void add_total(struct total **v, size_t *n, const char *key, uint64_t bytes)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i].key, key) == 0) {
            (*v)[i].storages++;
            (*v)[i].bytes += bytes;
            return;
        }
    struct total *nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv)
        return;
    *v = nv;
    snprintf(nv[*n].key, sizeof nv[*n].key, "%s", key);
    nv[*n].storages = 1;
    nv[*n].bytes = bytes;
    (*n)++;
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
    snprintf(out, cap, "%.*s", (int)n, path);
}

static void print_totals(FILE *out, struct cl_json *j, const char *key, struct total *v, size_t n)
{
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

void cl_report_summary(FILE *out, struct py_heap *h, const struct torch_tensors *tt,
                       const struct cc_allocator *a, bool json, const struct cl_report_notes *w)
{
    char path[4096];
    struct total *devices = NULL, *owners = NULL;
    size_t ndev = 0, nown = 0;
    char dev[32], owner[256];
    for (uint32_t k = 0; k < tt->nstorages; k++) {
        const struct torch_storage *st = &tt->storages[k];
        device_text(dev, sizeof dev, st->device_type, st->device_index);
        add_total(&devices, &ndev, dev, st->nbytes);
        if (torch_storage_path(h, tt, st, path, sizeof path))
            owner_of(path, owner, sizeof owner);
        else
            snprintf(owner, sizeof owner, "(%s)", torch_holder_name(st->held_by));
        add_total(&owners, &nown, owner, st->nbytes);
    }
    struct cl_json j;
    if (json) {
        cl_json_init(&j, out);
        cl_json_begin_object(&j);
        cl_json_key(&j, "objects");
        cl_json_int(&j, h->n);
        cl_json_key(&j, "tensors");
        cl_json_int(&j, tt->n);
        cl_json_key(&j, "storages");
        cl_json_int(&j, tt->nstorages);
    } else {
        fprintf(out, "%u Python objects, %u tensors in %u storages\n", h->n, tt->n, tt->nstorages);
    }
    print_totals(out, json ? &j : NULL, "device", devices, ndev);
    print_totals(out, json ? &j : NULL, "owner", owners, nown);
    /* What the CUDA caching allocator holds, when it could be walked. */
    if (json) {
        cl_json_key(&j, "cuda");
        cl_json_begin_array(&j);
    } else if (a) {
        fprintf(out, "cuda caching allocator:\n");
    }
    for (uint32_t i = 0; a && i < a->ndevices; i++) {
        const struct cc_device *d = &a->devices[i];
        uint64_t unattributed = cl_blocks_unattributed(tt, d);
        if (json) {
            cl_json_begin_object(&j);
            cl_json_key(&j, "device");
            cl_json_int(&j, d->index);
            cl_json_key(&j, "reserved");
            cl_json_int(&j, (long long)d->reserved);
            cl_json_key(&j, "allocated");
            cl_json_int(&j, (long long)d->allocated);
            cl_json_key(&j, "cached");
            cl_json_int(&j, (long long)(d->reserved - d->allocated));
            cl_json_key(&j, "unattributed");
            cl_json_int(&j, (long long)unattributed);
            cl_json_end_object(&j);
        } else {
            fprintf(out, "  cuda:%d  %llu reserved, %llu allocated, %llu cached, %llu unattributed\n",
                    d->index, (unsigned long long)d->reserved, (unsigned long long)d->allocated,
                    (unsigned long long)(d->reserved - d->allocated), (unsigned long long)unattributed);
        }
    }
    if (json)
        cl_json_end_array(&j);
    if (json) {
        cl_report_json_end(out, &j, w);
    } else {
        cl_report_warnings(out, NULL, w, "warning: ");
    }
    free(devices);
    free(owners);
}
