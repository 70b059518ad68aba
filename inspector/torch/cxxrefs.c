#include "torch/cxxrefs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpython/balance.h"
#include "cpython/statics.h"
#include "util/vec.h"

void cxx_refs_add(struct cxx_refs *r, uint64_t object, const char *fmt, ...)
{
    char *name;
    va_list ap;
    va_start(ap, fmt);
    int len = vasprintf(&name, fmt, ap);
    va_end(ap);
    if (len < 0 || r->oom || !CL_VEC_RESERVE(r->v, r->n, r->cap)) {
        if (len >= 0)
            free(name);
        r->oom = true;
        return;
    }
    r->v[r->n++] = (struct cxx_ref){object, name};
}

void cxx_refs_take(struct cxx_refs *r, struct cxx_refs *src)
{
    for (size_t k = 0; k < src->n; k++) {
        if (!r->oom && CL_VEC_RESERVE(r->v, r->n, r->cap))
            r->v[r->n++] = src->v[k];
        else
            free(src->v[k].name), r->oom = true;
    }
    r->oom |= src->oom;
    free(src->v);
    *src = (struct cxx_refs){0};
}

static int by_object(const void *a, const void *b)
{
    const struct cxx_ref *x = a, *y = b;
    return (x->object > y->object) - (x->object < y->object);
}

bool cxx_refs_confirm(struct py_heap *h, struct cxx_refs *r)
{
    bool added = false;
    char name[256];
    if (r->n)
        qsort(r->v, r->n, sizeof *r->v, by_object);
    for (size_t k = 0, end; !r->oom && k < r->n; k = end) {
        for (end = k; end < r->n && r->v[end].object == r->v[k].object;)
            end++;
        uint32_t j = py_heap_find(h, r->v[k].object);
        int32_t u = j != PY_NO_NODE ? py_books_unexplained(h, j) : 0;
        size_t first, last = py_heap_statics_left(h, r->v[k].object, &first);
        /* its own words alone, or with the static words the build could not take alone (a
         * name numpy's static and torch's parsers hold together) */
        bool with_statics = u != (int32_t)(end - k);
        if (with_statics && u != (int32_t)(end - k + last - first))
            continue;
        for (size_t i = k; i < end; i++)
            added |= py_books_add_c_ref(h, j, r->v[i].name);
        for (size_t i = first; with_statics && i < last; i++) {
            py_static_name(h, h->statics_left[i].at, name, sizeof name);
            added |= py_books_add_c_ref(h, j, name);
        }
    }
    cxx_refs_free(r);
    return added;
}

void cxx_refs_free(struct cxx_refs *r)
{
    for (size_t k = 0; k < r->n; k++)
        free(r->v[k].name);
    free(r->v);
    *r = (struct cxx_refs){0};
}
