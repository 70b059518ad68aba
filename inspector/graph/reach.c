/* Pearce's variant of Tarjan's algorithm keeps one number a vertex (rindex) instead of an index
 * and a lowlink: while a vertex is being searched it holds the least index it reaches on the
 * stacks, and once its component is done, the component's number, counted down from n so that it
 * is above every index still in use (index and component numbers never meet: index counts the
 * vertices visited and not yet in a component). A vertex reaches a target when its component
 * holds one or has an edge to a component that reaches one: components finish after every
 * component they reach, so that is known when each one finishes. */
#include "graph/reach.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/vec.h"

struct frame {   /* a vertex being searched: its next edge, and whether it roots a component */
    uint32_t v, p;
    bool root;
};

struct search {
    uint32_t *rindex;   /* 0: not visited yet */
    uint8_t *mark;      /* reaches a target: final once the vertex's component is */
    struct frame *frames;
    size_t nframes, frames_cap;
    uint32_t *stack;    /* visited vertices whose component is not done, not being searched */
    size_t nstack, stack_cap;
    uint32_t index, component;
};

static bool visit(struct search *s, uint32_t v)
{
    if (!CL_VEC_RESERVE(s->frames, s->nframes, s->frames_cap))
        return false;
    s->rindex[v] = s->index++;
    s->frames[s->nframes++] = (struct frame){v, 0, true};
    return true;
}

/* v's edges are all searched: it roots a component (with the vertices above it on the stack) or
 * waits on the stack for the vertex that does. */
static bool finish(struct search *s, const struct frame *f)
{
    uint32_t v = f->v;
    if (!f->root) {
        if (!CL_VEC_RESERVE(s->stack, s->nstack, s->stack_cap))
            return false;
        s->stack[s->nstack++] = v;
        return true;
    }
    size_t k = s->nstack;
    uint8_t reaches = s->mark[v];
    while (k && s->rindex[v] <= s->rindex[s->stack[k - 1]])
        reaches |= s->mark[s->stack[--k]];
    for (size_t j = k; j < s->nstack; j++) {
        s->rindex[s->stack[j]] = s->component;
        s->mark[s->stack[j]] = reaches;
    }
    s->index -= (uint32_t)(s->nstack - k) + 1;
    s->nstack = k;
    s->rindex[v] = s->component--;
    s->mark[v] = reaches;
    return true;
}

static int search(struct search *s, uint32_t n, uint32_t root, cl_graph_out_fn *out, void *arg)
{
    if (!visit(s, root))
        return CL_E_INTERNAL;
    while (s->nframes) {
        struct frame *f = &s->frames[s->nframes - 1];
        uint32_t v = f->v, w = out(arg, v, f->p);
        if (w == CL_GRAPH_END) {
            struct frame done = *f;
            s->nframes--;
            if (!finish(s, &done))
                return CL_E_INTERNAL;
            continue;
        }
        if (w != CL_GRAPH_SKIP) {
            if (w >= n)
                return CL_E_INTERNAL;
            if (!s->rindex[w]) { /* searched first; this edge is looked at again after */
                if (!visit(s, w))
                    return CL_E_INTERNAL;
                continue;
            }
            if (s->rindex[w] < s->rindex[v]) { /* w is on the stacks: v's component is open */
                s->rindex[v] = s->rindex[w];
                f->root = false;
            }
            s->mark[v] |= s->mark[w]; /* final if w's component is done, else it is v's */
        }
        f->p++;
    }
    return 0;
}

int cl_graph_reaching(uint32_t n, uint32_t root, cl_graph_out_fn *out, void *arg, uint8_t *mark)
{
    if (root >= n) {
        memset(mark, 0, n);
        return 0;
    }
    if (n >= CL_GRAPH_SKIP)
        return CL_E_INTERNAL;
    struct search s = {
        .rindex = calloc(n, sizeof *s.rindex), .mark = mark, .index = 1, .component = n};
    int rc = s.rindex ? search(&s, n, root, out, arg) : CL_E_INTERNAL;
    for (uint32_t v = 0; !rc && v < n; v++)
        mark[v] = s.rindex[v] && mark[v];
    free(s.rindex);
    free(s.frames);
    free(s.stack);
    return rc;
}
