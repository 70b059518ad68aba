/* Lengauer and Tarjan's "simple" dominator algorithm (path compression without balancing,
 * O(E log V)): "A Fast Algorithm for Finding Dominators in a Flowgraph", TOPLAS 1(1), 1979.
 * Both of its recursions are unrolled: the DFS walks back up through the tree's parent links, and
 * compress keeps its path on an explicit stack, so a chain of millions of vertices needs no C
 * stack. Everything after the DFS works on preorder numbers (0 = the root), which keeps the arrays
 * the size of the reachable part and the semidominator comparisons plain integer ones. */
#include "graph/dominators.h"

#include <stdbool.h>
#include <stdlib.h>

#define NONE CL_GRAPH_NONE

/* The working state. Arrays are indexed by preorder number and hold preorder numbers. */
struct lt {
    uint32_t k;            /* vertices the root reaches */
    uint32_t *parent;      /* the DFS tree's parent; NONE for the root */
    uint32_t *dom;         /* in the DFS, the next edge of i to try; then idom (or a stand-in) */
    uint32_t *semi;        /* the semidominator; i until it is computed */
    uint32_t *ancestor; /* the link-eval forest: NONE until i is linked, then path-compressed */
    uint32_t *label; /* the vertex of least semi on the compressed path from i */
    uint32_t *bucket; /* the first vertex whose semidominator is i; NONE if none */
    uint32_t *next; /* the next vertex in i's bucket list */
    uint32_t *stack; /* compress's path, at most k deep */
    uint32_t *rfirst; /* k+1 entries: i's predecessors are rsrc[rfirst[i] .. rfirst[i+1]) */
    uint32_t *rsrc;
};

static void lt_free(struct lt *s)
{
    free(s->parent);
    free(s->dom);
    free(s->semi);
    free(s->ancestor);
    free(s->label);
    free(s->bucket);
    free(s->next);
    free(s->stack);
    free(s->rfirst);
    free(s->rsrc);
    *s = (struct lt){0};
}

/* first[] must not decrease, so that the edge ranges are well formed and their total (first[n] -
 * first[0]) bounds the predecessor count in 32 bits. */
static bool csr_ok(const struct cl_graph *g)
{
    for (uint32_t v = 0; v < g->n; v++)
        if (g->first[v] > g->first[v + 1])
            return false;
    return true;
}

static uint32_t *alloc_u32(size_t n)
{
    return malloc((n ? n : 1) * sizeof(uint32_t));
}

/* Numbers the vertices root reaches in preorder: num[v] (kept in the caller's idom array) and
 * order[i], with the tree in s->parent. No stack: backtracking follows parent, and s->dom[i]
 * remembers how far vertex i's edges have been tried. */
static int dfs(const struct cl_graph *g, uint32_t root, uint32_t *num, uint32_t *order,
               struct lt *s)
{
    uint32_t k = 1;
    num[root] = 0;
    order[0] = root;
    s->parent[0] = NONE;
    s->dom[0] = g->first[root];
    for (uint32_t i = 0; i != NONE;) {
        uint32_t end = g->first[order[i] + 1], e = s->dom[i], w = NONE;
        for (; e < end; e++) {
            if (g->dst[e] >= g->n)
                return CL_E_INTERNAL; /* an edge to no vertex: the caller built g wrong */
            if (num[g->dst[e]] == NONE) {
                w = g->dst[e];
                break;
            }
        }
        if (w == NONE) {
            i = s->parent[i];
            continue;
        }
        s->dom[i] = e + 1;
        num[w] = k;
        order[k] = w;
        s->parent[k] = i;
        s->dom[k] = g->first[w];
        i = k++;
    }
    s->k = k;
    return 0;
}

/* The reverse graph of the reached part, in preorder numbers: every edge out of a reached vertex
 * ends at a reached one, so no edge is dropped. */
static int build_preds(const struct cl_graph *g, const uint32_t *num, const uint32_t *order,
                       struct lt *s)
{
    uint32_t k = s->k;
    s->rfirst = calloc((size_t)k + 1, sizeof *s->rfirst);
    if (!s->rfirst)
        return CL_E_INTERNAL;
    for (uint32_t i = 0; i < k; i++)
        for (uint32_t e = g->first[order[i]]; e < g->first[order[i] + 1]; e++)
            s->rfirst[num[g->dst[e]] + 1]++;
    for (uint32_t i = 0; i < k; i++)
        s->rfirst[i + 1] += s->rfirst[i];
    s->rsrc = alloc_u32(s->rfirst[k]);
    if (!s->rsrc)
        return CL_E_INTERNAL;
    for (uint32_t i = 0; i < k; i++) /* rfirst[j] walks from j's start to its end ... */
        for (uint32_t e = g->first[order[i]]; e < g->first[order[i] + 1]; e++)
            s->rsrc[s->rfirst[num[g->dst[e]]]++] = i;
    for (uint32_t j = k; j > 0; j--) /* ... which is j+1's start: shift back by one */
        s->rfirst[j] = s->rfirst[j - 1];
    s->rfirst[0] = 0;
    return 0;
}

static int alloc_forest(struct lt *s)
{
    uint32_t k = s->k;
    s->semi = alloc_u32(k);
    s->ancestor = alloc_u32(k);
    s->label = alloc_u32(k);
    s->bucket = alloc_u32(k);
    s->next = alloc_u32(k);
    s->stack = alloc_u32(k);
    if (!s->semi || !s->ancestor || !s->label || !s->bucket || !s->next || !s->stack)
        return CL_E_INTERNAL;
    for (uint32_t i = 0; i < k; i++) {
        s->semi[i] = i;
        s->label[i] = i;
        s->ancestor[i] = NONE;
        s->bucket[i] = NONE;
    }
    return 0;
}

/* The vertex of least semi on the forest path from v up to, not including, its tree's root; the
 * path is compressed on the way. The paper's recursive compress(v) first compresses ancestor(v)
 * and then updates v: here the path is pushed bottom-up and fixed top-down from the stack. */
static uint32_t eval(struct lt *s, uint32_t v)
{
    uint32_t *anc = s->ancestor, *label = s->label;
    const uint32_t *semi = s->semi;
    if (anc[v] == NONE)
        return v;
    uint32_t top = 0;
    for (uint32_t x = v; anc[anc[x]] != NONE; x = anc[x])
        s->stack[top++] = x;
    while (top) {
        uint32_t y = s->stack[--top], a = anc[y];
        if (semi[label[a]] < semi[label[y]])
            label[y] = label[a];
        anc[y] = anc[a];
    }
    return label[v];
}

/* Steps 2 and 3 of the paper, in reverse preorder: w's semidominator from its predecessors, then,
 * once w is linked under its parent p, an idom (or a vertex with the same idom, to be resolved by
 * step 4) for everything in p's bucket. */
static void semidominators(struct lt *s)
{
    for (uint32_t w = s->k - 1; w > 0; w--) {
        uint32_t p = s->parent[w];
        for (uint32_t e = s->rfirst[w]; e < s->rfirst[w + 1]; e++) {
            uint32_t u = eval(s, s->rsrc[e]);
            if (s->semi[u] < s->semi[w])
                s->semi[w] = s->semi[u];
        }
        s->next[w] = s->bucket[s->semi[w]];
        s->bucket[s->semi[w]] = w;
        s->ancestor[w] = p;
        for (uint32_t v = s->bucket[p]; v != NONE; v = s->next[v]) {
            uint32_t u = eval(s, v);
            s->dom[v] = s->semi[u] < s->semi[v] ? u : p;
        }
        s->bucket[p] = NONE;
    }
}

/* Step 4, in preorder so that dom[dom[i]] is final; then back from numbers to vertices, in place
 * (idom holds each vertex's number until now). */
static void finish(struct lt *s, uint32_t n, uint32_t *idom, const uint32_t *order)
{
    s->dom[0] = 0;
    for (uint32_t i = 1; i < s->k; i++)
        if (s->dom[i] != s->semi[i])
            s->dom[i] = s->dom[s->dom[i]];
    for (uint32_t v = 0; v < n; v++)
        if (idom[v] != NONE)
            idom[v] = order[s->dom[idom[v]]];
}

static int run(const struct cl_graph *g, uint32_t root, uint32_t *idom, uint32_t *order,
               struct lt *s)
{
    s->parent = alloc_u32(g->n);
    s->dom = alloc_u32(g->n);
    if (!s->parent || !s->dom)
        return CL_E_INTERNAL;
    int rc = dfs(g, root, idom, order, s);
    if (!rc)
        rc = build_preds(g, idom, order, s);
    if (!rc)
        rc = alloc_forest(s);
    if (rc)
        return rc;
    semidominators(s);
    finish(s, g->n, idom, order);
    return 0;
}

int cl_dominators(const struct cl_graph *g, uint32_t root, uint32_t *idom, uint32_t *order,
                  uint32_t *nordered)
{
    *nordered = 0;
    for (uint32_t v = 0; v < g->n; v++)
        idom[v] = NONE;
    if (root >= g->n)
        return 0;
    if (!csr_ok(g))
        return CL_E_INTERNAL;
    struct lt s = {0};
    int rc = run(g, root, idom, order, &s);
    uint32_t k = s.k;
    lt_free(&s);
    if (!rc)
        *nordered = k;
    return rc;
}
