#include "report/balance.h"

#include <stdlib.h>
#include <string.h>

#include "cpython/balance.h"
#include "report/json.h"
#include "report/text.h"
#include "util/text.h"

/* A type's objects with references not explained. */
struct short_type {
    const struct py_type *type;
    uint64_t objects, refs;
};

/* An object no root reaches that holds itself and what it reaches: references not explained,
 * a C reference, or a count that is not balanced (immortal). */
struct held_row {
    uint32_t node;
    int32_t unexplained;
    const char *c_holder;
    uint64_t objects, bytes;  /* it and what it holds */
};

struct balance_rows {
    struct short_type *types;
    size_t ntypes;
    struct held_row *held;
    size_t nheld;
};

static int by_refs(const void *a, const void *b)
{
    const struct short_type *x = a, *y = b;
    if (x->refs != y->refs)
        return x->refs < y->refs ? 1 : -1;
    return x->type && y->type ? strcmp(x->type->name, y->type->name) : 0;
}

static int by_bytes(const void *a, const void *b)
{
    const struct held_row *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    return x->node < y->node ? -1 : x->node > y->node;
}

static int balance_rows(struct py_heap *h, size_t top, struct balance_rows *r, struct cl_error *err)
{
    memset(r, 0, sizeof *r);
    size_t nseeds = 0;
    uint32_t *row_of = NULL;   /* by unreachable node: its seed's row */
    r->types = calloc(h->objects.ntypes + 1, sizeof *r->types);
    if (h->books.done) {
        for (uint32_t i = h->nreachable; i < h->n; i++)
            nseeds += py_books_held_from(h, i) == i;
        r->held = calloc(nseeds + 1, sizeof *r->held);
        row_of = calloc((size_t)(h->n - h->nreachable) + 1, sizeof *row_of);
    }
    if (!r->types || (h->books.done && (!r->held || !row_of))) {
        free(r->types);
        free(r->held);
        free(row_of);
        return cl_error_set(err, CL_E_INTERNAL, "out of memory balancing %u objects", h->n);
    }
    for (uint32_t i = 0; i < h->n; i++) {
        int32_t u = py_books_unexplained(h, i);
        if (u > 0) {
            struct short_type *t = &r->types[h->nodes[i].type];
            t->type = py_node_type(h, i);
            t->objects++;
            t->refs += (uint64_t)u;
        }
    }
    qsort(r->types, h->objects.ntypes, sizeof *r->types, by_refs);
    while (r->ntypes < h->objects.ntypes && r->types[r->ntypes].refs)
        r->ntypes++;
    if (h->books.done) {
        for (uint32_t i = h->nreachable; i < h->n; i++)
            if (py_books_held_from(h, i) == i) {
                row_of[i - h->nreachable] = (uint32_t)r->nheld;
                r->held[r->nheld++] =
                    (struct held_row){i, h->books.unexplained[i], py_books_c_holder(h, i), 0, 0};
            }
        for (uint32_t i = h->nreachable; i < h->n; i++) {
            uint32_t seed = py_books_held_from(h, i);
            if (seed == PY_NO_NODE)
                continue;
            struct held_row *row = &r->held[row_of[seed - h->nreachable]];
            row->objects++;
            row->bytes += py_object_size(&h->objects, h->nodes[i].addr, py_node_type(h, i));
        }
        qsort(r->held, r->nheld, sizeof *r->held, by_bytes);
    }
    free(row_of);
    if (top && r->ntypes > top)
        r->ntypes = top;
    if (top && r->nheld > top)
        r->nheld = top;
    return 0;
}

/* What holds a held row's object, in words. */
static void held_reason(const struct held_row *x, char *out, size_t cap)
{
    if (x->c_holder)
        snprintf(out, cap, "held by %s", x->c_holder);
    else if (x->unexplained == PY_UNBALANCED)
        snprintf(out, cap, "immortal");
    else
        snprintf(out, cap, "%d reference%s not explained", x->unexplained,
                 x->unexplained == 1 ? "" : "s");
}

static void balance_text(FILE *out, struct py_heap *h, const struct balance_rows *r,
                         const struct cl_report_notes *w)
{
    const struct py_books *b = &h->books;
    char size[CL_BYTES_TEXT], reason[512];
    fprintf(out, "%u objects: %llu balanced, %llu not (immortal, static or unread)\n", h->n,
            (unsigned long long)b->balanced, (unsigned long long)b->unbalanced);
    fprintf(out, "  %llu with references not explained (%llu references)\n",
            (unsigned long long)b->short_objects, (unsigned long long)b->short_refs);
    fprintf(out, "  %llu with more references found than counted (%llu references)\n",
            (unsigned long long)b->over_objects, (unsigned long long)b->over_refs);
    if (!b->done)
        fputs("no root reaches some objects, and the balance could not split them: none is "
              "called garbage\n",
              out);
    else {
        cl_bytes_text(size, sizeof size, b->garbage_bytes);
        fprintf(out, "no root reaches %llu objects:\n", (unsigned long long)(b->garbage + b->held));
        fprintf(out, "  garbage (gc.collect() would free them): %llu objects, %s\n",
                (unsigned long long)b->garbage, size);
        cl_bytes_text(size, sizeof size, b->held_bytes);
        fprintf(out, "  held from C: %llu objects, %s\n", (unsigned long long)b->held, size);
    }
    if (r->ntypes)
        fprintf(out, "\nreferences not explained, by type:\n%10s %10s  %s\n", "objects",
                "references", "type");
    for (size_t k = 0; k < r->ntypes; k++)
        fprintf(out, "%10llu %10llu  %s\n", (unsigned long long)r->types[k].objects,
                (unsigned long long)r->types[k].refs, r->types[k].type->name);
    if (r->nheld)
        fprintf(out, "\nheld from C, no root reaching them:\n%10s %10s  %s\n", "objects", "size",
                "object");
    for (size_t k = 0; k < r->nheld; k++) {
        const struct held_row *x = &r->held[k];
        cl_bytes_text(size, sizeof size, x->bytes);
        held_reason(x, reason, sizeof reason);
        fprintf(out, "%10llu %10s  0x%llx %s: %s\n", (unsigned long long)x->objects, size,
                (unsigned long long)h->nodes[x->node].addr, py_node_type(h, x->node)->name, reason);
    }
    size_t nrules;
    const struct py_books_rule *rules = py_books_rules(&nrules);
    fprintf(out, "\nrules of the count on 3.%u:\n", h->objects.rt->l->minor);
    for (size_t k = 0; k < nrules; k++)
        if (py_books_rule_applies(&rules[k], h->objects.rt->l->minor))
            fprintf(out, "  - %s (%s)\n", rules[k].rule, rules[k].source);
    cl_report_warnings(out, NULL, w, "warning: ");
}

static void balance_json(FILE *out, struct py_heap *h, const struct balance_rows *r, size_t top,
                         const struct cl_report_notes *w)
{
    const struct py_books *b = &h->books;
    struct cl_json j;
    cl_json_begin_document(&j, out);
    cl_json_key(&j, "objects");
    cl_json_int(&j, h->n);
    cl_json_key(&j, "balanced");
    cl_json_int(&j, (long long)b->balanced);
    cl_json_key(&j, "not_balanced");
    cl_json_int(&j, (long long)b->unbalanced);
    cl_json_key(&j, "unexplained_objects");
    cl_json_int(&j, (long long)b->short_objects);
    cl_json_key(&j, "unexplained_references");
    cl_json_int(&j, (long long)b->short_refs);
    cl_json_key(&j, "overcounted_objects");
    cl_json_int(&j, (long long)b->over_objects);
    cl_json_key(&j, "overcounted_references");
    cl_json_int(&j, (long long)b->over_refs);
    cl_json_key(&j, "split");
    cl_json_bool(&j, b->done);
    cl_json_key(&j, "garbage");
    cl_json_int(&j, (long long)b->garbage);
    cl_json_key(&j, "garbage_bytes");
    cl_json_int(&j, (long long)b->garbage_bytes);
    cl_json_key(&j, "held_from_c");
    cl_json_int(&j, (long long)b->held);
    cl_json_key(&j, "held_from_c_bytes");
    cl_json_int(&j, (long long)b->held_bytes);
    cl_json_key(&j, "unexplained_by_type");
    cl_json_begin_array(&j);
    for (size_t k = 0; k < r->ntypes; k++) {
        cl_json_begin_object(&j);
        cl_json_key(&j, "type");
        cl_json_string(&j, r->types[k].type->name);
        cl_json_key(&j, "objects");
        cl_json_int(&j, (long long)r->types[k].objects);
        cl_json_key(&j, "references");
        cl_json_int(&j, (long long)r->types[k].refs);
        cl_json_end_object(&j);
    }
    cl_json_end_array(&j);
    cl_json_key(&j, "held");
    cl_json_begin_array(&j);
    for (size_t k = 0; k < r->nheld; k++) {
        const struct held_row *x = &r->held[k];
        cl_json_begin_object(&j);
        cl_json_key(&j, "address");
        cl_json_hex(&j, h->nodes[x->node].addr);
        cl_json_key(&j, "type");
        cl_json_string(&j, py_node_type(h, x->node)->name);
        cl_json_key(&j, "held_by");
        cl_json_string(&j, x->c_holder);
        cl_json_key(&j, "unexplained");
        if (x->unexplained == PY_UNBALANCED)
            cl_json_null(&j);
        else
            cl_json_int(&j, x->unexplained);
        cl_json_key(&j, "objects");
        cl_json_int(&j, (long long)x->objects);
        cl_json_key(&j, "size");
        cl_json_int(&j, (long long)x->bytes);
        cl_json_end_object(&j);
    }
    cl_json_end_array(&j);
    cl_json_key(&j, "overcounted");
    cl_json_begin_array(&j);
    for (uint32_t i = 0, k = 0; i < h->n && (!top || k < top); i++) {
        int32_t u = h->books.unexplained[i];
        if (u >= 0 || u == PY_UNBALANCED)
            continue;
        cl_json_begin_object(&j);
        cl_json_key(&j, "address");
        cl_json_hex(&j, h->nodes[i].addr);
        cl_json_key(&j, "type");
        cl_json_string(&j, py_node_type(h, i)->name);
        cl_json_key(&j, "references");
        cl_json_int(&j, -(long long)u);
        cl_json_end_object(&j);
        k++;
    }
    cl_json_end_array(&j);
    cl_json_key(&j, "garbage_objects");
    cl_json_begin_array(&j);
    for (uint32_t i = h->nreachable, k = 0; h->books.done && i < h->n && (!top || k < top); i++)
        if (py_books_collectable(h, i)) {
            cl_json_hex(&j, h->nodes[i].addr);
            k++;
        }
    cl_json_end_array(&j);
    cl_json_key(&j, "rules");
    cl_json_begin_array(&j);
    size_t nrules;
    const struct py_books_rule *rules = py_books_rules(&nrules);
    for (size_t k = 0; k < nrules; k++) {
        if (!py_books_rule_applies(&rules[k], h->objects.rt->l->minor))
            continue;
        cl_json_begin_object(&j);
        cl_json_key(&j, "rule");
        cl_json_string(&j, rules[k].rule);
        cl_json_key(&j, "source");
        cl_json_string(&j, rules[k].source);
        cl_json_end_object(&j);
    }
    cl_json_end_array(&j);
    cl_report_json_end(out, &j, w);
}

void cl_unreached_text(const struct py_heap *h, uint32_t i, char *out, size_t cap)
{
    uint32_t seed = py_books_held_from(h, i);
    const char *c = py_books_c_holder(h, i);
    if (seed == PY_NO_NODE) {
        snprintf(out, cap,
                 "garbage: no root reaches it, and objects no root reaches explain all "
                 "its references (gc.collect() would free it)");
        return;
    }
    int32_t u = h->books.unexplained[seed];
    char who[160] = "it";
    if (seed != i)
        snprintf(who, sizeof who, "%s 0x%llx, which reaches it,", py_node_type(h, seed)->name,
                 (unsigned long long)h->nodes[seed].addr);
    if (c)
        snprintf(out, cap, "held from C: no root reaches it; %s is held by %s", who, c);
    else if (u == PY_UNBALANCED)
        snprintf(out, cap, "held: no root reaches it; %s is immortal", who);
    else
        snprintf(out, cap, "held from C: no root reaches it; %s has %d reference%s not explained",
                 who, u, u == 1 ? "" : "s");
}

int cl_report_balance(FILE *out, struct py_heap *h, size_t top, bool json,
                      const struct cl_report_notes *w, struct cl_error *err)
{
    struct balance_rows r;
    int rc = balance_rows(h, top, &r, err);
    if (rc)
        return rc;
    if (json)
        balance_json(out, h, &r, top, w);
    else
        balance_text(out, h, &r, w);
    free(r.types);
    free(r.held);
    return 0;
}
