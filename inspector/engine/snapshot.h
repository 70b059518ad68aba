/* Snapshots of what holds tensor memory, and their differences: for "what grew since the last
 * step". A snapshot aggregates storages by their holding path with indices collapsed
 * (`__main__.history[17]` counts under `__main__.history[*]`), so growth reads as a pattern. */
#ifndef CULEAK_ENGINE_SNAPSHOT_H
#define CULEAK_ENGINE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/session.h"

struct cl_snapshot_entry {
    char *path;                /* collapsed holder path, or "(unreachable)" etc. */
    uint64_t storages, bytes;
};

struct cl_snapshot {
    struct cl_snapshot_entry *v;
    size_t n, cap;
    uint64_t storages, bytes;
    /* where and when it was taken, and which rank of a job it was (-1: not known) */
    int pid;
    struct cl_rank rank;
    char time[32];            /* UTC, ISO 8601 */
    char hostname[256], culeak[32], python[64], torch[64];
    /* read from a file whose patterns kept frames' lines (patterns 1), collapsed again as this
     * culeak makes them */
    bool recollapsed;
    /* the storages by device and category (report/categories.h), keyed "cpu parameters"; none
     * in a file of an older culeak (has_categories false) */
    struct cl_snapshot_entry *cat;
    size_t ncat, cat_cap;
    bool has_categories;
};

/* The way patterns are made, written in each snapshot file ("patterns"): 2 since frame roots
 * leave out their line; 1 (a file without the field) kept it. */
#define CL_SNAPSHOT_PATTERNS 2

/* Saves a snapshot as a JSON document (kind "culeak-snapshot"); reads one back, checking every
 * field (a file may come from anywhere): CL_E_IO when it is not one this culeak reads. */
void cl_snapshot_write(FILE *out, const struct cl_snapshot *snap);
int cl_snapshot_read(const char *path, struct cl_snapshot *out, struct cl_error *err);

/* A snapshot of the session now (its holders built first), or of models already built: the
 * tensors and their holders, their categories (h NULL: none), and where they were read (pid,
 * rank, versions). */
int cl_snapshot_take(struct cl_session *s, const struct py_walk_options *opt,
                     struct cl_snapshot *out, struct cl_error *err);
int cl_snapshot_from(struct py_heap *h, const struct torch_tensors *tt, const struct cl_holders *hs,
                     int pid, const struct cl_rank *rank, const char *python, const char *torch,
                     struct cl_snapshot *out, struct cl_error *err);
void cl_snapshot_free(struct cl_snapshot *snap);

/* The holder pattern of a path (marked, cpython/path.h, or plain text): every index and
 * numeric key replaced with `[*]`, a frame root's line left out, and a path through an autograd
 * graph cut after `.grad_fn` (its nodes and saved tensors count there). Pure. */
void cl_path_collapse(const char *path, char *out, size_t cap);

/* One line: "+3 storages, +384.0 KiB; grew: __main__.history[*] +384.0 KiB; by category: cpu
 * saved for backward +384.0 KiB" (the three biggest of each). Returns the byte growth (negative
 * when memory was released). */
int64_t cl_snapshot_delta(const struct cl_snapshot *before, const struct cl_snapshot *after,
                          char *line, size_t cap);
/* The device whose tensor bytes grew most from before to after, by the sums of its categories
 * (each storage in one: report/categories.h), into device ("cuda:0"); returns that growth, 0
 * when none grew (watch --dump-on-growth). */
int64_t cl_snapshot_device_growth(const struct cl_snapshot *before, const struct cl_snapshot *after,
                                  char device[32]);
/* Every path whose storages or bytes changed, biggest change first: 0, or CL_E_INTERNAL (out
 * of memory) before anything is written. */
int cl_snapshot_diff(FILE *out, const struct cl_snapshot *before, const struct cl_snapshot *after,
                     bool json, struct cl_error *err);

#endif
