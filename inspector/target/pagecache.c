#include "target/pagecache.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

int cl_pagecache_init(struct cl_pagecache *c, size_t npages, cl_page_fill_fn fill, void *source)
{
    size_t nsets = 1;
    while (nsets * 2 * CL_CACHE_WAYS <= npages)
        nsets *= 2;
    memset(c, 0, sizeof *c);
    c->slots = calloc(nsets * CL_CACHE_WAYS, sizeof *c->slots);
    c->pages = malloc(nsets * CL_CACHE_WAYS * CL_PAGE_SIZE);
    if (!c->slots || !c->pages) {
        cl_pagecache_free(c);
        return CL_E_INTERNAL;
    }
    c->nsets = nsets;
    c->fill = fill;
    c->source = source;
    for (size_t i = 0; i < nsets * CL_CACHE_WAYS; i++)
        c->slots[i].data = c->pages + i * CL_PAGE_SIZE;
    cl_pagecache_clear(c);
    return 0;
}

void cl_pagecache_free(struct cl_pagecache *c)
{
    free(c->slots);
    free(c->pages);
    memset(c, 0, sizeof *c);
}

void cl_pagecache_clear(struct cl_pagecache *c)
{
    for (size_t i = 0; i < c->nsets * CL_CACHE_WAYS; i++) {
        c->slots[i].page = UINT64_MAX;
        c->slots[i].used = 0;
    }
}

static struct cl_cache_slot *lookup(struct cl_pagecache *c, uint64_t page)
{
    uint64_t pn = page / CL_PAGE_SIZE;
    /* Fibonacci hashing spreads the strided addresses heaps are made of across sets. */
    size_t set = (size_t)((pn * 0x9E3779B97F4A7C15ull) >> 32) & (c->nsets - 1);
    struct cl_cache_slot *ways = &c->slots[set * CL_CACHE_WAYS], *victim = ways;
    for (unsigned w = 0; w < CL_CACHE_WAYS; w++) {
        if (ways[w].page == page) {
            c->hits++;
            ways[w].used = ++c->clock;
            return &ways[w];
        }
        if (ways[w].used < victim->used)
            victim = &ways[w];
    }
    c->misses++;
    victim->page = page;
    victim->used = ++c->clock;
    victim->status = c->fill(c->source, page, victim->data);
    return victim;
}

int cl_pagecache_read(struct cl_pagecache *c, uint64_t addr, void *buf, size_t len)
{
    unsigned char *out = buf;
    while (len > 0) {
        uint64_t page = addr & ~(uint64_t)(CL_PAGE_SIZE - 1);
        size_t in_page = (size_t)(addr - page), n = CL_PAGE_SIZE - in_page;
        if (n > len)
            n = len;
        struct cl_cache_slot *s = lookup(c, page);
        if (s->status != 0)
            return s->status;
        memcpy(out, s->data + in_page, n);
        out += n;
        addr += n;
        len -= n;
        if (addr == 0 && len > 0)   /* wrapped past the top of the address space */
            return CL_E_UNREADABLE;
    }
    return 0;
}
