#include "util/addrmap.h"

#include <stdlib.h>
#include <sys/mman.h>

/* Objects that lie close together in the target are walked close together (a pool's objects, a
 * list's items), so the slots of each 256-byte window of addresses are kept side by side: the
 * window's hash picks 32 consecutive slots (384 bytes) and the address within it (8-byte aligned)
 * the slot. On a 6M-object heap this halves the walk's time against hashing each address apart,
 * where nearly every lookup was a cache and TLB miss; a heap packed with 16-byte objects, whose
 * windows fill their slots, still takes fewer than 14 probe steps on average. */
static size_t slot_of(uint64_t key, size_t cap)
{
    uint64_t window = key >> 8;
    window ^= window >> 33;   /* murmur3's finaliser */
    window *= 0xff51afd7ed558ccdull;
    window ^= window >> 33;
    return (size_t)(window * 32 + ((key >> 3) & 31)) & (cap - 1);
}

static uint64_t key_at(const uint32_t *s, size_t i)
{
    return s[3 * i] | (uint64_t)s[3 * i + 1] << 32;
}

static void set_slot(uint32_t *s, size_t i, uint64_t key, uint32_t value)
{
    s[3 * i] = (uint32_t)key;
    s[3 * i + 1] = (uint32_t)(key >> 32);
    s[3 * i + 2] = value;
}

/* The slot holding key, or the empty slot where it goes. */
static size_t probe(const uint32_t *s, size_t cap, uint64_t key)
{
    size_t i = slot_of(key, cap);
    for (uint64_t k; (k = key_at(s, i)) != key && k; i = (i + 1) & (cap - 1))
        ;
    return i;
}

void cl_addrmap_free(struct cl_addrmap *m)
{
    free(m->slots);
    *m = (struct cl_addrmap){0};
}

uint32_t cl_addrmap_get(const struct cl_addrmap *m, uint64_t key)
{
    if (!m->cap || !key)
        return UINT32_MAX;
    size_t i = probe(m->slots, m->cap, key);
    return key_at(m->slots, i) ? m->slots[3 * i + 2] : UINT32_MAX;
}

/* Lookups land all over a table of hundreds of MB: with 4 KiB pages most of them would also miss
 * the TLB (twice over in a virtual machine). Advice only; the kernel may decline. */
static void prefer_huge_pages(void *p, size_t size)
{
    const uintptr_t huge = 2u << 20;
    uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t end = ((uintptr_t)p + size) & ~(huge - 1);
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
}

static bool grow(struct cl_addrmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint32_t *slots = cap <= SIZE_MAX / 12 ? calloc(cap, 12) : NULL;
    if (!slots)
        return false;
    prefer_huge_pages(slots, cap * 12);
    for (size_t i = 0; i < m->cap; i++) {
        uint64_t key = key_at(m->slots, i);
        if (key)
            set_slot(slots, probe(slots, cap, key), key, m->slots[3 * i + 2]);
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return true;
}

uint32_t cl_addrmap_find(struct cl_addrmap *m, uint64_t key, size_t *slot)
{
    *slot = SIZE_MAX;
    if (!key || ((m->n + 1) * 4 > m->cap * 3 && !grow(m)))   /* load factor 3/4 */
        return key ? cl_addrmap_get(m, key) : UINT32_MAX;
    size_t i = probe(m->slots, m->cap, key);
    if (key_at(m->slots, i))
        return m->slots[3 * i + 2];
    *slot = i;
    return UINT32_MAX;
}

void cl_addrmap_insert_at(struct cl_addrmap *m, size_t slot, uint64_t key, uint32_t value)
{
    set_slot(m->slots, slot, key, value);
    m->n++;
}

uint32_t cl_addrmap_put(struct cl_addrmap *m, uint64_t key, uint32_t value, bool *inserted)
{
    size_t slot;
    uint32_t found = cl_addrmap_find(m, key, &slot);
    *inserted = slot != SIZE_MAX;
    if (*inserted)
        cl_addrmap_insert_at(m, slot, key, value);
    return *inserted ? value : found;
}
