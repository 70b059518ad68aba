/* Target addresses of objects to 32-bit node numbers, laid out like the target's memory. CPython
 * allocates objects of up to 512 bytes from pools of one size, 16-byte aligned and packed: each
 * 4 KiB page that holds such objects gets an array of a number per 16 bytes, found through a
 * small map of pages, so that objects walked together (a pool's neighbours) share cache lines and
 * nothing is ever rehashed. Larger objects come from malloc, a few to a page or one to many pages:
 * an array each would cost up to 1 KiB an object, so they go to a hash map, as does the rare
 * address that is not 16-byte aligned (a static object). */
#ifndef CULEAK_UTIL_NODEMAP_H
#define CULEAK_UTIL_NODEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/addrmap.h"

struct cl_nodemap {
    /* page number (cl_addrmap_number_key) -> its array's index, and whether `others` holds
     * some of its objects */
    struct cl_addrmap pages;
    uint32_t **arrays; /* CL_NODEMAP_PER_PAGE numbers each, UINT32_MAX where none */
    size_t narrays, arrays_cap;
    uint32_t *chunk; /* the arrays are carved from chunks of CHUNK_ARRAYS */
    size_t chunk_left;
    uint32_t **chunks;
    size_t nchunks, chunks_cap;
    struct cl_addrmap others; /* large objects, and addresses that are not 16-byte aligned */
};

#define CL_NODEMAP_PER_PAGE 256
#define CL_NODEMAP_SMALL 512 /* the largest object CPython's pools hold (SMALL_REQUEST_THRESHOLD) */

/* The number of addr, or UINT32_MAX. */
uint32_t cl_nodemap_get(const struct cl_nodemap *m, uint64_t addr);
/* Gives addr (not 0, and with no number yet), an object of size bytes, the number value; false
 * when out of memory. The size only chooses where the number is kept. */
bool cl_nodemap_put(struct cl_nodemap *m, uint64_t addr, uint64_t size, uint32_t value);
/* Starts loading what a lookup of addr will read, for a caller a few lookups ahead. */
void cl_nodemap_prefetch(const struct cl_nodemap *m, uint64_t addr);
void cl_nodemap_free(struct cl_nodemap *m);

#endif
