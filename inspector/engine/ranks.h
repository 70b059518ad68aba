/* The ranks of one job side by side, from a snapshot of each (the files `culeak merge` reads,
 * or the targets of one command line): each rank's totals, and where a rank holds more than the
 * median of the ranks, by holder pattern: "rank 3: +2.1 GiB in __main__.outputs[*] more than the
 * median (4.0 MiB)". A rank leaks where the others do not; so it shows. */
#ifndef CULEAK_ENGINE_RANKS_H
#define CULEAK_ENGINE_RANKS_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/snapshot.h"
#include "report/json.h"
#include "util/error.h"

/* What counts as more than the median: at least this many bytes and a tenth of the median. */
#define CL_RANKS_MIN_EXCESS (1u << 20)

/* A rank's pattern that holds more than the median of the ranks (of two ranks, more than the
 * other: median is then what the other holds). */
struct cl_rank_outlier {
    size_t snap;               /* the rank's index in snaps */
    const char *pattern;
    uint64_t bytes, median;
};

/* The comparison's rows: the ranks (borrowed) and every outlier, biggest excess first. */
struct cl_ranks {
    const struct cl_snapshot *snaps;
    const char *const *sources;   /* sources[i] names snaps[i] (its file), or NULL (read now) */
    size_t n;
    struct cl_rank_outlier *outliers;
    size_t noutliers;
};

/* 0, or CL_E_INTERNAL when out of memory (nothing to write then). */
int cl_ranks_build(const struct cl_snapshot *snaps, const char *const *sources, size_t n,
                   struct cl_ranks *out, struct cl_error *err);
void cl_ranks_free(struct cl_ranks *r);
/* The comparison as text, or as the value of the current key of j. */
void cl_ranks_write_text(FILE *out, const struct cl_ranks *r);
void cl_ranks_write_json(struct cl_json *j, const struct cl_ranks *r);

#endif
