#include "holders/drill.h"

#include <stdlib.h>

#include "util/vec.h"

/* The end of the chain of dominant children from x: while one child retains dominant_pct of its
 * parent's bytes and may be gone into. */
static uint32_t descend(const struct cl_dom_tree *t, uint32_t x, const struct cl_drill_options *o,
                        cl_drill_enterable enterable, void *arg)
{
    for (uint32_t steps = 0; steps < t->n; steps++) { /* a tree: bounded by its size */
        uint32_t best = CL_NO_DRILL;
        for (uint32_t k = t->first[x]; k < t->first[x + 1]; k++)
            if (best == CL_NO_DRILL || t->retained[t->child[k]] > t->retained[best])
                best = t->child[k];
        /* in floating point: a crafted heap may claim any size */
        if (best == CL_NO_DRILL ||
            (double)t->retained[best] * 100 < (double)t->retained[x] * o->dominant_pct ||
            !enterable(arg, best))
            return x;
        x = best;
    }
    return x;
}

static bool add(struct cl_drill **v, size_t *n, size_t *cap, struct cl_drill e)
{
    if (!CL_VEC_RESERVE(*v, *n, *cap))
        return false;
    (*v)[(*n)++] = e;
    return true;
}

/* The entry where the chain from x ends, and (above depth) the children of it that retain a
 * share of the holder's bytes, largest first, each drilled the same way. */
static bool drill(const struct cl_dom_tree *t, uint32_t x, uint64_t whole, uint32_t parent,
                  uint32_t level, const struct cl_drill_options *o, cl_drill_enterable enterable,
                  void *arg, struct cl_drill **v, size_t *n, size_t *cap, size_t first)
{
    x = descend(t, x, o, enterable, arg);
    uint32_t children = t->first[x + 1] - t->first[x];
    uint32_t me = (uint32_t)(*n - first);
    if (!add(v, n, cap,
             (struct cl_drill){NULL, t->retained[x], children, parent, level, x,
                               children >= o->spread}))
        return false;
    if (children >= o->spread || level >= o->depth || *n - first >= CL_DRILL_MAX_ENTRIES)
        return true;
    uint32_t taken[CL_DRILL_BREADTH];
    size_t ntaken = 0;
    for (; ntaken < CL_DRILL_BREADTH && *n - first < CL_DRILL_MAX_ENTRIES; ntaken++) {
        /* the largest not yet taken */
        uint32_t best = CL_NO_DRILL;
        for (uint32_t k = t->first[x]; k < t->first[x + 1]; k++) {
            uint32_t c = t->child[k];
            bool seen = false;
            for (size_t i = 0; i < ntaken && !seen; i++)
                seen = taken[i] == c;
            if (!seen && enterable(arg, c) &&
                (best == CL_NO_DRILL || t->retained[c] > t->retained[best]))
                best = c;
        }
        if (best == CL_NO_DRILL || t->retained[best] < whole / CL_DRILL_SHARE)
            break;
        taken[ntaken] = best;
        if (!drill(t, best, whole, me, level + 1, o, enterable, arg, v, n, cap, first))
            return false;
    }
    return true;
}

bool cl_drill_holder(const struct cl_dom_tree *t, uint32_t hx, const struct cl_drill_options *opt,
                     cl_drill_enterable enterable, void *arg, struct cl_drill **v, size_t *n,
                     size_t *cap)
{
    return drill(t, hx, t->retained[hx], CL_NO_DRILL, 0, opt, enterable, arg, v, n, cap, *n);
}
