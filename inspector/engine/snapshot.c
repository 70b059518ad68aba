#include "engine/snapshot.h"

#include <ctype.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "report/categories.h"
#include "report/info.h"
#include "report/json.h"
#include "report/paths.h"
#include "report/tensors.h"
#include "util/jsonread.h"
#include "util/text.h"
#include "util/vec.h"
#include "util/version.h"
#include "report/text.h"

/* A thread's frame root names its frame's current line ("<thread main: main() at job.py:25>"),
 * which moves while the job runs: the pattern leaves it out, so that an unchanged job compares
 * equal. (Recursion stays told apart: heap.c's frame_roots names it by call order.) */
static void drop_frame_line(char *out)
{
    if (strncmp(out, "<thread ", 8) != 0)
        return;
    char *at = strstr(out, "() at ");
    for (char *c = at ? strchr(at, ':') : NULL; c; c = strchr(c + 1, ':')) {
        size_t digits = strspn(c + 1, "0123456789");
        const char *after = c + 1 + digits;
        if (digits && (*after == '>' || strncmp(after, " (recursion ", 12) == 0)) {
            memmove(c, after, strlen(after) + 1);
            return;
        }
    }
}

void cl_path_collapse(const char *path, char *out, size_t cap)
{
    char text[CL_PATH_TEXT_CAP];
    const char *p = cl_path_text(path, text);
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
    drop_frame_line(out);
    /* what an autograd graph holds counts under the reference to the graph: X.grad_fn */
    char *graph = strstr(out, ".grad_fn");
    if (graph)
        graph[strlen(".grad_fn")] = '\0';
}

/* The entry of list (v, n, cap) for key, added (zero) if none. */
static struct cl_snapshot_entry *entry_in(struct cl_snapshot_entry **v, size_t *n, size_t *cap,
                                          const char *key)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i].path, key) == 0)
            return &(*v)[i];
    if (!CL_VEC_RESERVE(*v, *n, *cap))
        return NULL;
    struct cl_snapshot_entry *e = &(*v)[*n];
    if (!(e->path = strdup(key)))
        return NULL;
    e->storages = e->bytes = 0;
    ++*n;
    return e;
}

static struct cl_snapshot_entry *entry(struct cl_snapshot *snap, const char *path)
{
    return entry_in(&snap->v, &snap->n, &snap->cap, path);
}

int cl_snapshot_take(struct cl_session *s, const struct py_walk_options *opt,
                     struct cl_snapshot *out, struct cl_error *err)
{
    struct cl_holders *hs;
    int rc = cl_session_holders(s, opt, NULL, NULL, &hs, err);
    if (rc) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    return cl_snapshot_from(&s->heap, &s->tensors, hs, s->target->pid, &s->rank, s->python.version,
                            s->torch.version, out, err);
}

/* The storages by "DEVICE CATEGORY". */
static int add_categories(struct py_heap *h, const struct torch_tensors *tt,
                          const struct cl_holders *hs, struct cl_snapshot *out,
                          struct cl_error *err)
{
    uint8_t *category = malloc(tt->nstorages + 1);
    int rc = category && !cl_categories(h, tt, hs, category) ? 0 : CL_E_INTERNAL;
    char key[64], dev[32];
    for (uint32_t k = 0; !rc && k < tt->nstorages; k++) {
        const struct torch_storage *st = &tt->storages[k];
        cl_device_text(dev, sizeof dev, st->device_type, st->device_index);
        snprintf(key, sizeof key, "%s %s", dev, cl_category_name(category[k]));
        struct cl_snapshot_entry *e = entry_in(&out->cat, &out->ncat, &out->cat_cap, key);
        if (!e)
            rc = CL_E_INTERNAL;
        else
            e->storages++, e->bytes += st->nbytes;
    }
    free(category);
    out->has_categories = !rc;
    if (rc) {
        cl_snapshot_free(out);
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    }
    return 0;
}

int cl_snapshot_from(struct py_heap *h, const struct torch_tensors *tt, const struct cl_holders *hs,
                     int pid, const struct cl_rank *rank, const char *python, const char *torch,
                     struct cl_snapshot *out, struct cl_error *err)
{
    char collapsed[4096];
    memset(out, 0, sizeof *out);
    time_t now = time(NULL);
    struct tm utc;
    out->pid = pid;
    out->rank = *rank;
    strftime(out->time, sizeof out->time, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &utc));
    if (gethostname(out->hostname, sizeof out->hostname))
        snprintf(out->hostname, sizeof out->hostname, "?");
    out->hostname[sizeof out->hostname - 1] = '\0';
    snprintf(out->culeak, sizeof out->culeak, "%s", CL_VERSION);
    snprintf(out->python, sizeof out->python, "%s", python);
    snprintf(out->torch, sizeof out->torch, "%s", torch);
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
    return h ? add_categories(h, tt, hs, out, err) : 0;
}

void cl_snapshot_free(struct cl_snapshot *snap)
{
    for (size_t i = 0; i < snap->n; i++)
        free(snap->v[i].path);
    free(snap->v);
    for (size_t i = 0; i < snap->ncat; i++)
        free(snap->cat[i].path);
    free(snap->cat);
    memset(snap, 0, sizeof *snap);
}

struct change {
    const char *path;
    int64_t storages, bytes;
};

static const struct cl_snapshot_entry *lookup(const struct cl_snapshot_entry *v, size_t n,
                                              const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].path, path) == 0)
            return &v[i];
    return NULL;
}

static int by_change(const void *a, const void *b)
{
    const struct change *x = a, *y = b;
    int64_t ax = x->bytes < 0 ? -x->bytes : x->bytes, ay = y->bytes < 0 ? -y->bytes : y->bytes;
    return ax < ay ? 1 : ax > ay ? -1 : strcmp(x->path, y->path);
}

/* The keys of lists a and b whose totals differ, biggest change first; the caller frees the
 * array. */
static struct change *changes_in(const struct cl_snapshot_entry *a, size_t na,
                                 const struct cl_snapshot_entry *b, size_t nb, size_t *n)
{
    struct change *v = calloc(na + nb + 1, sizeof *v);
    *n = 0;
    for (size_t pass = 0; v && pass < 2; pass++) {
        const struct cl_snapshot_entry *from = pass ? a : b, *other = pass ? b : a;
        size_t nfrom = pass ? na : nb, nother = pass ? nb : na;
        for (size_t i = 0; i < nfrom; i++) {
            const struct cl_snapshot_entry *o = lookup(other, nother, from[i].path);
            if (pass && o)
                continue;   /* seen in the first pass */
            const struct cl_snapshot_entry *before = pass ? &from[i] : o;
            const struct cl_snapshot_entry *after = pass ? o : &from[i];
            int64_t ds =
                (int64_t)(after ? after->storages : 0) - (int64_t)(before ? before->storages : 0);
            int64_t db =
                (int64_t)(after ? after->bytes : 0) - (int64_t)(before ? before->bytes : 0);
            if (ds || db)
                v[(*n)++] = (struct change){from[i].path, ds, db};
        }
    }
    if (*n > 1)
        qsort(v, *n, sizeof *v, by_change);
    return v;
}

/* The patterns whose totals differ. */
static struct change *changes(const struct cl_snapshot *a, const struct cl_snapshot *b, size_t *n)
{
    return changes_in(a->v, a->n, b->v, b->n, n);
}

int64_t cl_snapshot_delta(const struct cl_snapshot *a, const struct cl_snapshot *b, char *line,
                          size_t cap)
{
    size_t n;
    struct change *c = changes(a, b, &n);
    int64_t ds = (int64_t)b->storages - (int64_t)a->storages;
    int64_t db = (int64_t)b->bytes - (int64_t)a->bytes;
    size_t len = 0;
    if (cap)
        line[0] = '\0';
    char delta[CL_BYTES_TEXT];
    cl_bytes_delta_text(delta, sizeof delta, db);
    bool fits = cl_appendf(line, cap, &len, "%+lld storages, %s", (long long)ds, delta);
    bool first = true;
    if (!c)
        cl_appendf(line, cap, &len, "; out of memory listing what grew");
    for (size_t i = 0; fits && c && i < n && i < 3; i++) {
        if (c[i].bytes <= 0)
            continue;
        cl_bytes_delta_text(delta, sizeof delta, c[i].bytes);
        fits = cl_appendf(line, cap, &len, "%s %s %s", first ? "; grew:" : ",", c[i].path, delta);
        first = false;
    }
    free(c);
    /* and what changed by category, either way: a leak of saved activations, a grown cache */
    c = a->has_categories && b->has_categories ? changes_in(a->cat, a->ncat, b->cat, b->ncat, &n)
                                               : NULL;
    first = true;
    for (size_t i = 0; fits && c && i < n && i < 3; i++) {
        if (!c[i].bytes)
            continue;
        cl_bytes_delta_text(delta, sizeof delta, c[i].bytes);
        fits = cl_appendf(line, cap, &len, "%s %s %s", first ? "; by category:" : ",", c[i].path,
                          delta);
        first = false;
    }
    free(c);
    return db;
}

/* Which of a and b have flag: "both snapshots were", "the first snapshot was", ... or NULL. */
static const char *which(bool a, bool b)
{
    return a && b ? "both snapshots were"
           : a    ? "the first snapshot was"
           : b    ? "the second snapshot was"
                  : NULL;
}

/* What a diff says of sides read from older files: their patterns collapsed again, their
 * categories missing. Returns how many notes (at most 2). */
static size_t diff_notes(const struct cl_snapshot *a, const struct cl_snapshot *b,
                         char notes[2][160])
{
    size_t n = 0;
    const char *w = which(a->recollapsed, b->recollapsed);
    if (w)
        snprintf(notes[n++], sizeof notes[0],
                 "%s written by an older culeak, whose patterns kept a frame's line: compared "
                 "without it",
                 w);
    if ((w = which(!a->has_categories, !b->has_categories)))
        snprintf(notes[n++], sizeof notes[0],
                 "%s written by an older culeak, without categories: none compared", w);
    return n;
}

/* The categories whose totals differ, when both sides have them. */
static struct change *category_changes(const struct cl_snapshot *a, const struct cl_snapshot *b,
                                       size_t *n)
{
    if (a->has_categories && b->has_categories)
        return changes_in(a->cat, a->ncat, b->cat, b->ncat, n);
    *n = 0;
    return calloc(1, sizeof(struct change));
}

static void changes_text(FILE *out, const struct change *c, size_t n)
{
    char delta[CL_BYTES_TEXT];
    for (size_t i = 0; i < n; i++) {
        cl_bytes_delta_text(delta, sizeof delta, c[i].bytes);
        fprintf(out, "  %11s %+6lld storages  %s\n", delta, (long long)c[i].storages, c[i].path);
    }
}

static void diff_text(FILE *out, const struct cl_snapshot *a, const struct cl_snapshot *b,
                      const struct change *c, size_t n, const struct change *cats, size_t ncats)
{
    char notes[2][160], delta[CL_BYTES_TEXT];
    for (size_t i = 0, k = diff_notes(a, b, notes); i < k; i++)
        fprintf(out, "note: %s\n", notes[i]);
    cl_bytes_delta_text(delta, sizeof delta, (int64_t)b->bytes - (int64_t)a->bytes);
    fprintf(out, "%+lld storages, %s\n", (long long)b->storages - (long long)a->storages, delta);
    if (ncats) {
        fprintf(out, "by category:\n");
        changes_text(out, cats, ncats);
        fprintf(out, "by holder pattern:\n");
    }
    changes_text(out, c, n);
}

/* A category change as JSON: its key ("cpu saved for backward") split at the device. */
static void category_json(struct cl_json *j, const struct change *c)
{
    const char *space = strchr(c->path, ' ');
    char dev[32];
    cl_copy_span(dev, sizeof dev, c->path, space ? (size_t)(space - c->path) : strlen(c->path));
    cl_json_begin_object(j);
    cl_json_key(j, "device");
    cl_json_string(j, dev);
    cl_json_key(j, "category");
    cl_json_string(j, space ? space + 1 : "");
    cl_json_key(j, "storages");
    cl_json_int(j, c->storages);
    cl_json_key(j, "bytes");
    cl_json_int(j, c->bytes);
    cl_json_end_object(j);
}

static void diff_json(FILE *out, const struct cl_snapshot *a, const struct cl_snapshot *b,
                      const struct change *c, size_t n, const struct change *cats, size_t ncats)
{
    struct cl_json j;
    cl_json_begin_document(&j, out);
    cl_json_key(&j, "storages");
    cl_json_int(&j, (long long)b->storages - (long long)a->storages);
    cl_json_key(&j, "bytes");
    cl_json_int(&j, (long long)b->bytes - (long long)a->bytes);
    char notes[2][160];
    cl_json_key(&j, "notes");
    cl_json_begin_array(&j);
    for (size_t i = 0, k = diff_notes(a, b, notes); i < k; i++)
        cl_json_string(&j, notes[i]);
    cl_json_end_array(&j);
    cl_json_key(&j, "categories");
    cl_json_begin_array(&j);
    for (size_t i = 0; i < ncats; i++)
        category_json(&j, &cats[i]);
    cl_json_end_array(&j);
    cl_json_key(&j, "changes");
    cl_json_begin_array(&j);
    for (size_t i = 0; i < n; i++) {
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
}

int cl_snapshot_diff(FILE *out, const struct cl_snapshot *a, const struct cl_snapshot *b, bool json,
                     struct cl_error *err)
{
    size_t n, ncats;
    struct change *c = changes(a, b, &n), *cats = category_changes(a, b, &ncats);
    if (!c || !cats) {
        free(c);
        free(cats);
        return cl_error_set(err, CL_E_INTERNAL, "out of memory comparing %zu and %zu patterns",
                            a->n, b->n);
    }
    if (json)
        diff_json(out, a, b, c, n, cats, ncats);
    else
        diff_text(out, a, b, c, n, cats, ncats);
    free(c);
    free(cats);
    return 0;
}

void cl_snapshot_write(FILE *out, const struct cl_snapshot *snap)
{
    struct cl_json j;
    cl_json_begin_document(&j, out);
    static const char *const keys[] = {"time", "hostname", "culeak", "python", "torch"};
    const char *values[] = {snap->time, snap->hostname, snap->culeak, snap->python, snap->torch};
    cl_json_key(&j, "kind");
    cl_json_string(&j, "culeak-snapshot");
    cl_json_key(&j, "patterns");
    cl_json_int(&j, CL_SNAPSHOT_PATTERNS);
    cl_json_key(&j, "pid");
    cl_json_int(&j, snap->pid);
    cl_json_rank(&j, &snap->rank);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        cl_json_key(&j, keys[i]);
        cl_json_string(&j, values[i]);
    }
    cl_json_key(&j, "storages");
    cl_json_int(&j, (long long)snap->storages);
    cl_json_key(&j, "bytes");
    cl_json_int(&j, (long long)snap->bytes);
    cl_json_key(&j, "entries");
    cl_json_begin_array(&j);
    for (size_t i = 0; i < snap->n; i++) {
        cl_json_begin_object(&j);
        cl_json_key(&j, "pattern");
        cl_json_string(&j, snap->v[i].path);
        cl_json_key(&j, "storages");
        cl_json_int(&j, (long long)snap->v[i].storages);
        cl_json_key(&j, "bytes");
        cl_json_int(&j, (long long)snap->v[i].bytes);
        cl_json_end_object(&j);
    }
    cl_json_end_array(&j);
    if (snap->has_categories) {
        cl_json_key(&j, "categories");
        cl_json_begin_array(&j);
        for (size_t i = 0; i < snap->ncat; i++) {
            const struct cl_snapshot_entry *e = &snap->cat[i];
            category_json(&j, &(struct change){e->path, (int64_t)e->storages, (int64_t)e->bytes});
        }
        cl_json_end_array(&j);
    }
    cl_json_end_object(&j);
    cl_json_finish(&j);
}

#define MAX_SNAPSHOT_FILE (256u << 20)

static bool count_of(const struct cl_jv *v, uint64_t *out)
{
    if (!v || v->kind != CL_JV_NUMBER || !v->is_integer || v->integer < 0)
        return false;
    *out = (uint64_t)v->integer;
    return true;
}

/* A rank field: a count, or -1 when absent or null (files of culeak before ranks too). */
static int rank_of(const struct cl_jv *v)
{
    uint64_t n;
    return count_of(v, &n) && n <= INT32_MAX ? (int)n : -1;
}

static void text_of(const struct cl_jv *v, char *out, size_t cap)
{
    snprintf(out, cap, "%s", v && v->kind == CL_JV_STRING ? v->string : "");
}

/* The snapshot in a parsed document; false when a field is missing or of the wrong kind. */
static bool from_document(const struct cl_jv *doc, struct cl_snapshot *out)
{
    const struct cl_jv *kind = cl_jv_get(doc, "kind"), *entries = cl_jv_get(doc, "entries"),
                       *patterns = cl_jv_get(doc, "patterns");
    uint64_t pid = 0, format = 1;
    if (!kind || kind->kind != CL_JV_STRING || strcmp(kind->string, "culeak-snapshot") ||
        !entries || entries->kind != CL_JV_ARRAY || (patterns && !count_of(patterns, &format)) ||
        format < 1 || format > CL_SNAPSHOT_PATTERNS ||
        !count_of(cl_jv_get(doc, "storages"), &out->storages) ||
        !count_of(cl_jv_get(doc, "bytes"), &out->bytes) || !count_of(cl_jv_get(doc, "pid"), &pid))
        return false;
    out->pid = (int)pid;
    out->recollapsed = format < CL_SNAPSHOT_PATTERNS;
    out->rank =
        (struct cl_rank){rank_of(cl_jv_get(doc, "rank")), rank_of(cl_jv_get(doc, "local_rank")),
                         rank_of(cl_jv_get(doc, "world_size"))};
    text_of(cl_jv_get(doc, "time"), out->time, sizeof out->time);
    text_of(cl_jv_get(doc, "hostname"), out->hostname, sizeof out->hostname);
    text_of(cl_jv_get(doc, "culeak"), out->culeak, sizeof out->culeak);
    text_of(cl_jv_get(doc, "python"), out->python, sizeof out->python);
    text_of(cl_jv_get(doc, "torch"), out->torch, sizeof out->torch);
    for (size_t i = 0; i < entries->n; i++) {
        const struct cl_jv *e = &entries->items[i], *pattern = cl_jv_get(e, "pattern");
        uint64_t storages, bytes;
        if (!pattern || pattern->kind != CL_JV_STRING ||
            !count_of(cl_jv_get(e, "storages"), &storages) ||
            !count_of(cl_jv_get(e, "bytes"), &bytes))
            return false;
        char collapsed[4096];
        if (format < CL_SNAPSHOT_PATTERNS)
            cl_path_collapse(pattern->string, collapsed, sizeof collapsed);
        struct cl_snapshot_entry *x =
            entry(out, format < CL_SNAPSHOT_PATTERNS ? collapsed : pattern->string);
        if (!x)
            return false;
        x->storages += storages;
        x->bytes += bytes;
    }
    const struct cl_jv *cats = cl_jv_get(doc, "categories");
    if (cats && cats->kind != CL_JV_ARRAY)
        return false;
    out->has_categories = cats != NULL;
    for (size_t i = 0; cats && i < cats->n; i++) {
        const struct cl_jv *e = &cats->items[i], *dev = cl_jv_get(e, "device"),
                           *cat = cl_jv_get(e, "category");
        uint64_t storages, bytes;
        char key[160];
        if (!dev || dev->kind != CL_JV_STRING || !cat || cat->kind != CL_JV_STRING ||
            !count_of(cl_jv_get(e, "storages"), &storages) ||
            !count_of(cl_jv_get(e, "bytes"), &bytes))
            return false;
        snprintf(key, sizeof key, "%s %s", dev->string, cat->string);
        struct cl_snapshot_entry *x = entry_in(&out->cat, &out->ncat, &out->cat_cap, key);
        if (!x)
            return false;
        x->storages += storages;
        x->bytes += bytes;
    }
    return true;
}

int cl_snapshot_read(const char *path, struct cl_snapshot *out, struct cl_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return cl_error_set(err, CL_E_IO, "cannot open %s: %s", path, strerror(errno));
    char *text = malloc(MAX_SNAPSHOT_FILE + 1);
    size_t len = text ? fread(text, 1, MAX_SNAPSHOT_FILE + 1, f) : 0;
    fclose(f);
    if (!text)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    if (len > MAX_SNAPSHOT_FILE) {
        free(text);
        return cl_error_set(err, CL_E_IO, "%s is over %u MiB: not a culeak snapshot", path,
                            MAX_SNAPSHOT_FILE >> 20);
    }
    struct cl_jv doc;
    int rc = cl_json_parse(text, len, &doc, err);
    free(text);
    if (rc)
        return cl_error_set(err, CL_E_IO, "%s: %s", path, err->msg);
    const struct cl_jv *version = cl_jv_get(&doc, "schema_version");
    if (!version || !version->is_integer || version->integer != CL_SCHEMA_VERSION)
        rc = cl_error_set(err, CL_E_IO, "%s is not a culeak snapshot of schema version %d", path,
                          CL_SCHEMA_VERSION);
    else if (!from_document(&doc, out))
        rc = cl_error_set(err, CL_E_IO,
                          "%s is not a culeak snapshot: a field is missing or of "
                          "the wrong kind",
                          path);
    cl_jv_free(&doc);
    if (rc)
        cl_snapshot_free(out);
    return rc;
}

#define MAX_DEVICES 64 /* the devices a growth check tells apart; more count as the last */

int64_t cl_snapshot_device_growth(const struct cl_snapshot *a, const struct cl_snapshot *b,
                                  char device[32])
{
    struct {
        char name[32];
        int64_t bytes;
    } d[MAX_DEVICES];
    memset(d, 0, sizeof d);
    size_t n = 0;
    const struct cl_snapshot *side[2] = {a, b};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < side[k]->ncat; i++) {
            char name[32];   /* the key's device: "cuda:0 parameters" */
            size_t len = strcspn(side[k]->cat[i].path, " ");
            len = len < sizeof name ? len : sizeof name - 1;
            memcpy(name, side[k]->cat[i].path, len);
            name[len] = '\0';
            size_t j = 0;
            while (j < n && strcmp(d[j].name, name) != 0)
                j++;
            if (j == n && n < MAX_DEVICES)
                memcpy(d[n++].name, name, sizeof name);
            j = j < n ? j : n - 1;
            d[j].bytes += k ? (int64_t)side[k]->cat[i].bytes : -(int64_t)side[k]->cat[i].bytes;
        }
    int64_t most = 0;
    device[0] = '\0';
    for (size_t j = 0; j < n; j++)
        if (d[j].bytes > most) {
            most = d[j].bytes;
            memcpy(device, d[j].name, sizeof d[j].name);
        }
    return most;
}
