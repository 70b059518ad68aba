/* Target addresses of objects to 32-bit node numbers, laid out like the target's memory. CPython
 * allocates objects of up to 512 bytes from pools of one size, 16-byte aligned and packed: each
 * 4 KiB page that holds such objects gets a bit per 16 bytes that marks where an object starts
 * and the numbers of its objects in address order, found through groups of 64 pages, so that
 * objects walked together (a pool's neighbours) share cache lines, a page costs 4 bytes an object
 * rather than 4 bytes a slot, and nothing is ever rehashed. Larger objects come from malloc, a
 * few to a page or one to many pages: they go to a hash map, as does the rare address that is
 * not 16-byte aligned (a static object). */
#ifndef CULEAK_UTIL_NODEMAP_H
#define CULEAK_UTIL_NODEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/addrmap.h"

#define CL_NODEMAP_PER_PAGE 256
#define CL_NODEMAP_SMALL 512 /* the largest object CPython's pools hold (SMALL_REQUEST_THRESHOLD) */
#define CL_NODEMAP_BLOCK_SIZES 13

/* The small objects of one page. An object's number is numbers[k] where k counts the objects
 * before it: before[w] for the 64-slot words below its own, and a popcount within it. */
struct cl_nodemap_page {
    uint64_t starts[CL_NODEMAP_PER_PAGE / 64];
    uint32_t *numbers; /* a block of the map's, NULL until the first */
    uint8_t before[CL_NODEMAP_PER_PAGE / 64]; /* at most 192 */
    uint8_t block_size; /* the block's size class */
};

#define CL_NODEMAP_GROUP_PAGES 64

struct cl_nodemap {
    /* Each page's entry: its index in pages, and whether `others` holds some of its objects. The
     * entries of 64 neighbouring pages (256 KiB, a pymalloc arena or a quarter of one) lie
     * together in a group, found by its number (the address's bits 18-63) first in near, a
     * table with 8 slots a group where groups numbered in a row have slots in a row (two loads:
     * the slot, and the group's number to check it), else in by_group, which holds them all: its
     * hash and probe alone took 60-odd instructions a lookup. */
    struct cl_addrmap by_group;
    uint32_t *near; /* a group's index + 1, or 0 */
    size_t near_mask;
    uint64_t *group_numbers; /* by group index, at groups' capacity */
    uint32_t (*groups)[CL_NODEMAP_GROUP_PAGES];
    size_t ngroups, groups_cap;
    struct cl_nodemap_page *pages;
    size_t npages, pages_cap;
    /* numbers' blocks, carved from chunks; a block outgrown goes to its size's free list */
    void *free_blocks[CL_NODEMAP_BLOCK_SIZES];
    char *chunk;
    size_t chunk_left;
    char **chunks;
    size_t nchunks, chunks_cap;
    struct cl_addrmap others; /* large objects, and addresses that are not 16-byte aligned */
};

/* The number of addr, or UINT32_MAX. */
uint32_t cl_nodemap_get(const struct cl_nodemap *m, uint64_t addr);
/* Gives addr (not 0, and with no number yet), an object of size bytes, the number value; false
 * when out of memory. The size only chooses where the number is kept. */
bool cl_nodemap_put(struct cl_nodemap *m, uint64_t addr, uint64_t size, uint32_t value);
/* Starts loading what a lookup of addr will read, for a caller a few lookups ahead. */
void cl_nodemap_prefetch(const struct cl_nodemap *m, uint64_t addr);
void cl_nodemap_free(struct cl_nodemap *m);

#endif
