#include "symbols/record.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

#define QUERY_MIN_SIZE 45u      /* kind, module, two NULL keys, addr, found, v1, v2, NULL name */
#define MAX_KEY_LEN 4096u

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

const struct cl_symq *cl_symrec_find(const struct cl_symrec *r, const struct cl_symq *q)
{
    for (size_t i = 0; i < r->n; i++) {
        const struct cl_symq *e = &r->v[i];
        if (e->kind == q->kind && e->module == q->module && e->addr == q->addr &&
            same_str(e->key, q->key) && same_str(e->key2, q->key2))
            return e;
    }
    return NULL;
}

static void free_strings(struct cl_symq *q)
{
    free((char *)q->key);
    free((char *)q->key2);
    free((char *)q->name);
}

static char *copy(const char *s, bool *failed)
{
    char *d = s ? strdup(s) : NULL;
    *failed |= s && !d;
    return d;
}

void cl_symrec_add(struct cl_symrec *r, const struct cl_symq *q)
{
    if (r->oom || cl_symrec_find(r, q))
        return;
    if (!CL_VEC_RESERVE(r->v, r->n, r->cap)) {
        r->oom = true;
        return;
    }
    bool failed = false;
    struct cl_symq e = *q;
    e.key = copy(q->key, &failed);
    e.key2 = copy(q->key2, &failed);
    e.name = copy(q->name, &failed);
    if (failed) {
        free_strings(&e);
        r->oom = true;
        return;
    }
    r->v[r->n++] = e;
}

void cl_symrec_free(struct cl_symrec *r)
{
    for (size_t i = 0; i < r->n; i++)
        free_strings(&r->v[i]);
    free(r->v);
    memset(r, 0, sizeof *r);
}

void cl_symrec_write(const struct cl_symrec *r, struct cl_bytes_out *o)
{
    cl_out_u64(o, r->n);
    for (size_t i = 0; i < r->n; i++) {
        const struct cl_symq *q = &r->v[i];
        cl_out_u32(o, q->kind);
        cl_out_u32(o, q->module);
        cl_out_str(o, q->key);
        cl_out_str(o, q->key2);
        cl_out_u64(o, q->addr);
        unsigned char found = q->found;
        cl_out_bytes(o, &found, 1);
        cl_out_u64(o, q->v1);
        cl_out_u64(o, q->v2);
        cl_out_str(o, q->name);
    }
}

static bool read_one(struct cl_bytes_in *in, uint32_t modules, struct cl_symq *q)
{
    uint32_t kind = cl_in_u32(in);
    q->module = cl_in_u32(in);
    q->key = cl_in_str(in, MAX_KEY_LEN);
    q->key2 = cl_in_str(in, MAX_KEY_LEN);
    q->addr = cl_in_u64(in);
    unsigned char found = 2;
    if (!in->bad && in->at < in->len)
        found = in->p[in->at++];
    else
        in->bad = true;
    q->found = found == 1;
    q->v1 = cl_in_u64(in);
    q->v2 = cl_in_u64(in);
    q->name = cl_in_str(in, MAX_KEY_LEN);
    q->kind = (enum cl_symq_kind)kind;
    bool module_ok = kind == CL_SYMQ_NAME_AT ? q->module == CL_SYMQ_NO_MODULE : q->module < modules;
    return !in->bad && kind < CL_SYMQ_KINDS && found <= 1 && module_ok;
}

bool cl_symrec_read(struct cl_bytes_in *in, uint32_t modules, struct cl_symrec *r)
{
    memset(r, 0, sizeof *r);
    uint64_t n = cl_in_u64(in);
    if (in->bad || n > cl_in_room(in, QUERY_MIN_SIZE)) {
        in->bad = true;
        return false;
    }
    if (n && !(r->v = calloc((size_t)n, sizeof *r->v))) {
        in->oom = in->bad = true;
        return false;
    }
    r->cap = (size_t)n;
    for (; r->n < n; r->n++)
        if (!read_one(in, modules, &r->v[r->n])) {
            free_strings(&r->v[r->n]);
            in->bad = true;
            return false;
        }
    return true;
}
