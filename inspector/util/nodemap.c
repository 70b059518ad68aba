#include "util/nodemap.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

#define PAGE_SHIFT 12
#define SLOT_SHIFT 4          /* a slot per 16 bytes */
#define CHUNK_BYTES (64u << 10)

/* A page's numbers grow by half through these sizes, so that at most a third of a block is
 * unused: bench heaps' pages hold 40-odd objects each, a full page of 16-byte objects 256. */
static const uint16_t block_sizes[CL_NODEMAP_BLOCK_SIZES] = {
    4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, CL_NODEMAP_PER_PAGE,
};

static bool aligned(uint64_t addr)
{
    return (addr & ((1u << SLOT_SHIFT) - 1)) == 0;
}

static size_t slot_in_page(uint64_t addr)
{
    return (size_t)(addr >> SLOT_SHIFT) & (CL_NODEMAP_PER_PAGE - 1);
}

#define GROUP_SHIFT (PAGE_SHIFT + 6)
_Static_assert(1u << (GROUP_SHIFT - PAGE_SHIFT) == CL_NODEMAP_GROUP_PAGES, "a group's pages");

static uint64_t group_number(uint64_t addr)
{
    return addr >> GROUP_SHIFT;
}

/* Group n's slot in near: groups numbered in a row (within 16 GiB) have slots in a row, and each
 * 16 GiB its own offset, so that a heap's regions (brk's, mmap's) seldom share slots. */
static size_t near_slot(const struct cl_nodemap *m, uint64_t n)
{
    return (size_t)(n + ((n >> 16) * 0x9e3779b97f4a7c15ull >> 32)) & m->near_mask;
}

/* The index + 1 of the group numbered n by hash, or 0 when it has none. Out of line, so that the
 * rest of a lookup (near's slot, the page's entry and rank) is inlined, where it had been two
 * calls: a heap's groups are found in near. */
__attribute__((noinline)) static uint32_t group_by_hash(const struct cl_nodemap *m, uint64_t n)
{
    uint32_t i = cl_addrmap_get(&m->by_group, cl_addrmap_number_key(n));
    return i == UINT32_MAX ? 0 : i + 1;
}

/* The index + 1 of the group numbered n, or 0 when it has none. */
static inline uint32_t group_of(const struct cl_nodemap *m, uint64_t n)
{
    uint32_t g = m->near ? m->near[near_slot(m, n)] : 0;
    return g && m->group_numbers[g - 1] == n ? g : group_by_hash(m, n);
}

/* near again, with 8 slots a group (rebuilt at 4): 32 bytes for 256 KiB of the heap. */
static bool near_rebuild(struct cl_nodemap *m)
{
    size_t size = 1024;
    while (size < 8 * m->ngroups)
        size *= 2;
    uint32_t *near = calloc(size, sizeof *near);
    if (!near)
        return false;
    free(m->near);
    m->near = near;
    m->near_mask = size - 1;
    for (size_t g = 0; g < m->ngroups; g++)
        near[near_slot(m, m->group_numbers[g])] = (uint32_t)g + 1;
    return true;
}

static size_t page_in_group(uint64_t addr)
{
    return (size_t)(addr >> PAGE_SHIFT) % CL_NODEMAP_GROUP_PAGES;
}

/* A page's entry: its index in pages, or NO_PAGE for a page with no small objects; HAS_OTHERS
 * when some of its objects are in m->others. */
#define NO_PAGE 0x7ffffffeu
#define HAS_OTHERS 0x80000000u

/* addr's page's entry (NO_PAGE when its group has none yet). */
static inline uint32_t entry_of(const struct cl_nodemap *m, uint64_t addr)
{
    uint32_t g = group_of(m, group_number(addr));
    return g ? m->groups[g - 1][page_in_group(addr)] : NO_PAGE;
}

static inline const struct cl_nodemap_page *page_at(const struct cl_nodemap *m, uint32_t v)
{
    return (v & ~HAS_OTHERS) == NO_PAGE ? NULL : &m->pages[v & ~HAS_OTHERS];
}

/* The bits set in w. Every lookup counts some: one instruction where the CPU has it (x86-64
 * since 2008), where __builtin_popcountll of a build that may not assume it calls libgcc's 20. */
static inline size_t ones(uint64_t w)
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
static inline size_t rank(const struct cl_nodemap_page *p, size_t slot, bool *present)
{
    uint64_t word = p->starts[slot / 64], bit = 1ull << (slot % 64);
    *present = (word & bit) != 0;
    return p->before[slot / 64] + ones(word & (bit - 1));
}

uint32_t cl_nodemap_get(const struct cl_nodemap *m, uint64_t addr)
{
    if (!aligned(addr))
        return cl_addrmap_get(&m->others, addr);
    uint32_t v = entry_of(m, addr);
    const struct cl_nodemap_page *p = page_at(m, v);
    if (p) {
        bool present;
        size_t k = rank(p, slot_in_page(addr), &present);
        if (present)
            return p->numbers[k];
    }
    return v & HAS_OTHERS ? cl_addrmap_get(&m->others, addr) : UINT32_MAX;
}

/* A block of block_sizes[size] numbers: a free one, or carved from the chunk. */
static uint32_t *block_new(struct cl_nodemap *m, size_t size)
{
    void **free_list = &m->free_blocks[size];
    if (*free_list) {   /* a free block's first 8 bytes link the next: every size holds them */
        uint32_t *b = *free_list;
        memcpy(free_list, b, sizeof *free_list);
        return b;
    }
    size_t bytes = block_sizes[size] * sizeof(uint32_t);
    if (m->chunk_left < bytes) {   /* the rest of the chunk, under 1 KiB, is left unused */
        if (!CL_VEC_RESERVE(m->chunks, m->nchunks, m->chunks_cap))
            return NULL;
        char *c = malloc(CHUNK_BYTES);
        if (!c)
            return NULL;
        m->chunks[m->nchunks++] = m->chunk = c;
        m->chunk_left = CHUNK_BYTES;
    }
    uint32_t *b = (uint32_t *)(void *)m->chunk;
    m->chunk += bytes;
    m->chunk_left -= bytes;
    return b;
}

static void block_free(struct cl_nodemap *m, uint32_t *b, size_t size)
{
    memcpy(b, &m->free_blocks[size], sizeof m->free_blocks[size]);
    m->free_blocks[size] = b;
}

/* The entry of addr's page, in a new group of NO_PAGE entries if it has none; NULL when out of
 * memory. */
static uint32_t *page_entry(struct cl_nodemap *m, uint64_t addr)
{
    uint64_t n = group_number(addr);
    uint32_t g = group_of(m, n);
    if (!g) {
        bool inserted;
        if (m->ngroups == m->groups_cap) { /* groups and their numbers grow together */
            size_t cap = m->groups_cap;
            if (!cl_vec_grow((void **)&m->groups, &cap, sizeof *m->groups) ||
                !cl_vec_resize((void **)&m->group_numbers, cap, sizeof *m->group_numbers))
                return NULL;
            m->groups_cap = cap;
        }
        if (m->ngroups >= UINT32_MAX - 1 ||
            cl_addrmap_put(&m->by_group, cl_addrmap_number_key(n), (uint32_t)m->ngroups,
                           &inserted) == UINT32_MAX)
            return NULL;
        g = (uint32_t)++m->ngroups;
        m->group_numbers[g - 1] = n;
        for (size_t i = 0; i < CL_NODEMAP_GROUP_PAGES; i++)
            m->groups[g - 1][i] = NO_PAGE;
        /* near only speeds lookups up: one it cannot make room in finds the group by hash */
        if (4 * m->ngroups > m->near_mask + 1)
            (void)near_rebuild(m);
        else
            m->near[near_slot(m, n)] = g;
    }
    return &m->groups[g - 1][page_in_group(addr)];
}

/* Gives the object at slot of p the number value, making room among p's numbers. */
static bool page_put(struct cl_nodemap *m, struct cl_nodemap_page *p, size_t slot, uint32_t value)
{
    bool present;
    size_t k = rank(p, slot, &present), last = CL_NODEMAP_PER_PAGE / 64 - 1;
    if (present) {
        p->numbers[k] = value;
        return true;
    }
    size_t count = p->before[last] + ones(p->starts[last]);
    if (!p->numbers || count == block_sizes[p->block_size]) {
        size_t size = p->numbers ? p->block_size + 1u : 0;
        uint32_t *b = block_new(m, size);
        if (!b)
            return false;
        if (p->numbers) {
            memcpy(b, p->numbers, count * sizeof *b);
            block_free(m, p->numbers, p->block_size);
        }
        p->numbers = b;
        p->block_size = (uint8_t)size;
    }
    memmove(&p->numbers[k + 1], &p->numbers[k], (count - k) * sizeof *p->numbers);
    p->numbers[k] = value;
    p->starts[slot / 64] |= 1ull << (slot % 64);
    for (size_t w = slot / 64 + 1; w <= last; w++)
        p->before[w]++;
    return true;
}

bool cl_nodemap_put(struct cl_nodemap *m, uint64_t addr, uint64_t size, uint32_t value)
{
    bool inserted;
    if (!aligned(addr))
        return cl_addrmap_put(&m->others, addr, value, &inserted) != UINT32_MAX;
    uint32_t *v = page_entry(m, addr);
    if (!v)
        return false;
    if (size > CL_NODEMAP_SMALL) {
        *v |= HAS_OTHERS;
        return cl_addrmap_put(&m->others, addr, value, &inserted) != UINT32_MAX;
    }
    if (!page_at(m, *v)) {
        if (m->npages >= NO_PAGE || !CL_VEC_RESERVE(m->pages, m->npages, m->pages_cap))
            return false;
        m->pages[m->npages] = (struct cl_nodemap_page){.numbers = NULL};
        *v = (*v & HAS_OTHERS) | (uint32_t)m->npages++;
    }
    return page_put(m, &m->pages[*v & ~HAS_OTHERS], slot_in_page(addr), value);
}

void cl_nodemap_prefetch(const struct cl_nodemap *m, uint64_t addr)
{
    const struct cl_nodemap_page *p = aligned(addr) ? page_at(m, entry_of(m, addr)) : NULL;
    if (p)
        __builtin_prefetch(p);
}

void cl_nodemap_free(struct cl_nodemap *m)
{
    for (size_t i = 0; i < m->nchunks; i++)
        free(m->chunks[i]);
    free(m->chunks);
    free(m->pages);
    free(m->groups);
    free(m->group_numbers);
    free(m->near);
    cl_addrmap_free(&m->by_group);
    cl_addrmap_free(&m->others);
    *m = (struct cl_nodemap){0};
}
