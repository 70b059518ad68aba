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

/* What counts as more than the median: at least this many bytes and a tenth of the median. */
#define CL_RANKS_MIN_EXCESS (1u << 20)

/* sources[i] names snaps[i] (its file), or is NULL (a target read now). With j, writes the
 * comparison as the value of the current key of j; else text to out. */
void cl_ranks_report(FILE *out, struct cl_json *j, const struct cl_snapshot *snaps,
                     const char *const *sources, size_t n);

#endif
