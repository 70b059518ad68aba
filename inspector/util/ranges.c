#include "util/ranges.h"

#include <stdlib.h>

#include "util/bsearch.h"
#include "util/vec.h"

bool cl_ranges_add(struct cl_ranges *r, uint64_t start, uint64_t end)
{
    if (!CL_VEC_RESERVE(r->v, r->n, r->cap)) {
        r->lost = true;
        return false;
    }
    r->v[r->n++] = (struct cl_range){start, end};
    return true;
}

static int by_start(const void *a, const void *b)
{
    const struct cl_range *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

void cl_ranges_sort(struct cl_ranges *r)
{
    if (r->n < 2)
        return;
    qsort(r->v, r->n, sizeof *r->v, by_start);
    size_t m = 0;
    for (size_t k = 1; k < r->n; k++) {
        if (r->v[k].start <= r->v[m].end)
            r->v[m].end = r->v[k].end > r->v[m].end ? r->v[k].end : r->v[m].end;
        else
            r->v[++m] = r->v[k];
    }
    r->n = m + 1;
}

struct range_at {
    const struct cl_range *v;
    uint64_t addr;
};

static bool starts_at_or_before(size_t i, const void *ctx)
{
    const struct range_at *q = ctx;
    return q->v[i].start <= q->addr;
}

bool cl_ranges_contain(const struct cl_ranges *r, uint64_t addr)
{
    struct range_at q = {r->v, addr};
    size_t after = cl_partition_point(r->n, starts_at_or_before, &q);
    return after > 0 && addr < r->v[after - 1].end;
}

static bool ends_by(size_t i, const void *ctx)
{
    const struct range_at *q = ctx;
    return q->v[i].end <= q->addr;
}

size_t cl_ranges_first_after(const struct cl_ranges *r, uint64_t addr)
{
    struct range_at q = {r->v, addr};
    return cl_partition_point(r->n, ends_by, &q);
}

void cl_ranges_free(struct cl_ranges *r)
{
    free(r->v);
    *r = (struct cl_ranges){0};
}
