/* The GC's object lists: each generation keeps its tracked objects on a circular list of
 * PyGC_Heads that starts and ends at the generation's own head. */
#ifndef CULEAK_CPYTHON_GCLIST_H
#define CULEAK_CPYTHON_GCLIST_H

#include <stdbool.h>
#include <stdint.h>

#include "cpython/layout.h"
#include "target/target.h"

/* The head of GC list g (0 to PY_GC_GENERATIONS - 1: the generations; PY_GC_GENERATIONS: the
 * permanent generation) of the GC state at gc. */
uint64_t py_gc_list_head(const struct py_layout *l, uint64_t gc, unsigned g);

/* The most nodes a GC list can hold: no more than the target's writable memory holds of nodes of
 * node_size bytes (the smallest GC object: its PyGC_Head, ob_refcnt and ob_type), and never more
 * than cap. */
uint64_t py_gc_list_bound(const struct cl_target *t, uint64_t node_size, uint64_t cap);

/* Follows _gc_next from head, calling visit with each node's address (its PyGC_Head), for at most
 * bound nodes, or until visit returns false. Links that loop short of the head stop the walk at
 * the first revisit (Brent's cycle finding: a looped list costs a few times its length, not the
 * bound). Returns the nodes visited; *broken says the list did not come back to its head (a walk
 * visit stopped is not broken). */
uint64_t py_gc_list_walk(struct cl_target *t, uint64_t head, uint64_t bound,
                         bool (*visit)(void *arg, uint64_t node), void *arg, bool *broken);

#endif
