/* `culeak summary`: the report is built as rows (struct summary) from the models, then written
 * as text or as JSON by separate writers, so that both forms say the same. */
#include "report/tensors.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cudacache/trace.h"
#include "report/blocks.h"
#include "report/categories.h"
#include "report/json.h"
#include "report/paths.h"
#include "report/pools.h"
#include "report/warnings.h"
#include "util/error.h"
#include "util/text.h"
#include "util/vec.h"

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


/* One CUDA device's line: the allocator's own figures, the allocated blocks no tensor lies in
 * that a C++ owner holds (named in `blocks`), and those nothing known holds (the leak report's
 * last line: memory culeak cannot name a holder for). */
struct cuda_row {
    const struct cc_device *device;
    struct cl_blocks_unheld unheld;
    struct cl_pool_row *pools; /* its private pools and what owns each */
    uint32_t npools;
    /* what _record_memory_history() recorded: whether it holds entries, and its last
     * out-of-memory error (its size, stream, pool and the free bytes CUDA reported) */
    bool history, oom, oom_time;
    struct cc_trace_entry last_oom;
};

/* Where one device's tensor bytes are (what each storage counts for: its block on CUDA), every
 * byte once: retained by one holder alone, held from C (whether holders reach it too or not),
 * shared by several holders, garbage, held by C++
 * with no Python object; on CUDA, with the allocated blocks no tensor lies in (unattributed),
 * they sum to the allocator's allocated bytes, and with its cache to its reserved bytes. */
struct accounting {
    uint64_t retained, shared, held_from_c, garbage, cxx;
};

static const char *const accounting_names[] = {"retained", "shared", "held_from_c", "garbage",
                                               "cxx"};
static const char *const accounting_text[] = {
    "retained, each by one holder alone (the leak report's first column)",
    "shared by several holders, retained by none alone",
    "held from C: an object C holds reaches it (culeak balance says which)",
    "garbage: only objects gc.collect() would free reach it",
    "held from C++ with no Python object culeak knows (an unknown owner)",
};

static uint64_t *accounting_field(struct accounting *a, size_t k)
{
    uint64_t *f[] = {&a->retained, &a->shared, &a->held_from_c, &a->garbage, &a->cxx};
    return f[k];
}

#define ACCOUNTING_FIELDS (sizeof accounting_names / sizeof *accounting_names)

/* The summary's rows: what both writers print, computed once. */
struct category_total {
    uint64_t storages, bytes;
    uint32_t blocks;   /* allocated blocks no storage lies in, counted in bytes: C++ owners' */
};

struct summary {
    struct accounting *accounting;      /* by device, as cl_holders.devices */
    struct category_total (*categories)[CL_NCATEGORIES]; /* by device, as cl_holders.devices */
    uint32_t objects, tensors, storages;
    struct total *devices, *owners;     /* bytes by device and by the root that holds them */
    size_t ndevices, nowners;
    uint32_t *holders;                  /* indices into hs->v, in report order, cut to --top */
    uint32_t nholders;
    struct cuda_row *cuda;
    uint32_t ncuda;
    const struct py_heap *h;
    const struct cl_holders *hs;
    const struct cl_since *since;
    const struct cl_driver_memory *driver;   /* NULL where there is nothing to say */
};

static void summary_free(struct summary *s)
{
    for (uint32_t i = 0; i < s->ncuda; i++)
        free(s->cuda[i].pools);
    free(s->devices);
    free(s->owners);
    free(s->holders);
    free(s->cuda);
    free(s->accounting);
    free(s->categories);
    memset(s, 0, sizeof *s);
}

/* Storages by device and by owner; false when out of memory. */
static bool add_totals(struct summary *s, const struct torch_tensors *tt)
{
    char dev[32], owner[256], text[CL_PATH_TEXT_CAP];
    size_t dev_cap = 0, own_cap = 0;
    bool ok = true;
    for (uint32_t k = 0; ok && k < tt->nstorages; k++) {
        const struct torch_storage *st = &tt->storages[k];
        cl_device_text(dev, sizeof dev, st->device_type, st->device_index);
        ok = add_total(&s->devices, &s->ndevices, &dev_cap, dev, st->nbytes);
        const struct cl_storage_holders *sh = &s->hs->storages[k];
        if (sh->n)
            owner_of(cl_path_text(sh->v[0].path, text), owner, sizeof owner);
        else
            snprintf(owner, sizeof owner, "(%s)", cl_held_by_name(sh->held_by));
        ok = ok && add_total(&s->owners, &s->nowners, &own_cap, owner, st->nbytes);
    }
    if (s->ndevices > 1)
        qsort(s->devices, s->ndevices, sizeof *s->devices, by_total_bytes);
    if (s->nowners > 1)
        qsort(s->owners, s->nowners, sizeof *s->owners, by_total_bytes);
    return ok;
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

/* The holders in report order, cut to top (0: all); false when out of memory. */
static bool add_holders(struct summary *s, size_t top)
{
    const struct cl_holders *hs = s->hs;
    s->holders = malloc((hs->n + 1) * sizeof *s->holders);
    struct ranked *ranked = s->holders ? malloc((hs->n + 1) * sizeof *ranked) : NULL;
    if (!ranked)
        return false;
    s->nholders = order_holders(hs, s->holders, ranked);
    free(ranked);
    if (top && top < s->nholders)
        s->nholders = (uint32_t)top;
    return true;
}

/* Each storage's bytes under its device, by what holds it; false when out of memory. */
static bool add_accounting(struct summary *s, const struct torch_tensors *tt)
{
    const struct cl_holders *hs = s->hs;
    if (!(s->accounting = calloc(hs->ndevices + 1, sizeof *s->accounting)))
        return false;
    for (uint32_t k = 0; k < tt->nstorages; k++) {
        const struct torch_storage *st = &tt->storages[k];
        const struct cl_storage_holders *sh = &hs->storages[k];
        int d = cl_holders_device(hs, st->device_type, st->device_index);
        if (d < 0)
            continue;
        struct accounting *a = &s->accounting[d];
        uint64_t *into = sh->retainer != CL_NO_RETAINER                ? &a->retained
                         : sh->from_c || sh->held_by == CL_HELD_FROM_C ? &a->held_from_c
                         : sh->n                                       ? &a->shared
                         : sh->held_by == CL_HELD_GARBAGE              ? &a->garbage
                                                                       : &a->cxx;
        *into += sh->bytes;
    }
    return true;
}

/* Each device's storages by category (report/categories.h); false when out of memory. */
static bool add_categories(struct summary *s, struct py_heap *h, const struct torch_tensors *tt)
{
    const struct cl_holders *hs = s->hs;
    uint8_t *category = malloc(tt->nstorages + 1);
    if (!category || !(s->categories = calloc(hs->ndevices + 1, sizeof *s->categories)) ||
        cl_categories(h, tt, hs, category)) {
        free(category);
        return false;
    }
    for (uint32_t k = 0; k < tt->nstorages; k++) {
        int d = cl_holders_device(hs, tt->storages[k].device_type, tt->storages[k].device_index);
        if (d < 0)
            continue;
        s->categories[d][category[k]].storages++;
        s->categories[d][category[k]].bytes += hs->storages[k].bytes;
    }
    free(category);
    /* what no storage is: the blocks C++ owners hold, and the cache; so that with the blocks
     * nothing known holds, a CUDA device's categories sum to its reserved bytes */
    for (uint32_t i = 0; i < s->ncuda; i++) {
        const struct cuda_row *r = &s->cuda[i];
        int d = cl_holders_device(hs, TORCH_DEVICE_CUDA, (int8_t)r->device->index);
        if (d < 0)
            continue;
        s->categories[d][CL_CAT_CXX].bytes += r->unheld.owned;
        s->categories[d][CL_CAT_CXX].blocks += r->unheld.nowned;
        s->categories[d][CL_CAT_CACHE].bytes = r->device->reserved - r->device->allocated;
    }
    return true;
}

/* Each device's last out-of-memory error in the allocator's history, where it recorded one: the
 * stream and pool an error's report should name, which nothing else keeps (issue 45). */
static void add_last_oom(struct summary *s, const struct cc_allocator *a)
{
    struct cc_trace tr;
    if (!cc_trace_read(s->h->objects.rt->t, a, &tr))
        return;
    for (uint32_t i = 0; i < s->ncuda && i < tr.ndevices; i++) {
        const struct cc_device_trace *d = &tr.devices[i];
        s->cuda[i].history = d->n > 0;
        for (uint32_t k = d->n; k-- > 0;)
            if (d->v[k].action == CC_TRACE_OOM) {
                s->cuda[i].oom = true;
                s->cuda[i].oom_time = tr.times;
                s->cuda[i].last_oom = d->v[k];
                break;
            }
    }
    cc_trace_free(&tr);
}

static bool add_cuda(struct summary *s, const struct torch_tensors *tt,
                     const struct cc_allocator *a)
{
    struct cl_block_storages storages;
    if (!a || !a->ndevices)
        return true;
    if (!(s->cuda = calloc(a->ndevices, sizeof *s->cuda)) ||
        !cl_block_storages_build(tt, &storages))
        return false;
    for (uint32_t i = 0; i < a->ndevices; i++) {
        struct cuda_row *row = &s->cuda[s->ncuda++];
        row->device = &a->devices[i];
        cl_blocks_unheld(&storages, row->device, &row->unheld);
        if (!cl_pool_rows(a, row->device, &row->pools, &row->npools)) {
            cl_block_storages_free(&storages);
            return false;
        }
    }
    cl_block_storages_free(&storages);
    add_last_oom(s, a);
    return true;
}

static int summary_build(struct py_heap *h, const struct torch_tensors *tt,
                         const struct cl_holders *hs, const struct cc_allocator *a, size_t top,
                         struct summary *s, struct cl_error *err)
{
    *s = (struct summary){
        .objects = h->n, .tensors = tt->n, .storages = tt->nstorages, .h = h, .hs = hs};
    if (add_totals(s, tt) && add_holders(s, top) && add_cuda(s, tt, a) && add_accounting(s, tt) &&
        add_categories(s, h, tt))
        return 0;
    summary_free(s);
    return cl_error_set(err, CL_E_INTERNAL, "out of memory totalling %u storages", tt->nstorages);
}

/* ---- text ---- */

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

/* A drill entry's path as text, after its holder's where it goes on from it ("" for the holder
 * itself). */
static const char *drill_text(const struct cl_holder *hd, const struct cl_drill *d, char *buf)
{
    char holder[CL_PATH_TEXT_CAP];
    cl_path_text(hd->name, holder);
    cl_path_text(d->path, buf);
    size_t n = strlen(holder);
    return strncmp(buf, holder, n) == 0 && strchr(".[", buf[n]) ? buf + n : buf;
}

/* How many of entry i's entries break it down. */
static uint32_t drill_parts(const struct cl_holders *hs, const struct cl_holder *hd, uint32_t i)
{
    uint32_t n = 0;
    for (uint32_t k = i + 1; k < hd->ndrill; k++)
        n += hs->drills[hd->drill + k].parent == i;
    return n;
}

/* A holder's drill-down under its line: each entry's bytes, where it is, how many objects hold
 * them; the holder itself is left out where entries break it down, and a holder whose bytes one
 * object holds (a tensor, a graph) has none. */
static void drill_text_lines(FILE *out, const struct cl_holders *hs, const struct cl_holder *hd,
                             size_t width)
{
    char bytes[CL_BYTES_TEXT], path[CL_PATH_TEXT_CAP], line[4096];
    const struct cl_drill *first = hd->ndrill ? &hs->drills[hd->drill] : NULL;
    if (!first || (hd->ndrill == 1 && !first->accumulation && first->children <= 1))
        return;
    bool accumulation = false;
    uint32_t top = 0; /* levels not shown: the holder itself */
    for (uint32_t i = 0; i < hd->ndrill; i++) {
        const struct cl_drill *d = &hs->drills[hd->drill + i];
        accumulation |= d->accumulation;
        if (!d->path)
            continue;
        const char *where = drill_text(hd, d, path);
        if (!*where && drill_parts(hs, hd, i)) {
            top = 1;
            continue;
        }
        cl_bytes_text(bytes, sizeof bytes, d->bytes);
        size_t len = 0;
        if (cl_appendf(line, sizeof line, &len, "  %10s %19s  %*s↳ %s: %s%u object%s", bytes, "",
                       (int)(2 * (d->level - (d->level ? top : 0))), "",
                       *where ? where : "(the holder itself)",
                       d->accumulation ? "accumulation point, " : "", d->children,
                       d->children == 1 ? "" : "s"))
            cl_text_line(out, line, width);
    }
    if (!accumulation) /* a holder with none has returned above */
        fprintf(out, "  %10s %19s  ↳ no accumulation point: a few objects hold it\n", "", "");
}

/* The CUDA row of device index, or NULL. */
static const struct cuda_row *cuda_row_of(const struct summary *s, int index)
{
    for (uint32_t i = 0; i < s->ncuda; i++)
        if (s->cuda[i].device->index == index)
            return &s->cuda[i];
    return NULL;
}

/* The device's bytes by what holds them, the categories that have any. */
static void accounting_text_lines(FILE *out, const struct summary *s, const char *device)
{
    char dev[32], size[CL_BYTES_TEXT];
    for (uint32_t d = 0; d < s->hs->ndevices; d++) {
        cl_device_text(dev, sizeof dev, s->hs->devices[d].type, s->hs->devices[d].index);
        if (strcmp(dev, device) != 0)
            continue;
        for (size_t k = 0; k < ACCOUNTING_FIELDS; k++) {
            uint64_t bytes = *accounting_field(&s->accounting[d], k);
            cl_bytes_text(size, sizeof size, bytes);
            if (bytes)
                fprintf(out, "  %10s %6s           %s\n", size, "", accounting_text[k]);
        }
        const struct cuda_row *c = s->hs->devices[d].type == TORCH_DEVICE_CUDA
                                       ? cuda_row_of(s, s->hs->devices[d].index)
                                       : NULL;
        if (c && c->unheld.owned) {
            cl_bytes_text(size, sizeof size, c->unheld.owned);
            fprintf(out,
                    "  %10s %6s           held by torch's C++ (cuBLAS workspaces: culeak "
                    "blocks names them)\n",
                    size, "");
        }
        if (c) {
            cl_bytes_text(size, sizeof size, c->unheld.unattributed);
            fprintf(out, "  %10s %6s           in allocated blocks nothing known holds\n", size,
                    "");
            cl_bytes_text(size, sizeof size, c->device->reserved - c->device->allocated);
            fprintf(out, "  %10s %6s           cached by the allocator, free for reuse\n", size,
                    "");
        }
    }
}

/* The device's last out-of-memory error as the allocator's history recorded it; where a note says
 * why the target was read (an error, as a rule) and the history is off, that the stream and pool
 * were not recorded. */
static void last_oom_text(FILE *out, const struct cuda_row *r, bool noted)
{
    char size[CL_BYTES_TEXT], free_bytes[CL_BYTES_TEXT], when[64] = "";
    const struct cc_trace_entry *e = &r->last_oom;
    if (!r->oom) {
        if (noted && !r->history)
            fprintf(out, "  the stream and pool of an out-of-memory error: not recorded (the "
                         "allocator's history is off: torch.cuda.memory._record_memory_history)\n");
        return;
    }
    cl_bytes_text(size, sizeof size, e->size);
    cl_bytes_text(free_bytes, sizeof free_bytes, e->addr);
    if (r->oom_time) {
        time_t sec = (time_t)(e->time_us / 1000000);
        struct tm tm;
        if (gmtime_r(&sec, &tm))
            strftime(when, sizeof when, ", at %Y-%m-%dT%H:%M:%SZ", &tm);
    }
    fprintf(out,
            "  its last out-of-memory error (the allocator's history): %s on stream 0x%llx, "
            "pool (%llu, %llu), %s free on the device%s\n",
            size, (unsigned long long)e->stream, (unsigned long long)e->pool_id[0],
            (unsigned long long)e->pool_id[1], free_bytes, when);
}

/* The device's private pools: what each owner keeps reserved, apart from the tensors in it. */
static void pools_text(FILE *out, const struct cuda_row *r)
{
    char reserved[CL_BYTES_TEXT], allocated[CL_BYTES_TEXT], empty[CL_BYTES_TEXT];
    for (uint32_t k = 0; k < r->npools; k++) {
        const struct cl_pool_row *p = &r->pools[k];
        cl_bytes_text(reserved, sizeof reserved, p->reserved);
        cl_bytes_text(allocated, sizeof allocated, p->allocated);
        cl_bytes_text(empty, sizeof empty, p->empty);
        fprintf(out,
                "  private pool (%llu, %llu), %s: %s reserved in %u segment%s, %s of it "
                "allocated, %s in segments with nothing allocated\n",
                (unsigned long long)p->id[0], (unsigned long long)p->id[1],
                p->owner ? p->owner : "no owner culeak knows", reserved, p->segments,
                p->segments == 1 ? "" : "s", allocated, empty);
    }
}

/* The allocator's reserved bytes over every device: what the driver's figure is compared with. */
static uint64_t reserved_total(const struct summary *s)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < s->ncuda; i++)
        n += s->cuda[i].device->reserved;
    return n;
}

/* The GPU memory the caching allocator does not know of: NVML's per-process figure less what
 * the allocator reserved, over all the process's GPUs (NVML numbers GPUs its own way, which
 * CUDA_VISIBLE_DEVICES and CUDA's order can change, so devices are not matched one to one). */
static void driver_text(FILE *out, const struct summary *s)
{
    const struct cl_driver_memory *d = s->driver;
    if (!d)
        return;
    char used[CL_BYTES_TEXT], reserved[CL_BYTES_TEXT], outside[CL_BYTES_TEXT];
    uint64_t r = reserved_total(s);
    if (d->state != CL_DRIVER_READ) {
        fprintf(out, "outside the caching allocator: not known: %s\n", d->why);
        return;
    }
    cl_bytes_text(used, sizeof used, d->used);
    cl_bytes_text(reserved, sizeof reserved, r);
    cl_bytes_text(outside, sizeof outside, d->used > r ? d->used - r : 0);
    fprintf(out,
            "outside the caching allocator: %s on cuda (NVML: the process uses %s of %u GPU%s, "
            "the allocator reserved %s): the CUDA context, NCCL, cuBLAS and cuDNN handles, "
            "other libraries' cudaMalloc%s\n",
            outside, used, d->gpus, d->gpus == 1 ? "" : "s", reserved,
            d->used < r ? "; NVML's figure is below the allocator's, read just before the stop "
                          "while the copy is of the stop"
                        : "");
}

static void summary_text(FILE *out, const struct summary *s, size_t width,
                         const struct cl_report_notes *w)
{
    char b[32];
    const char *note = s->h->objects.rt->t->note;
    if (note)   /* why this instant: the error a dump was taken at */
        fprintf(out, "note: %s\n", note);
    if (s->since)
        fprintf(out, "grew since snapshot %s (%s): %s\n", s->since->snapshot, s->since->time,
                s->since->growth);
    fprintf(out, "%u Python objects, %u tensors in %u storages\n", s->objects, s->tensors,
            s->storages);
    fprintf(out, "by device:\n");
    for (size_t i = 0; i < s->ndevices; i++) {
        char size[CL_BYTES_TEXT];
        cl_bytes_text(size, sizeof size, s->devices[i].bytes);
        fprintf(out, "  %10s %6llu storages  %s\n", size,
                (unsigned long long)s->devices[i].storages, s->devices[i].key);
        accounting_text_lines(out, s, s->devices[i].key);
    }
    fprintf(out, "by category (each storage in the first that fits):\n");
    for (uint32_t d = 0; d < s->hs->ndevices; d++)
        for (int c = 0; c < CL_NCATEGORIES; c++) {
            char dev[32], size[CL_BYTES_TEXT];
            const struct category_total *t = &s->categories[d][c];
            cl_device_text(dev, sizeof dev, s->hs->devices[d].type, s->hs->devices[d].index);
            cl_bytes_text(size, sizeof size, t->bytes);
            if (c == CL_CAT_CACHE && t->bytes)
                fprintf(out, "  %10s %6s           %s %s, reserved and free\n", size, "", dev,
                        cl_category_name(c));
            else if (t->blocks)
                fprintf(out,
                        "  %10s %6llu storages  %s %s, and %u block%s C++ owns (culeak "
                        "blocks names %s)\n",
                        size, (unsigned long long)t->storages, dev, cl_category_name(c), t->blocks,
                        t->blocks == 1 ? "" : "s", t->blocks == 1 ? "it" : "them");
            else if (t->storages)
                fprintf(out, "  %10s %6llu storages  %s %s\n", size,
                        (unsigned long long)t->storages, dev, cl_category_name(c));
        }
    /* the owners are for scripts (JSON); the holders say it better for people */
    fprintf(out,
            "leak report, by what dropping each reference alone would free:\n"
            "  %10s %10s %8s  %s\n",
            "retained", "reachable", "storages", "holder");
    for (uint32_t i = 0; i < s->nholders; i++) {
        holder_text(out, s->hs, &s->hs->v[s->holders[i]], width);
        drill_text_lines(out, s->hs, &s->hs->v[s->holders[i]], width);
    }
    for (uint32_t i = 0; i < s->ncuda; i++) {
        const struct cc_device *d = s->cuda[i].device;
        cl_bytes_text(b, sizeof b, s->cuda[i].unheld.owned);
        if (s->cuda[i].unheld.owned)   /* freed by torch._C._cuda_clearCublasWorkspaces() */
            fprintf(out,
                    "  %10s %10s %8s  cuda:%d torch's cuBLAS workspaces (culeak blocks "
                    "names them)\n",
                    b, "", "", d->index);
        cl_bytes_text(b, sizeof b, s->cuda[i].unheld.unattributed);
        fprintf(out,
                "  %10s %10s %8s  cuda:%d blocks no tensor known from Python or "
                "autograd lies in (culeak blocks lists them)\n",
                b, "", "", d->index);
        char reserved[CL_BYTES_TEXT], allocated[CL_BYTES_TEXT], cached[CL_BYTES_TEXT];
        cl_bytes_text(reserved, sizeof reserved, d->reserved);
        cl_bytes_text(allocated, sizeof allocated, d->allocated);
        cl_bytes_text(cached, sizeof cached, d->reserved - d->allocated);
        fprintf(out, "cuda:%d caching allocator: %s reserved, %s allocated, %s cached\n", d->index,
                reserved, allocated, cached);
        pools_text(out, &s->cuda[i]);
        last_oom_text(out, &s->cuda[i], s->h->objects.rt->t->note != NULL);
    }
    driver_text(out, s);
    cl_report_warnings(out, NULL, w, "warning: ");
}

/* ---- JSON ---- */

static void driver_json(struct cl_json *j, const struct summary *s)
{
    static const char *const states[] = {[CL_DRIVER_NOT_ASKED] = "not_asked",
                                         [CL_DRIVER_NO_NVML] = "no_nvml",
                                         [CL_DRIVER_NOT_LISTED] = "not_listed",
                                         [CL_DRIVER_HIDDEN] = "hidden",
                                         [CL_DRIVER_READ] = "read"};
    const struct cl_driver_memory *d = s->driver;
    cl_json_key(j, "driver_memory");
    if (!d) {
        cl_json_null(j);
        return;
    }
    bool read = d->state == CL_DRIVER_READ;
    uint64_t r = reserved_total(s);
    cl_json_begin_object(j);
    cl_json_key(j, "state");
    cl_json_string(j, states[d->state]);
    cl_json_key(j, "used");
    read ? cl_json_int(j, (long long)d->used) : cl_json_null(j);
    cl_json_key(j, "gpus");
    cl_json_int(j, d->gpus);
    cl_json_key(j, "reserved");
    cl_json_int(j, (long long)r);
    cl_json_key(j, "outside_allocator");
    read ? cl_json_int(j, (long long)(d->used > r ? d->used - r : 0)) : cl_json_null(j);
    cl_json_key(j, "why");
    read ? cl_json_null(j) : cl_json_string(j, d->why);
    cl_json_end_object(j);
}

static void totals_json(struct cl_json *j, const char *key, const struct total *v, size_t n)
{
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

/* Drill entry i of a holder and the entries that break it down, as a tree. */
static void drill_json(struct cl_json *j, const struct cl_holders *hs, const struct cl_holder *hd,
                       uint32_t i)
{
    const struct cl_drill *d = &hs->drills[hd->drill + i];
    cl_json_begin_object(j);
    cl_json_key(j, "path");
    if (d->path)
        cl_json_path(j, d->path);
    else
        cl_json_null(j);
    cl_json_key(j, "retained_bytes");
    cl_json_int(j, (long long)d->bytes);
    cl_json_key(j, "objects");
    cl_json_int(j, d->children);
    cl_json_key(j, "accumulation_point");
    cl_json_bool(j, d->accumulation);
    cl_json_key(j, "parts");
    cl_json_begin_array(j);
    for (uint32_t k = i + 1; k < hd->ndrill; k++)
        if (hs->drills[hd->drill + k].parent == i)
            drill_json(j, hs, hd, k);
    cl_json_end_array(j);
    cl_json_end_object(j);
}

static void holder_json(struct cl_json *j, const struct summary *s, const struct cl_holder *hd)
{
    const struct cl_holders *hs = s->hs;
    cl_json_begin_object(j);
    cl_json_key(j, "holder");
    cl_json_path(j, hd->name);
    cl_json_key(j, "steps");
    cl_json_path_steps(j, hd->name);
    cl_json_key(j, "root");
    cl_json_string(j, s->h->roots[hd->root]);
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
    cl_json_key(j, "drill");
    if (hd->ndrill)
        drill_json(j, hs, hd, 0);
    else
        cl_json_null(j);
    cl_json_end_object(j);
}

static void cuda_json(struct cl_json *j, const struct cuda_row *r)
{
    const struct cc_device *d = r->device;
    cl_json_begin_object(j);
    cl_json_key(j, "device");
    cl_json_int(j, d->index);
    cl_json_key(j, "reserved");
    cl_json_int(j, (long long)d->reserved);
    cl_json_key(j, "allocated");
    cl_json_int(j, (long long)d->allocated);
    cl_json_key(j, "cached");
    cl_json_int(j, (long long)(d->reserved - d->allocated));
    cl_json_key(j, "owned_by_cxx");
    cl_json_int(j, (long long)r->unheld.owned);
    cl_json_key(j, "unattributed");
    cl_json_int(j, (long long)r->unheld.unattributed);
    cl_json_key(j, "private_pools");
    cl_json_begin_array(j);
    for (uint32_t k = 0; k < r->npools; k++) {
        const struct cl_pool_row *p = &r->pools[k];
        cl_json_begin_object(j);
        cl_json_key(j, "pool");
        cl_json_pool_id(j, p->id);
        cl_json_key(j, "owner");
        cl_json_string(j, p->owner);   /* null for none */
        cl_json_key(j, "segments");
        cl_json_int(j, p->segments);
        cl_json_key(j, "reserved");
        cl_json_int(j, (long long)p->reserved);
        cl_json_key(j, "allocated");
        cl_json_int(j, (long long)p->allocated);
        cl_json_key(j, "empty");
        cl_json_int(j, (long long)p->empty);
        cl_json_end_object(j);
    }
    cl_json_end_array(j);
    cl_json_key(j, "history_recorded");
    cl_json_bool(j, r->history);
    cl_json_key(j, "last_oom");
    if (!r->oom) {
        cl_json_null(j);
    } else {
        const struct cc_trace_entry *e = &r->last_oom;
        cl_json_begin_object(j);
        cl_json_key(j, "size");
        cl_json_int(j, (long long)e->size);
        cl_json_key(j, "stream");
        cl_json_hex(j, e->stream); /* as blocks writes a segment's */
        cl_json_key(j, "pool");
        cl_json_pool_id(j, e->pool_id);
        cl_json_key(j, "device_free");
        cl_json_int(j, (long long)e->addr);
        cl_json_key(j, "time_us");
        if (r->oom_time)
            cl_json_int(j, e->time_us);
        else
            cl_json_null(j);
        cl_json_end_object(j);
    }
    cl_json_end_object(j);
}

static void accounting_json(struct cl_json *j, const struct summary *s)
{
    char dev[32];
    cl_json_key(j, "accounting");
    cl_json_begin_array(j);
    for (uint32_t d = 0; d < s->hs->ndevices; d++) {
        cl_device_text(dev, sizeof dev, s->hs->devices[d].type, s->hs->devices[d].index);
        cl_json_begin_object(j);
        cl_json_key(j, "device");
        cl_json_string(j, dev);
        for (size_t k = 0; k < ACCOUNTING_FIELDS; k++) {
            cl_json_key(j, accounting_names[k]);
            cl_json_int(j, (long long)*accounting_field(&s->accounting[d], k));
        }
        cl_json_end_object(j);
    }
    cl_json_end_array(j);
}

static void categories_json(struct cl_json *j, const struct summary *s)
{
    char dev[32];
    cl_json_key(j, "categories");
    cl_json_begin_array(j);
    for (uint32_t d = 0; d < s->hs->ndevices; d++)
        for (int c = 0; c < CL_NCATEGORIES; c++) {
            cl_device_text(dev, sizeof dev, s->hs->devices[d].type, s->hs->devices[d].index);
            cl_json_begin_object(j);
            cl_json_key(j, "device");
            cl_json_string(j, dev);
            cl_json_key(j, "category");
            cl_json_string(j, cl_category_name(c));
            cl_json_key(j, "storages");
            cl_json_int(j, (long long)s->categories[d][c].storages);
            cl_json_key(j, "bytes");
            cl_json_int(j, (long long)s->categories[d][c].bytes);
            cl_json_key(j, "blocks");
            cl_json_int(j, s->categories[d][c].blocks);
            cl_json_end_object(j);
        }
    cl_json_end_array(j);
}

static void summary_json(FILE *out, const struct summary *s, const struct cl_report_notes *w)
{
    struct cl_json j;
    cl_json_begin_document(&j, out);
    const char *note = s->h->objects.rt->t->note;
    if (note) {
        cl_json_key(&j, "note");
        cl_json_string(&j, note);
    }
    if (s->since) {
        cl_json_key(&j, "grew_since_snapshot");
        cl_json_begin_object(&j);
        cl_json_key(&j, "snapshot");
        cl_json_string(&j, s->since->snapshot);
        cl_json_key(&j, "time");
        cl_json_string(&j, s->since->time);
        cl_json_key(&j, "growth");
        cl_json_string(&j, s->since->growth);
        cl_json_end_object(&j);
    }
    cl_json_key(&j, "objects");
    cl_json_int(&j, s->objects);
    cl_json_key(&j, "tensors");
    cl_json_int(&j, s->tensors);
    cl_json_key(&j, "storages");
    cl_json_int(&j, s->storages);
    totals_json(&j, "device", s->devices, s->ndevices);
    totals_json(&j, "owner", s->owners, s->nowners);
    cl_json_key(&j, "holders");
    cl_json_begin_array(&j);
    for (uint32_t i = 0; i < s->nholders; i++)
        holder_json(&j, s, &s->hs->v[s->holders[i]]);
    cl_json_end_array(&j);
    cl_json_key(&j, "cuda");
    cl_json_begin_array(&j);
    for (uint32_t i = 0; i < s->ncuda; i++)
        cuda_json(&j, &s->cuda[i]);
    cl_json_end_array(&j);
    driver_json(&j, s);
    accounting_json(&j, s);
    categories_json(&j, s);
    cl_report_json_end(out, &j, w);
}

int cl_report_summary(FILE *out, struct py_heap *h, const struct torch_tensors *tt,
                      const struct cl_holders *hs, const struct cc_allocator *a,
                      const struct cl_driver_memory *driver, const struct cl_text_options *opt,
                      const struct cl_since *since, bool json, const struct cl_report_notes *w,
                      struct cl_error *err)
{
    struct summary s;
    int rc = summary_build(h, tt, hs, a, opt->top, &s, err);
    if (rc)
        return rc;
    s.since = since;
    /* a job that never used CUDA has nothing outside the allocator to tell */
    if (driver && driver->state != CL_DRIVER_NOT_ASKED &&
        (s.ncuda || driver->state == CL_DRIVER_READ))
        s.driver = driver;
    if (json)
        summary_json(out, &s, w);
    else
        summary_text(out, &s, opt->width, w);
    summary_free(&s);
    return 0;
}
