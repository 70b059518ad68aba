#include "util/addrmap.h"

#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33;   /* murmur3's finaliser: heap addresses differ mostly in the middle bits */
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

void cl_addrmap_free(struct cl_addrmap *m)
{
    free(m->keys);
    free(m->values);
    *m = (struct cl_addrmap){0};
}

uint32_t cl_addrmap_get(const struct cl_addrmap *m, uint64_t key)
{
    if (!m->cap || !key)
        return UINT32_MAX;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->values[i];
        if (m->keys[i] == 0)
            return UINT32_MAX;
    }
}

static bool grow(struct cl_addrmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint64_t *keys = calloc(cap, sizeof *keys);
    uint32_t *values = malloc(cap * sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = slot_of(m->keys[i], cap);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        values[j] = m->values[i];
    }
    free(m->keys);
    free(m->values);
    m->keys = keys;
    m->values = values;
    m->cap = cap;
    return true;
}

uint32_t cl_addrmap_put(struct cl_addrmap *m, uint64_t key, uint32_t value, bool *inserted)
{
    *inserted = false;
    if (!key)
        return UINT32_MAX;
    if ((m->n + 1) * 4 > m->cap * 3 && !grow(m))   /* load factor 3/4 */
        return UINT32_MAX;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->values[i];
        if (m->keys[i] == 0) {
            m->keys[i] = key;
            m->values[i] = value;
            m->n++;
            *inserted = true;
            return value;
        }
    }
}
