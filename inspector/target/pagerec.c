#include "target/pagerec.h"

#include <stdlib.h>
#include <string.h>

#include "target/pagecache.h"
#include "util/vec.h"

/* Grows the page store by doubling; false on allocation failure. */
static bool room_for_page(struct cl_pagerec *r)
{
    if (r->npages < r->pages_cap)
        return true;
    size_t cap = r->pages_cap ? r->pages_cap * 2 : 256;
    if (cap > SIZE_MAX / CL_PAGE_SIZE)
        return false;
    unsigned char *p = realloc(r->pages, cap * CL_PAGE_SIZE);
    if (!p)
        return false;
    r->pages = p;
    r->pages_cap = cap;
    return true;
}

void cl_pagerec_add(struct cl_pagerec *r, uint64_t addr, int status, const void *page)
{
    uint64_t key = cl_addrmap_number_key(addr / CL_PAGE_SIZE);
    if (r->oom || cl_addrmap_get(&r->index, key) != UINT32_MAX)
        return;
    if (r->n >= UINT32_MAX - 1 || !CL_VEC_RESERVE(r->v, r->n, r->cap) ||
        (status == 0 && !room_for_page(r))) {
        r->oom = true;
        return;
    }
    bool inserted;
    if (cl_addrmap_put(&r->index, key, (uint32_t)r->n, &inserted) == UINT32_MAX) {
        r->oom = true;
        return;
    }
    struct cl_pagerec_entry *e = &r->v[r->n++];
    *e = (struct cl_pagerec_entry){addr, status, 0};
    if (status == 0) {
        e->data = (uint32_t)r->npages;
        memcpy(r->pages + (size_t)r->npages++ * CL_PAGE_SIZE, page, CL_PAGE_SIZE);
    }
}

void cl_pagerec_zero(struct cl_pagerec *r, uint64_t addr, uint64_t len)
{
    uint64_t end = addr + len < addr ? UINT64_MAX : addr + len;
    for (uint64_t at = addr; at < end;) {
        uint64_t page = at / CL_PAGE_SIZE * CL_PAGE_SIZE;
        uint64_t stop = end - page < CL_PAGE_SIZE ? end : page + CL_PAGE_SIZE;
        uint32_t i = cl_addrmap_get(&r->index, cl_addrmap_number_key(page / CL_PAGE_SIZE));
        if (i != UINT32_MAX && r->v[i].status == 0)
            memset(r->pages + (size_t)r->v[i].data * CL_PAGE_SIZE + (at - page), 0, stop - at);
        if (stop == UINT64_MAX || page + CL_PAGE_SIZE < page)
            break;
        at = stop;
    }
}

static int by_addr(const void *a, const void *b)
{
    const struct cl_pagerec_entry *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void cl_pagerec_sort(struct cl_pagerec *r)
{
    if (r->n)
        qsort(r->v, r->n, sizeof *r->v, by_addr);
    /* the index now points at the wrong entries; nothing is added after sorting */
    cl_addrmap_free(&r->index);
}

const unsigned char *cl_pagerec_data(const struct cl_pagerec *r, const struct cl_pagerec_entry *e)
{
    return e->status == 0 ? r->pages + (size_t)e->data * CL_PAGE_SIZE : NULL;
}

void cl_pagerec_free(struct cl_pagerec *r)
{
    if (!r)
        return;
    cl_addrmap_free(&r->index);
    free(r->v);
    free(r->pages);
    memset(r, 0, sizeof *r);
}
