#include "util/nodemap.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

#define PAGE_SHIFT 12
#define SLOT_SHIFT 4                  /* a number per 16 bytes */
#define CHUNK_ARRAYS 256              /* 256 KiB of arrays at a time */

static bool aligned(uint64_t addr)
{
    return (addr & ((1u << SLOT_SHIFT) - 1)) == 0;
}

static size_t slot_in_page(uint64_t addr)
{
    return (size_t)(addr >> SLOT_SHIFT) & (CL_NODEMAP_PER_PAGE - 1);
}

/* The key of addr's page in m->pages, never 0 (the map's empty key). The map hashes a key's bits
 * above 8 and keeps bits 3-7 as the offset in that hash's 32 slots (for objects' addresses, so that
 * neighbours lie together); a page's key gives it a hash of its own and a varied offset. Keys with
 * one offset, or neighbours sharing a hash, would pile up in runs of full slots (probed 10-20% of
 * the walk's time). */
static uint64_t page_key(uint64_t addr)
{
    uint64_t page = addr >> PAGE_SHIFT;
    return (page + 1) << 8 | (page & 31) << 3;
}

/* The array of the page whose key is page, or NULL when it has none. */
static uint32_t *page_array(const struct cl_nodemap *m, uint64_t page)
{
    uint32_t at = cl_addrmap_get(&m->pages, page);
    return at == UINT32_MAX ? NULL : m->arrays[at];
}

static uint32_t *array_of(const struct cl_nodemap *m, uint64_t addr)
{
    return page_array(m, page_key(addr));
}

uint32_t cl_nodemap_get(const struct cl_nodemap *m, uint64_t addr)
{
    if (!aligned(addr))
        return cl_addrmap_get(&m->odd, addr);
    const uint32_t *a = array_of(m, addr);
    return a ? a[slot_in_page(addr)] : UINT32_MAX;
}

/* A new array, every number absent. */
static uint32_t *new_array(struct cl_nodemap *m)
{
    if (!m->chunk_left) {
        if (!CL_VEC_RESERVE(m->chunks, m->nchunks, m->chunks_cap))
            return NULL;
        uint32_t *c = malloc((size_t)CHUNK_ARRAYS * CL_NODEMAP_PER_PAGE * sizeof *c);
        if (!c)
            return NULL;
        m->chunks[m->nchunks++] = m->chunk = c;
        m->chunk_left = CHUNK_ARRAYS;
    }
    uint32_t *a = m->chunk;
    m->chunk += CL_NODEMAP_PER_PAGE;
    m->chunk_left--;
    memset(a, 0xff, CL_NODEMAP_PER_PAGE * sizeof *a);
    return a;
}

bool cl_nodemap_put(struct cl_nodemap *m, uint64_t addr, uint32_t value)
{
    bool inserted;
    if (!aligned(addr))
        return cl_addrmap_put(&m->odd, addr, value, &inserted) != UINT32_MAX;
    uint32_t *a = array_of(m, addr);
    if (!a) {
        size_t slot;
        uint64_t page = page_key(addr);
        if (m->narrays >= UINT32_MAX - 1 || cl_addrmap_find(&m->pages, page, &slot) != UINT32_MAX ||
            slot == SIZE_MAX || !CL_VEC_RESERVE(m->arrays, m->narrays, m->arrays_cap) ||
            !(a = new_array(m)))
            return false;
        cl_addrmap_insert_at(&m->pages, slot, page, (uint32_t)m->narrays);
        m->arrays[m->narrays++] = a;
    }
    a[slot_in_page(addr)] = value;
    return true;
}

void cl_nodemap_prefetch(const struct cl_nodemap *m, uint64_t addr)
{
    const uint32_t *a = aligned(addr) ? array_of(m, addr) : NULL;
    if (a)
        __builtin_prefetch(&a[slot_in_page(addr)]);
}

void cl_nodemap_free(struct cl_nodemap *m)
{
    for (size_t i = 0; i < m->nchunks; i++)
        free(m->chunks[i]);
    free(m->chunks);
    free(m->arrays);
    cl_addrmap_free(&m->pages);
    cl_addrmap_free(&m->odd);
    *m = (struct cl_nodemap){0};
}
