/* Target addresses of objects to 32-bit node numbers, laid out like the target's memory: each
 * 4 KiB page that holds objects gets an array of a number per 16 bytes (CPython's objects are
 * 16-byte aligned, in pools of one size), found through a small map of pages. Objects walked
 * together lie together, so their numbers share cache lines; a number is 4 bytes where a hash
 * slot is 12 and nothing is ever rehashed. The rare address that is not 16-byte aligned (a
 * static object) goes to a hash map instead. */
#ifndef CULEAK_UTIL_NODEMAP_H
#define CULEAK_UTIL_NODEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/addrmap.h"

struct cl_nodemap {
    struct cl_addrmap pages;   /* page (as page_key) -> its array's index */
    uint32_t **arrays;         /* CL_NODEMAP_PER_PAGE numbers each, UINT32_MAX where none */
    size_t narrays, arrays_cap;
    uint32_t *chunk;           /* the arrays are carved from chunks of CHUNK_ARRAYS */
    size_t chunk_left;
    uint32_t **chunks;
    size_t nchunks, chunks_cap;
    struct cl_addrmap odd;     /* addresses that are not 16-byte aligned */
};

#define CL_NODEMAP_PER_PAGE 256

/* The number of addr, or UINT32_MAX. */
uint32_t cl_nodemap_get(const struct cl_nodemap *m, uint64_t addr);
/* Gives addr (0 is not an address, and addr has no number yet) the number value; false when out
 * of memory. */
bool cl_nodemap_put(struct cl_nodemap *m, uint64_t addr, uint32_t value);
/* Starts loading what a lookup of addr will read, for a caller a few lookups ahead. */
void cl_nodemap_prefetch(const struct cl_nodemap *m, uint64_t addr);
void cl_nodemap_free(struct cl_nodemap *m);

#endif
