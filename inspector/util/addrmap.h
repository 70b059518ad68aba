/* An open-addressing hash map from target addresses to 32-bit indices (types, autograd nodes,
 * the object index's page groups and large objects), sized for tens of millions of keys. */
#ifndef CULEAK_UTIL_ADDRMAP_H
#define CULEAK_UTIL_ADDRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A slot is three words (key low, key high, value) side by side, so that a lookup that finds its
 * key touches one cache line, in 12 bytes a slot. Key 0 is empty: address 0 is never an object. */
struct cl_addrmap {
    uint32_t *slots;
    size_t cap, n;      /* cap is a power of two */
};

void cl_addrmap_free(struct cl_addrmap *m);
/* The value for key, or UINT32_MAX. */
uint32_t cl_addrmap_get(const struct cl_addrmap *m, uint64_t key);
/* Inserts key if absent; returns its value (existing, or value when inserted), UINT32_MAX on
 * allocation failure. *inserted tells which. */
uint32_t cl_addrmap_put(struct cl_addrmap *m, uint64_t key, uint32_t value, bool *inserted);

/* A lookup that may be followed by an insert, in one probe: for a caller that decides whether to
 * insert only after a miss. Returns the value for key, or UINT32_MAX with *slot set to where key
 * goes (SIZE_MAX when no room could be made, or key is 0); the slot holds until m next changes. */
uint32_t cl_addrmap_find(struct cl_addrmap *m, uint64_t key, size_t *slot);
/* The key for a number (a node's index, a page's number) rather than an address. The map hashes
 * a key's bits above 8 and keeps bits 3-7 as its offset among that hash's 32 slots, so that
 * neighbouring objects lie together; numbers that follow each other would crowd a few slots and
 * pile up in runs of full ones. This gives each number a hash of its own and an offset. */
static inline uint64_t cl_addrmap_number_key(uint64_t n)
{
    return (n + 1) << 8 | (n & 31) << 3;
}

void cl_addrmap_insert_at(struct cl_addrmap *m, size_t slot, uint64_t key, uint32_t value);

#endif
