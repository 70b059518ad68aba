/* The part of a graph that matters for a set of targets: the vertices a root reaches that reach a
 * target. An object graph of millions of vertices is only read through a function, never copied,
 * and nothing here recurses, so chains millions long are fine. */
#ifndef CULEAK_GRAPH_REACH_H
#define CULEAK_GRAPH_REACH_H

#include <stdint.h>

#include "graph/dominators.h"

#define CL_GRAPH_END CL_GRAPH_NONE          /* out(): v has no p-th edge, nor any after it */
#define CL_GRAPH_SKIP (CL_GRAPH_NONE - 1)   /* out(): the p-th edge is not in the graph */

/* The head of vertex v's p-th out-edge, CL_GRAPH_SKIP, or CL_GRAPH_END. Called with p = 0, 1, ...
 * until CL_GRAPH_END, each edge possibly twice. */
typedef uint32_t cl_graph_out_fn(void *arg, uint32_t v, uint32_t p);

/* On entry mark[v] is nonzero for the targets; on return it is 1 for the vertices that root
 * reaches and that reach a target (a target reaches itself), 0 for the rest. n must be below
 * CL_GRAPH_SKIP; root >= n reaches nothing. One depth-first search finding strongly connected
 * components (Pearce, "A space-efficient algorithm for finding strongly connected components",
 * IPL 116(1), 2016): 4 bytes a vertex, and stacks as deep as the search. Returns 0, or
 * CL_E_INTERNAL on allocation failure or an edge to a vertex >= n (mark is then unspecified). */
int cl_graph_reaching(uint32_t n, uint32_t root, cl_graph_out_fn *out, void *arg, uint8_t *mark);

#endif
