/* Immediate dominators of a directed graph given in CSR form, for retained-size sums over object
 * graphs of millions of vertices: nothing here recurses, so chains millions long are fine. The
 * graph is only read; duplicate edges and self-loops are allowed. */
#ifndef CULEAK_GRAPH_DOMINATORS_H
#define CULEAK_GRAPH_DOMINATORS_H

#include <stdint.h>

#include "util/error.h"

/* "No vertex": the idom of a vertex the root does not reach. */
#define CL_GRAPH_NONE UINT32_MAX

struct cl_graph {
    uint32_t n;              /* vertices 0..n-1 */
    const uint32_t *first;   /* n+1 entries: the edges out of v are dst[first[v] .. first[v+1]) */
    const uint32_t *dst;
};

/* idom[v] for every vertex: the immediate dominator of v in the graph rooted at `root`,
 * idom[root] = root, CL_GRAPH_NONE for vertices the root does not reach. Also fills order (n
 * entries with the reachable vertices in DFS preorder, count in *nordered) so that every vertex
 * comes after its immediate dominator: callers sum subtree values by walking order backwards.
 * root >= n (n == 0 included) reaches nothing: every idom is CL_GRAPH_NONE and *nordered is 0.
 * Returns 0, or CL_E_INTERNAL on allocation failure or on a malformed graph (first[] decreasing, or
 * an edge out of a reachable vertex to one >= n); idom, order and *nordered are then unspecified.
 * Iterative (no recursion: graphs have millions of vertices and chains millions long). */
int cl_dominators(const struct cl_graph *g, uint32_t root, uint32_t *idom, uint32_t *order,
                  uint32_t *nordered);

#endif
