/* Drill-down within a holder, as Eclipse MAT's leak suspects: down the dominator tree from the
 * holder while one child retains most of its parent's bytes, to where the bytes spread over many
 * children (the accumulation point: `trainer.metrics['loss']`, 31 MiB in 5,000 objects), with a
 * breakdown of what a holder with none is made of. Built with the holders (holders.c); an
 * autograd graph counts as one: no drill enters one. */
#ifndef CULEAK_HOLDERS_DRILL_H
#define CULEAK_HOLDERS_DRILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cl_drill_options {
    uint32_t dominant_pct; /* a child retaining this share of its parent's bytes is gone into */
    uint32_t spread;       /* bytes spread over this many children make an accumulation point */
    uint32_t depth;        /* levels of breakdown below a holder's first entry */
};

#define CL_DRILL_DOMINANT_PCT 80
#define CL_DRILL_SPREAD 10
#define CL_DRILL_DEPTH 1
/* the children broken down at each level: at most this many, each retaining at least
 * 1/CL_DRILL_SHARE of its holder's bytes */
#define CL_DRILL_BREADTH 8
#define CL_DRILL_SHARE 20
#define CL_DRILL_MAX_ENTRIES 256 /* per holder, whatever the depth */

#define CL_NO_DRILL UINT32_MAX

struct cl_drill {
    const char *path;   /* from the holder's root, as a Python path (NULL: not reached by the
                           holder's walk, which then stopped early) */
    uint64_t bytes;     /* what it retains, every device together */
    uint32_t children;  /* the objects among which those bytes spread: its children in the
                           dominator tree that retain any */
    uint32_t parent;    /* the entry (of the same holder) it breaks down, or CL_NO_DRILL */
    uint32_t level;     /* 0 for a holder's first entry */
    uint32_t vertex;    /* the holders' graph's sub-vertex (holders.c) */
    bool accumulation;  /* children >= spread */
};

/* A dominator tree over n vertices, as holders.c has it: each vertex's retained bytes, and its
 * children that retain any (first/child in CSR form). */
struct cl_dom_tree {
    uint32_t n;
    const uint64_t *retained;
    const uint32_t *first, *child;
};

/* Whether the drill may go into vertex x: an object or a tensor (not an autograd node, a
 * storage, a module or its dict). */
typedef bool (*cl_drill_enterable)(void *arg, uint32_t x);

/* Holder vertex hx's entries appended to *v (n, cap: a vector): the first where the chain of
 * dominant children from hx ends, then its breakdown, depth-first. False on allocation failure. */
bool cl_drill_holder(const struct cl_dom_tree *t, uint32_t hx, const struct cl_drill_options *opt,
                     cl_drill_enterable enterable, void *arg, struct cl_drill **v, size_t *n,
                     size_t *cap);

#endif
