/* What a referent walker emitted, collected by a sink of its own (cpython/emit.h: a lookup that
 * builds nothing): shared by the CPython walkers' unit tests over heap_fixture.h. Header-only. */
#ifndef CULEAK_TESTS_UNIT_CPYTHON_WALK_VISITS_H
#define CULEAK_TESTS_UNIT_CPYTHON_WALK_VISITS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cpython/emit.h"

struct visit {
    uint64_t dst;
    enum py_edge edge;
    uint64_t payload;
};

struct visits {
    struct visit v[64];
    unsigned n;
    struct py_objects objects; /* the type cache the walkers read */
    struct py_emitter e;
};

static inline void visits_collect(void *arg, uint64_t dst, enum py_edge edge, uint64_t payload)
{
    struct visits *vs = arg;
    if (vs->n < sizeof vs->v / sizeof *vs->v)
        vs->v[vs->n++] = (struct visit){dst, edge, payload};
}

/* An emitter over rt whose referents go to vs. */
static inline void visits_init(struct visits *vs, struct py_runtime *rt)
{
    memset(vs, 0, sizeof *vs);
    static const struct py_emit_ops collect = {.edge = visits_collect};
    py_objects_init(&vs->objects, rt);
    vs->e = (struct py_emitter){&vs->objects, &collect, vs};
}

static inline void visits_free(struct visits *vs)
{
    py_objects_free(&vs->objects);
}

/* Whether dst was emitted with edge and payload. */
static inline bool visited(const struct visits *vs, uint64_t dst, enum py_edge edge,
                           uint64_t payload)
{
    for (unsigned i = 0; i < vs->n; i++)
        if (vs->v[i].dst == dst && vs->v[i].edge == edge && vs->v[i].payload == payload)
            return true;
    return false;
}

/* Whether dst was emitted as a named edge with this label. */
static inline bool visited_named(const struct visits *vs, uint64_t dst, const char *label)
{
    for (unsigned i = 0; i < vs->n; i++)
        if (vs->v[i].dst == dst && vs->v[i].edge == PY_E_NAMED &&
            strcmp((const char *)(uintptr_t)vs->v[i].payload, label) == 0)
            return true;
    return false;
}

#endif
