#include "util/nodemap.h"

#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

#define PAGE_SHIFT 12
#define SLOT_SHIFT 4         /* a number per 16 bytes */
#define CHUNK_ARRAYS 256     /* 256 KiB of arrays at a time */

static bool aligned(uint64_t addr)
{
    return (addr & ((1u << SLOT_SHIFT) - 1)) == 0;
}

static size_t slot_in_page(uint64_t addr)
{
    return (size_t)(addr >> SLOT_SHIFT) & (CL_NODEMAP_PER_PAGE - 1);
}

static uint64_t page_key(uint64_t addr)
{
    return cl_addrmap_number_key(addr >> PAGE_SHIFT);
}

/* A page's entry: its array's index, or NO_ARRAY; HAS_OTHERS when some of its objects are in
 * m->others. Never UINT32_MAX, which the map gives for a page with no entry. */
#define NO_ARRAY 0x7ffffffeu
#define HAS_OTHERS 0x80000000u

/* The array of the page whose entry is v, or NULL. */
static uint32_t *array_at(const struct cl_nodemap *m, uint32_t v)
{
    return (v & ~HAS_OTHERS) == NO_ARRAY ? NULL : m->arrays[v & ~HAS_OTHERS];
}

uint32_t cl_nodemap_get(const struct cl_nodemap *m, uint64_t addr)
{
    if (!aligned(addr))
        return cl_addrmap_get(&m->others, addr);
    uint32_t v = cl_addrmap_get(&m->pages, page_key(addr));
    if (v == UINT32_MAX)
        return UINT32_MAX;
    const uint32_t *a = array_at(m, v);
    uint32_t n = a ? a[slot_in_page(addr)] : UINT32_MAX;
    return n == UINT32_MAX && (v & HAS_OTHERS) ? cl_addrmap_get(&m->others, addr) : n;
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

/* The entry of addr's page, made (with no array) if it has none; NULL when out of memory. */
static uint32_t *page_entry(struct cl_nodemap *m, uint64_t addr)
{
    bool inserted;
    uint64_t key = page_key(addr);
    uint32_t *v = cl_addrmap_value(&m->pages, key);
    if (!v && cl_addrmap_put(&m->pages, key, NO_ARRAY, &inserted) != UINT32_MAX)
        v = cl_addrmap_value(&m->pages, key);
    return v;
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
    uint32_t *a = array_at(m, *v);
    if (!a) {
        if (m->narrays >= NO_ARRAY || !CL_VEC_RESERVE(m->arrays, m->narrays, m->arrays_cap) ||
            !(a = new_array(m)))
            return false;
        *v = (*v & HAS_OTHERS) | (uint32_t)m->narrays;
        m->arrays[m->narrays++] = a;
    }
    a[slot_in_page(addr)] = value;
    return true;
}

void cl_nodemap_prefetch(const struct cl_nodemap *m, uint64_t addr)
{
    uint32_t v = aligned(addr) ? cl_addrmap_get(&m->pages, page_key(addr)) : UINT32_MAX;
    const uint32_t *a = v == UINT32_MAX ? NULL : array_at(m, v);
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
    cl_addrmap_free(&m->others);
    *m = (struct cl_nodemap){0};
}
