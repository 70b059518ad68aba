#include "engine/snapshot.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "report/json.h"

void cl_path_collapse(const char *p, char *out, size_t cap)
{
    size_t w = 0;
    while (*p && w + 4 < cap) {
        if (*p == '[' && (isdigit((unsigned char)p[1]) || p[1] == '<' || p[1] == '-')) {
            const char *close = strchr(p, ']');
            if (close) {
                memcpy(out + w, "[*]", 3);
                w += 3;
                p = close + 1;
                continue;
            }
        }
        out[w++] = *p++;
    }
    out[w] = '\0';
}

static struct cl_snapshot_entry *entry(struct cl_snapshot *snap, const char *path)
{
    for (size_t i = 0; i < snap->n; i++)
        if (strcmp(snap->v[i].path, path) == 0)
            return &snap->v[i];
    struct cl_snapshot_entry *v = realloc(snap->v, (snap->n + 1) * sizeof *v);
    if (!v)
        return NULL;
    snap->v = v;
    if (!(v[snap->n].path = strdup(path)))
        return NULL;
    v[snap->n].storages = v[snap->n].bytes = 0;
    return &v[snap->n++];
}

int cl_snapshot_take(struct cl_session *s, const struct py_walk_options *opt, struct cl_snapshot *out,
                     struct cl_error *err)
{
    char collapsed[4096];
    memset(out, 0, sizeof *out);
    struct cl_holders *hs;
    int rc = cl_session_holders(s, opt, NULL, &hs, err);
    if (rc)
        return rc;
    const struct torch_tensors *tt = &s->tensors;
    for (uint32_t k = 0; k < tt->nstorages; k++) {
        const struct torch_storage *st = &tt->storages[k];
        const struct cl_storage_holders *sh = &hs->storages[k];
        if (sh->n)
            cl_path_collapse(sh->v[0].path, collapsed, sizeof collapsed);
        else
            snprintf(collapsed, sizeof collapsed, "(%s)", cl_held_by_name(sh->held_by));
        struct cl_snapshot_entry *e = entry(out, collapsed);
        if (!e) {
            cl_snapshot_free(out);
            return cl_error_set(err, CL_E_INTERNAL, "out of memory");
        }
        e->storages++;
        e->bytes += st->nbytes;
        out->storages++;
        out->bytes += st->nbytes;
    }
    return 0;
}

void cl_snapshot_free(struct cl_snapshot *snap)
{
    for (size_t i = 0; i < snap->n; i++)
        free(snap->v[i].path);
    free(snap->v);
    memset(snap, 0, sizeof *snap);
}

struct change { const char *path; int64_t storages, bytes; };

static const struct cl_snapshot_entry *lookup(const struct cl_snapshot *s, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].path, path) == 0)
            return &s->v[i];
    return NULL;
}

static int by_change(const void *a, const void *b)
{
    const struct change *x = a, *y = b;
    int64_t ax = x->bytes < 0 ? -x->bytes : x->bytes, ay = y->bytes < 0 ? -y->bytes : y->bytes;
    return ax < ay ? 1 : ax > ay ? -1 : strcmp(x->path, y->path);
}

/* Paths whose totals differ, biggest change first; the caller frees the array. */
static struct change *changes(const struct cl_snapshot *a, const struct cl_snapshot *b, size_t *n)
{
    struct change *v = calloc(a->n + b->n + 1, sizeof *v);
    *n = 0;
    for (size_t pass = 0; v && pass < 2; pass++) {
        const struct cl_snapshot *from = pass ? a : b, *other = pass ? b : a;
        for (size_t i = 0; i < from->n; i++) {
            const struct cl_snapshot_entry *o = lookup(other, from->v[i].path);
            if (pass && o)
                continue;   /* seen in the first pass */
            const struct cl_snapshot_entry *before = pass ? &from->v[i] : o, *after = pass ? o : &from->v[i];
            int64_t ds = (int64_t)(after ? after->storages : 0) - (int64_t)(before ? before->storages : 0);
            int64_t db = (int64_t)(after ? after->bytes : 0) - (int64_t)(before ? before->bytes : 0);
            if (ds || db)
                v[(*n)++] = (struct change){from->v[i].path, ds, db};
        }
    }
    if (v)
        qsort(v, *n, sizeof *v, by_change);
    return v;
}

int64_t cl_snapshot_delta(const struct cl_snapshot *a, const struct cl_snapshot *b, char *line,
                          size_t cap)
{
    size_t n;
    struct change *c = changes(a, b, &n);
    int64_t ds = (int64_t)b->storages - (int64_t)a->storages, db = (int64_t)b->bytes - (int64_t)a->bytes;
    size_t len = (size_t)snprintf(line, cap, "%+lld storages, %+lld bytes", (long long)ds, (long long)db);
    bool first = true;
    for (size_t i = 0; c && i < n && i < 3 && len < cap; i++) {
        if (c[i].bytes <= 0)
            continue;
        len += (size_t)snprintf(line + len, cap - len, "%s %s %+lld", first ? "; grew:" : ",",
                                c[i].path, (long long)c[i].bytes);
        first = false;
    }
    free(c);
    return db;
}

void cl_snapshot_diff(FILE *out, const struct cl_snapshot *a, const struct cl_snapshot *b, bool json)
{
    size_t n;
    struct change *c = changes(a, b, &n);
    if (json) {
        struct cl_json j;
        cl_json_init(&j, out);
        cl_json_begin_object(&j);
        cl_json_key(&j, "storages");
        cl_json_int(&j, (long long)b->storages - (long long)a->storages);
        cl_json_key(&j, "bytes");
        cl_json_int(&j, (long long)b->bytes - (long long)a->bytes);
        cl_json_key(&j, "changes");
        cl_json_begin_array(&j);
        for (size_t i = 0; c && i < n; i++) {
            cl_json_begin_object(&j);
            cl_json_key(&j, "path");
            cl_json_string(&j, c[i].path);
            cl_json_key(&j, "storages");
            cl_json_int(&j, c[i].storages);
            cl_json_key(&j, "bytes");
            cl_json_int(&j, c[i].bytes);
            cl_json_end_object(&j);
        }
        cl_json_end_array(&j);
        cl_json_end_object(&j);
        cl_json_finish(&j);
    } else {
        fprintf(out, "%+lld storages, %+lld bytes\n", (long long)b->storages - (long long)a->storages,
                (long long)b->bytes - (long long)a->bytes);
        for (size_t i = 0; c && i < n; i++)
            fprintf(out, "  %+14lld bytes %+6lld storages  %s\n", (long long)c[i].bytes,
                    (long long)c[i].storages, c[i].path);
    }
    free(c);
}
