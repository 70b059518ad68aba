#include "util/nodemap.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

#define CHUNK_BYTES (64u << 10)

/* A page's numbers grow by half through these sizes, so that at most a third of a block is
 * unused: bench heaps' pages hold 40-odd objects each, a full page of 16-byte objects 256. */
static const uint16_t block_sizes[CL_NODEMAP_BLOCK_SIZES] = {
    4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, CL_NODEMAP_PER_PAGE,
};

uint32_t cl_nodemap_group_by_hash(const struct cl_nodemap *m, uint64_t n)
{
    uint32_t i = cl_addrmap_get(&m->by_group, cl_addrmap_number_key(n));
    return i == UINT32_MAX ? 0 : i + 1;
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
        near[cl_nodemap_near_slot(m, m->group_numbers[g])] = (uint32_t)g + 1;
    return true;
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

/* The entry of addr's page, in a new group of CL_NODEMAP_NO_PAGE entries if it has none; NULL when out of
 * memory. */
static uint32_t *page_entry(struct cl_nodemap *m, uint64_t addr)
{
    uint64_t n = addr >> CL_NODEMAP_GROUP_SHIFT;
    uint32_t g = cl_nodemap_group_of(m, n);
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
            m->groups[g - 1][i] = CL_NODEMAP_NO_PAGE;
        /* near only speeds lookups up: one it cannot make room in finds the group by hash */
        if (4 * m->ngroups > m->near_mask + 1)
            (void)near_rebuild(m);
        else
            m->near[cl_nodemap_near_slot(m, n)] = g;
    }
    return &m->groups[g - 1][(addr >> CL_NODEMAP_PAGE_SHIFT) % CL_NODEMAP_GROUP_PAGES];
}

/* Gives the object at slot of p the number value, making room among p's numbers. */
static bool page_put(struct cl_nodemap *m, struct cl_nodemap_page *p, size_t slot, uint32_t value)
{
    bool present;
    size_t k = cl_nodemap_rank(p, slot, &present), last = CL_NODEMAP_PER_PAGE / 64 - 1;
    if (present) {
        p->numbers[k] = value;
        return true;
    }
    size_t count = p->before[last] + cl_nodemap_ones(p->starts[last]);
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
    if (k < count) /* a pool's objects mostly come in address order: appended */
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
    if (!cl_nodemap_aligned(addr))
        return cl_addrmap_put(&m->others, addr, value, &inserted) != UINT32_MAX;
    uint32_t *v = page_entry(m, addr);
    if (!v)
        return false;
    if (size > CL_NODEMAP_SMALL) {
        *v |= CL_NODEMAP_HAS_OTHERS;
        return cl_addrmap_put(&m->others, addr, value, &inserted) != UINT32_MAX;
    }
    if (!cl_nodemap_page_at(m, *v)) {
        if (m->npages >= CL_NODEMAP_NO_PAGE || !CL_VEC_RESERVE(m->pages, m->npages, m->pages_cap))
            return false;
        m->pages[m->npages] = (struct cl_nodemap_page){.numbers = NULL};
        *v = (*v & CL_NODEMAP_HAS_OTHERS) | (uint32_t)m->npages++;
    }
    return page_put(m, &m->pages[*v & ~CL_NODEMAP_HAS_OTHERS], cl_nodemap_slot_in_page(addr),
                    value);
}

void cl_nodemap_prefetch(const struct cl_nodemap *m, uint64_t addr)
{
    const struct cl_nodemap_page *p =
        cl_nodemap_aligned(addr) ? cl_nodemap_page_at(m, cl_nodemap_entry_of(m, addr)) : NULL;
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
