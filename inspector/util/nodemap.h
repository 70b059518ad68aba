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

/* Gives addr (not 0, and with no number yet), an object of size bytes, the number value; false
 * when out of memory. The size only chooses where the number is kept. */
bool cl_nodemap_put(struct cl_nodemap *m, uint64_t addr, uint64_t size, uint32_t value);
/* Starts loading what a lookup of addr will read, for a caller a few lookups ahead. */
void cl_nodemap_prefetch(const struct cl_nodemap *m, uint64_t addr);
void cl_nodemap_free(struct cl_nodemap *m);

/* ---- the lookup, inline in its callers: the walk asks it several times an object ---- */

#define CL_NODEMAP_PAGE_SHIFT 12
#define CL_NODEMAP_SLOT_SHIFT 4 /* a slot per 16 bytes */
#define CL_NODEMAP_GROUP_SHIFT (CL_NODEMAP_PAGE_SHIFT + 6)
_Static_assert(1u << (CL_NODEMAP_GROUP_SHIFT - CL_NODEMAP_PAGE_SHIFT) == CL_NODEMAP_GROUP_PAGES,
               "a group's pages");
/* A page's entry: its index in pages, or CL_NODEMAP_NO_PAGE for a page with no small objects;
 * CL_NODEMAP_HAS_OTHERS when some of its objects are in m->others. */
#define CL_NODEMAP_NO_PAGE 0x7ffffffeu
#define CL_NODEMAP_HAS_OTHERS 0x80000000u

/* The index + 1 of the group numbered n by hash, or 0 (out of line: a heap's groups are found
 * in near). */
uint32_t cl_nodemap_group_by_hash(const struct cl_nodemap *m, uint64_t n);

static inline bool cl_nodemap_aligned(uint64_t addr)
{
    return (addr & ((1u << CL_NODEMAP_SLOT_SHIFT) - 1)) == 0;
}

static inline size_t cl_nodemap_slot_in_page(uint64_t addr)
{
    return (size_t)(addr >> CL_NODEMAP_SLOT_SHIFT) & (CL_NODEMAP_PER_PAGE - 1);
}

/* Group n's slot in near: groups numbered in a row (within 16 GiB) have slots in a row, and each
 * 16 GiB its own offset, so that a heap's regions (brk's, mmap's) seldom share slots. */
static inline size_t cl_nodemap_near_slot(const struct cl_nodemap *m, uint64_t n)
{
    return (size_t)(n + ((n >> 16) * 0x9e3779b97f4a7c15ull >> 32)) & m->near_mask;
}

/* The index + 1 of the group numbered n, or 0 when it has none. */
static inline uint32_t cl_nodemap_group_of(const struct cl_nodemap *m, uint64_t n)
{
    uint32_t g = m->near ? m->near[cl_nodemap_near_slot(m, n)] : 0;
    return g && m->group_numbers[g - 1] == n ? g : cl_nodemap_group_by_hash(m, n);
}

/* addr's page's entry (CL_NODEMAP_NO_PAGE when its group has none yet). */
static inline uint32_t cl_nodemap_entry_of(const struct cl_nodemap *m, uint64_t addr)
{
    uint32_t g = cl_nodemap_group_of(m, addr >> CL_NODEMAP_GROUP_SHIFT);
    size_t page = (size_t)(addr >> CL_NODEMAP_PAGE_SHIFT) % CL_NODEMAP_GROUP_PAGES;
    return g ? m->groups[g - 1][page] : CL_NODEMAP_NO_PAGE;
}

static inline const struct cl_nodemap_page *cl_nodemap_page_at(const struct cl_nodemap *m,
                                                               uint32_t v)
{
    v &= ~CL_NODEMAP_HAS_OTHERS;
    return v == CL_NODEMAP_NO_PAGE ? NULL : &m->pages[v];
}

/* The bits set in w. Every lookup counts some: one instruction where the CPU has it (x86-64
 * since 2008), where __builtin_popcountll of a build that may not assume it calls libgcc's 20. */
static inline size_t cl_nodemap_ones(uint64_t w)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("popcnt")) {
        __asm__("popcnt %1, %0" : "=r"(w) : "r"(w));
        return (size_t)w;
    }
#endif
    return (size_t)__builtin_popcountll(w);
}

/* How many of p's objects lie before slot, and whether one starts there. */
static inline size_t cl_nodemap_rank(const struct cl_nodemap_page *p, size_t slot, bool *present)
{
    uint64_t word = p->starts[slot / 64], bit = 1ull << (slot % 64);
    *present = (word & bit) != 0;
    return p->before[slot / 64] + cl_nodemap_ones(word & (bit - 1));
}

/* The number of addr, or UINT32_MAX. Always inline: as a call of its own (GCC split it out of
 * the walk), its prologue and epilogue cost a quarter of it. */
__attribute__((always_inline)) static inline uint32_t cl_nodemap_get(const struct cl_nodemap *m,
                                                                     uint64_t addr)
{
    if (!cl_nodemap_aligned(addr))
        return cl_addrmap_get(&m->others, addr);
    uint32_t v = cl_nodemap_entry_of(m, addr);
    const struct cl_nodemap_page *p = cl_nodemap_page_at(m, v);
    if (p) {
        bool present;
        size_t k = cl_nodemap_rank(p, cl_nodemap_slot_in_page(addr), &present);
        if (present)
            return p->numbers[k];
    }
    return v & CL_NODEMAP_HAS_OTHERS ? cl_addrmap_get(&m->others, addr) : UINT32_MAX;
}

#endif
