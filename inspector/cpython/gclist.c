#include "cpython/gclist.h"

uint64_t py_gc_list_head(const struct py_layout *l, uint64_t gc, unsigned g)
{
    return g < PY_GC_GENERATIONS ? gc + l->gc_generations + g * (uint64_t)l->gc_generation_size
                                 : gc + l->gc_permanent;
}

uint64_t py_gc_list_bound(const struct cl_target *t, uint64_t node_size, uint64_t cap)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < t->maps.n; i++) {
        const struct cl_mapping *m = &t->maps.v[i];
        if ((m->perms & CL_MAP_W) || m->perms == 0)   /* 0: the source does not say */
            bytes += m->end - m->start;
    }
    uint64_t n = node_size ? bytes / node_size : 0;
    return n < cap ? n : cap;
}

/* _gc_next without the flags 3.12+ keep in its low bits; 0 when unreadable. */
static uint64_t next_of(struct cl_target *t, uint64_t node)
{
    return cl_read_ptr_or_0(t, node) & ~3ull;
}

uint64_t py_gc_list_walk(struct cl_target *t, uint64_t head, uint64_t bound,
                         bool (*visit)(void *arg, uint64_t node), void *arg, bool *broken)
{
    uint64_t n = 0, p = next_of(t, head), mark = p, power = 1, lap = 0;
    while (p && p != head && n < bound) {
        n++;
        if (!visit(arg, p)) {
            *broken = false;
            return n;
        }
        p = next_of(t, p);
        if (p == mark)
            break;   /* back at a node already visited: a loop that misses the head */
        if (++lap == power) {   /* Brent: move the mark ahead, double the stretch it watches */
            mark = p;
            power *= 2;
            lap = 0;
        }
    }
    *broken = p != head;
    return n;
}
