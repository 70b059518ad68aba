/* An open-addressing hash map from target addresses to 32-bit indices: the one lookup structure
 * under the object graph, sized for tens of millions of objects. */
#ifndef CULEAK_UTIL_ADDRMAP_H
#define CULEAK_UTIL_ADDRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cl_addrmap {
    uint64_t *keys;     /* 0 = empty (address 0 is never an object) */
    uint32_t *values;
    size_t cap, n;      /* cap is a power of two */
};

void cl_addrmap_free(struct cl_addrmap *m);
/* The value for key, or UINT32_MAX. */
uint32_t cl_addrmap_get(const struct cl_addrmap *m, uint64_t key);
/* Inserts key if absent; returns its value (existing, or value when inserted), UINT32_MAX on
 * allocation failure. *inserted tells which. */
uint32_t cl_addrmap_put(struct cl_addrmap *m, uint64_t key, uint32_t value, bool *inserted);

#endif
