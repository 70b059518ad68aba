#include "report/objects.h"

#include <stdlib.h>
#include <string.h>

#include "cpython/statics.h"
#include "report/balance.h"
#include "report/json.h"
#include "report/paths.h"
#include "report/warnings.h"
#include "torch/cxx.h"
#include "util/notes.h"
#include "util/text.h"
#include "report/text.h"


struct type_count {
    const struct py_type *type;
    uint64_t count, bytes, tracked;
};

static int by_count(const void *a, const void *b)
{
    const struct type_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return x->type && y->type ? strcmp(x->type->name, y->type->name) : 0; /* the same each run */
}

/* The objects report's rows: the types by count, cut to top. */
struct objects_rows {
    struct type_count *counts;
    size_t n;                   /* rows */
    uint32_t objects, reachable, gc_only;
};

static int objects_rows(struct py_heap *h, size_t top, struct objects_rows *r, struct cl_error *err)
{
    *r = (struct objects_rows){.objects = h->n,
                               .reachable = h->nreachable + h->npromoted,
                               .gc_only = h->n - h->nreachable - h->npromoted};
    r->counts = calloc(h->objects.ntypes + 1, sizeof *r->counts);
    if (!r->counts)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory counting %zu types",
                            h->objects.ntypes);
    size_t types = 0; /* types with objects: first once sorted */
    for (uint32_t i = 0; i < h->n; i++) {
        const struct py_node *node = &h->nodes[i];
        struct type_count *c = &r->counts[node->type];
        if (!c->count++) { /* the type's first object */
            types++;
            c->type = py_node_type(h, i);
            c->bytes = h->type_bytes[node->type];
        }
        c->tracked += node->tracked;
    }
    qsort(r->counts, h->objects.ntypes, sizeof *r->counts, by_count);
    r->n = top == 0 || top > types ? types : top;
    return 0;
}

static void objects_text(FILE *out, const struct objects_rows *r, const struct cl_report_notes *w)
{
    fprintf(out, "%u objects: %u reachable from a root, %u only on GC lists\n", r->objects,
            r->reachable, r->gc_only);
    fprintf(out, "%10s %12s %10s  %s\n", "count", "size", "gc-tracked", "type");
    for (size_t i = 0; i < r->n; i++) {
        const struct py_type *ty = r->counts[i].type;
        char size[CL_BYTES_TEXT];
        cl_bytes_text(size, sizeof size, r->counts[i].bytes);
        fprintf(out, "%10llu %12s %10llu  %s\n", (unsigned long long)r->counts[i].count, size,
                (unsigned long long)r->counts[i].tracked, ty ? ty->name : "?");
    }
    cl_report_warnings(out, NULL, w, "warning: ");
}

static void objects_json(FILE *out, const struct objects_rows *r, const struct cl_report_notes *w)
{
    struct cl_json j;
    cl_json_begin_document(&j, out);
    cl_json_key(&j, "objects");
    cl_json_int(&j, r->objects);
    cl_json_key(&j, "reachable");
    cl_json_int(&j, r->reachable);
    cl_json_key(&j, "gc_only");
    cl_json_int(&j, r->gc_only);
    cl_json_key(&j, "types");
    cl_json_begin_array(&j);
    for (size_t i = 0; i < r->n; i++) {
        const struct py_type *ty = r->counts[i].type;
        cl_json_begin_object(&j);
        cl_json_key(&j, "type");
        cl_json_string(&j, ty ? ty->name : "?");
        cl_json_key(&j, "count");
        cl_json_int(&j, (long long)r->counts[i].count);
        cl_json_key(&j, "size");
        cl_json_int(&j, (long long)r->counts[i].bytes);
        cl_json_key(&j, "tracked");
        cl_json_int(&j, (long long)r->counts[i].tracked);
        cl_json_end_object(&j);
    }
    cl_json_end_array(&j);
    cl_report_json_end(out, &j, w);
}

int cl_report_objects(FILE *out, struct py_heap *h, size_t top, bool json,
                      const struct cl_report_notes *w, struct cl_error *err)
{
    struct objects_rows r;
    int rc = objects_rows(h, top, &r, err);
    if (rc)
        return rc;
    if (json)
        objects_json(out, &r, w);
    else
        objects_text(out, &r, w);
    free(r.counts);
    return 0;
}

/* Whether a type is the one --type names: a qualified name (module.Class) must equal the type's;
 * a bare one its last component. */
static bool type_matches(struct py_heap *h, const struct py_type *ty, const char *want)
{
    char name[600];
    py_type_qualified_name(h, ty, name, sizeof name);
    if (strchr(want, '.'))
        return strcmp(name, want) == 0;
    const char *last = strrchr(name, '.');
    return strcmp(last ? last + 1 : name, want) == 0;
}

struct type_match {
    char name[600];
    size_t count;
};

/* A bare --type that names several types is ambiguous: a usage error that says which types,
 * and how many objects of each, so that the user can ask again with a qualified name. 0 when it
 * names one type or none. */
static int ambiguous_type(struct py_heap *h, const char *want, struct cl_error *err)
{
    struct type_match m[8];
    size_t n = 0, more = 0;
    for (uint32_t i = 0; !strchr(want, '.') && i < h->n; i++) {
        struct py_type *ty = py_node_type(h, i);
        if (!type_matches(h, ty, want))
            continue;
        char name[600];
        py_type_qualified_name(h, ty, name, sizeof name);
        size_t k = 0;
        while (k < n && strcmp(m[k].name, name) != 0)
            k++;
        if (k == n && n == sizeof m / sizeof *m) {
            more++;
            continue;
        }
        if (k == n) {
            m[n] = (struct type_match){.count = 0};
            snprintf(m[n].name, sizeof m[n].name, "%s", name);
            n++;
        }
        m[k].count++;
    }
    if (n < 2)
        return 0;
    char line[sizeof err->msg];
    size_t len = 0;
    bool fits =
        cl_appendf(line, sizeof line, &len, "--type %s names %zu types:", want, n + (more > 0));
    for (size_t k = 0; fits && k < n; k++)
        fits =
            cl_appendf(line, sizeof line, &len, "%s %s (%zu)", k ? "," : "", m[k].name, m[k].count);
    if (fits)
        cl_appendf(line, sizeof line, &len, "%s; give the qualified name of one of them",
                   more ? ", and more" : "");
    return cl_error_set(err, CL_E_USAGE, "%s", line);
}

#define PY_REF_STATIC_WORDS 8

/* One object refs reports: where it is, what it is, and the chains that hold it. */
struct ref_row {
    uint64_t addr;
    const struct py_type *type;   /* NULL: not an object culeak found */
    uint64_t size;
    size_t npaths;                /* in the caller's paths */
    bool found;                   /* in the heap (else only its address is known) */
    int32_t unexplained;          /* references not explained, PY_UNBALANCED: not balanced */
    char unreached[512];          /* found, no path: garbage, or what holds it */
    char cxx_class[256];          /* a pybind11 object's C++ class, "" for none */
    /* the libraries' static words that point at it, where the balance took none as its holders
     * (cpython/statics.h): the first PY_REF_STATIC_WORDS named, nstatic counts them all */
    char static_words[PY_REF_STATIC_WORDS][160];
    size_t nstatic;
    uint64_t cxx_object;          /* and the C++ object it wraps, 0 when unknown */
};

/* The row of the object at addr (heap node i, or PY_NO_NODE), its paths into paths: a tensor's
 * as its holders name it first (tensor, a marked path: through its model rather than its
 * optimizer's keys, or the C++ holder of one no Python root reaches), then the heap's shortest
 * ones through other referrers. */
static struct ref_row ref_row(struct py_heap *h, uint64_t addr, uint32_t i, size_t max_paths,
                              char (*paths)[4096], const char *tensor)
{
    struct ref_row r = {.addr = addr, .found = i != PY_NO_NODE};
    r.type = r.found ? py_node_type(h, i) : NULL;
    r.size = r.type ? py_object_size(&h->objects, addr, r.type) : 0;
    if (tensor)
        snprintf(paths[r.npaths++], sizeof paths[0], "%s", tensor);
    size_t from = r.npaths, to = from + (r.found && max_paths > from
                                             ? py_heap_paths(h, i, max_paths - from, paths + from)
                                             : 0);
    for (size_t k = from; k < to; k++) /* the holders' path once */
        if (!tensor || strcmp(paths[k], paths[0]) != 0)
            memmove(paths[r.npaths++], paths[k], sizeof paths[0]);
    r.unexplained = r.found ? h->books.unexplained[i] : PY_UNBALANCED;
    const char *cxx =
        r.type ? py_pybind11_cxx_class(&h->objects, &h->pybind11, r.type->addr) : NULL;
    if (cxx) {
        cxx_class_text(cxx, r.cxx_class, sizeof r.cxx_class);
        r.cxx_object = py_pybind11_value(h->objects.rt->t, addr);
    }
    if (r.found && r.npaths == 0)
        cl_unreached_text(h, i, r.unreached, sizeof r.unreached);
    size_t first = 0, end = r.unexplained > 0 ? py_heap_statics_left(h, addr, &first) : 0;
    for (size_t k = first; r.unexplained > 0 && k < end; k++, r.nstatic++)
        if (r.nstatic < PY_REF_STATIC_WORDS)
            py_static_name(h, h->statics_left[k].at, r.static_words[r.nstatic],
                           sizeof r.static_words[0]);
    return r;
}

/* Node i's p-th reference as the walk recorded it (the class edge is one): the node it reaches,
 * the step a path through it prints (into step), and whether it holds a count. Words of a C type
 * no reader knows are no references; py_fields_read says whether the type has any. */
static uint32_t referent(struct py_heap *h, uint32_t i, uint32_t p, char step[CL_PATH_TEXT_CAP],
                         bool *counted)
{
    char marked[512];
    uint32_t e = py_node_edge(h, i, p), d = py_edge_dst(h, e);
    struct py_step s = py_edge_step(h, e, h->nodes[d].addr);
    py_heap_render(h, "", &s, 1, marked, sizeof marked);
    cl_path_text(marked, step);
    *counted = !(e < h->edges.n && (h->edges.kind[e] & PY_E_UNCOUNTED));
    return d;
}

static void referents_text(FILE *out, struct py_heap *h, uint32_t i)
{
    char step[CL_PATH_TEXT_CAP];
    bool counted;
    for (uint32_t p = 0; p < py_node_nedges(h, i); p++) {
        uint32_t d = referent(h, i, p, step, &counted);
        fprintf(out, "    -> 0x%llx %s %s%s\n", (unsigned long long)h->nodes[d].addr,
                py_node_type(h, d)->name, step, counted ? "" : " (holds no count)");
    }
    struct py_type *ty = py_node_type(h, i);
    if (!py_fields_read(&h->objects, ty))
        fprintf(out,
                "    (%s's own fields are not read: what only they hold is found where the "
                "reference counts confirm it)\n",
                ty->name);
}

static void referents_json(struct cl_json *j, struct py_heap *h, uint32_t i)
{
    char step[CL_PATH_TEXT_CAP];
    bool counted;
    cl_json_key(j, "referents");
    cl_json_begin_array(j);
    for (uint32_t p = 0; p < py_node_nedges(h, i); p++) {
        uint32_t d = referent(h, i, p, step, &counted);
        cl_json_begin_object(j);
        cl_json_key(j, "address");
        cl_json_hex(j, h->nodes[d].addr);
        cl_json_key(j, "type");
        cl_json_string(j, py_node_type(h, d)->name);
        cl_json_key(j, "step");
        cl_json_string(j, step);
        cl_json_key(j, "counted");
        cl_json_bool(j, counted);
        cl_json_end_object(j);
    }
    cl_json_end_array(j);
    cl_json_key(j, "fields_read");
    cl_json_bool(j, py_fields_read(&h->objects, py_node_type(h, i)));
}

static void ref_text(FILE *out, const struct ref_row *r, char (*paths)[4096])
{
    fprintf(out, "0x%llx %s", (unsigned long long)r->addr,
            r->type ? r->type->name : "(not an object culeak found)");
    if (r->cxx_class[0] && r->cxx_object)
        fprintf(out, ", wrapping a C++ %s at 0x%llx", r->cxx_class,
                (unsigned long long)r->cxx_object);
    else if (r->cxx_class[0])
        fprintf(out, ", wrapping a C++ %s (its address not read)", r->cxx_class);
    fputc('\n', out);
    char text[CL_PATH_TEXT_CAP];
    for (size_t k = 0; k < r->npaths; k++)
        fprintf(out, "    %s\n", cl_path_text(paths[k], text));
    if (r->npaths == 0)
        fprintf(out, "    %s\n", r->found ? r->unreached : "not found in the heap");
    if (r->unexplained > 0)
        fprintf(out,
                "    %d reference%s not explained (held from C, or by what culeak cannot "
                "read)\n",
                r->unexplained, r->unexplained == 1 ? "" : "s");
    if (r->nstatic) {
        /* words a borrowed or stale pointer may account for: named, never taken as holders */
        fprintf(out,
                "    %zu word%s of the libraries' static data point%s at it, not taken as its "
                "holders (not as many as the references not explained):",
                r->nstatic, r->nstatic == 1 ? "" : "s", r->nstatic == 1 ? "s" : "");
        for (size_t k = 0; k < r->nstatic && k < PY_REF_STATIC_WORDS; k++)
            fprintf(out, "%s %s", k ? "," : "", r->static_words[k]);
        fprintf(out, "%s\n", r->nstatic > PY_REF_STATIC_WORDS ? ", ..." : "");
    }
}

static void ref_json(struct cl_json *j, const struct ref_row *r, char (*paths)[4096])
{
    cl_json_begin_object(j);
    cl_json_key(j, "address");
    cl_json_hex(j, r->addr);
    cl_json_key(j, "type");
    cl_json_string(j, r->type ? r->type->name : NULL);
    if (r->type) {
        cl_json_key(j, "size");
        cl_json_int(j, (long long)r->size);
    }
    cl_json_key(j, "paths");
    cl_json_begin_array(j);
    for (size_t k = 0; k < r->npaths; k++)
        cl_json_path(j, paths[k]);
    cl_json_end_array(j);
    cl_json_key(j, "steps");
    cl_json_begin_array(j);
    for (size_t k = 0; k < r->npaths; k++)
        cl_json_path_steps(j, paths[k]);
    cl_json_end_array(j);
    cl_json_key(j, "reachable");
    cl_json_bool(j, r->npaths > 0);
    cl_json_key(j, "unexplained");
    if (r->unexplained == PY_UNBALANCED)
        cl_json_null(j);
    else
        cl_json_int(j, r->unexplained);
    cl_json_key(j, "static_word_count");
    cl_json_int(j, (long long)r->nstatic);
    cl_json_key(j, "static_words");
    cl_json_begin_array(j);
    for (size_t k = 0; k < r->nstatic && k < PY_REF_STATIC_WORDS; k++)
        cl_json_string(j, r->static_words[k]);
    cl_json_end_array(j);
    cl_json_key(j, "unreached");
    cl_json_string(j, r->npaths || !r->found ? NULL : r->unreached);
    cl_json_key(j, "cxx_class");
    cl_json_string(j, r->cxx_class[0] ? r->cxx_class : NULL);
    cl_json_key(j, "cxx_object");
    if (r->cxx_object)
        cl_json_hex(j, r->cxx_object);
    else
        cl_json_null(j);
}

/* Writes one object's row in the form asked for. */
static void report_one(FILE *out, struct cl_json *j, struct py_heap *h, uint64_t addr, uint32_t i,
                       const struct cl_refs_query *q, size_t max_paths, char (*paths)[4096],
                       const char *tensor)
{
    struct ref_row r = ref_row(h, addr, i, max_paths, paths, tensor);
    if (j)
        ref_json(j, &r, paths);
    else
        ref_text(out, &r, paths);
    if (q->referents && i != PY_NO_NODE && j)
        referents_json(j, h, i);
    else if (q->referents && i != PY_NO_NODE)
        referents_text(out, h, i);
    if (j)
        cl_json_end_object(j);
}

/* The holders' path of the Python tensor at heap node i (through Python references, or the C++
 * holder's chain of one only C++ reaches: its parameter's .grad, a graph's saved tensor), or
 * NULL. */
static const char *tensor_path(const struct cl_addrmap *by_node, const struct cl_holders *hs,
                               uint32_t i)
{
    uint32_t k = i != PY_NO_NODE ? cl_addrmap_get(by_node, cl_addrmap_number_key(i)) : UINT32_MAX;
    return k != UINT32_MAX ? hs->tensor_paths[k] : NULL;
}

int cl_report_refs(FILE *out, struct py_heap *h, const struct torch_tensors *tt,
                   const struct cl_holders *hs, const struct cl_refs_query *q, bool json,
                   const struct cl_report_notes *w, struct cl_error *err)
{
    struct cl_json j;
    size_t matched = 0, max_paths = q->max_paths ? q->max_paths : 1;
    if (max_paths > 64)
        max_paths = 64;
    int rc = q->type ? ambiguous_type(h, q->type, err) : 0;
    if (rc)
        return rc;
    char(*paths)[4096] = malloc(max_paths * sizeof *paths);
    if (!paths)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory for %zu paths", max_paths);
    /* heap node (number key) -> tensor, for the Python tensors holders name */
    struct cl_addrmap by_node = {0};
    for (uint32_t k = 0; tt && hs && k < tt->n; k++) {
        bool inserted;
        if (tt->v[k].pyobj && tt->v[k].node != PY_NO_NODE && hs->tensor_paths[k])
            /* a miss: only the heap's paths */
            (void)cl_addrmap_put(&by_node, cl_addrmap_number_key(tt->v[k].node), k, &inserted);
    }
    const struct cl_report_notes notes = *w;
    if (json) {
        cl_json_begin_document(&j, out);
        cl_json_key(&j, "objects");
        cl_json_begin_array(&j);
    }
    for (size_t k = 0; k < q->naddrs; k++, matched++) {
        uint32_t i = py_heap_find(h, q->addrs[k]);
        report_one(out, json ? &j : NULL, h, q->addrs[k], i, q, max_paths, paths,
                   tensor_path(&by_node, hs, i));
    }
    for (uint32_t i = 0; q->type && i < h->n; i++) {
        struct py_type *ty = py_node_type(h, i);
        if (type_matches(h, ty, q->type)) {
            report_one(out, json ? &j : NULL, h, h->nodes[i].addr, i, q, max_paths, paths,
                       tensor_path(&by_node, hs, i));
            matched++;
        }
    }
    if (json) {
        cl_json_end_array(&j);
        cl_report_json_end(out, &j, &notes);
    } else if (matched == 0) {
        fprintf(out, "no matching objects\n");
    }
    free(paths);
    cl_addrmap_free(&by_node);
    return 0;
}
