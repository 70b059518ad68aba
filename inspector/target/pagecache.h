/* A small set-associative cache of target pages, so walkers can read object by object without a
 * syscall (live) or a lookup (core) per field. Pages that failed to read are cached as failures
 * too: corrupt heaps point at the same bad address many times. Valid only while the target does
 * not change, which holds because live targets stay stopped while open. */
#ifndef CULEAK_TARGET_PAGECACHE_H
#define CULEAK_TARGET_PAGECACHE_H

#include <stddef.h>
#include <stdint.h>

#define CL_PAGE_SIZE 4096u
#define CL_CACHE_WAYS 4u

/* Fills page (CL_PAGE_SIZE bytes at a page-aligned addr); returns 0 or a cl_status. */
typedef int (*cl_page_fill_fn)(void *source, uint64_t addr, void *page);

struct cl_cache_slot {
    uint64_t page;      /* page address, or UINT64_MAX when empty */
    uint64_t used;      /* LRU stamp */
    int status;         /* 0, or the fill's failure code */
    unsigned char *data;
};

struct cl_pagecache {
    struct cl_cache_slot *slots;
    unsigned char *pages;
    size_t nsets;       /* power of two */
    uint64_t clock;
    uint64_t hits, misses;
    cl_page_fill_fn fill;
    void *source;
};

/* npages is rounded down to a multiple of CL_CACHE_WAYS times a power of two (at least one set).
 * Returns 0 or CL_E_INTERNAL (out of memory). */
int cl_pagecache_init(struct cl_pagecache *c, size_t npages, cl_page_fill_fn fill, void *source);
void cl_pagecache_free(struct cl_pagecache *c);
/* Copies len bytes at addr; 0, or the failing page's cl_status (nothing partial is promised). */
int cl_pagecache_read(struct cl_pagecache *c, uint64_t addr, void *buf, size_t len);
void cl_pagecache_clear(struct cl_pagecache *c);

#endif
