#include "engine/ranks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/info.h"
#include "report/text.h"
#include "util/vec.h"

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static const struct cl_snapshot_entry *find(const struct cl_snapshot *s, const char *pattern)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].path, pattern) == 0)
            return &s->v[i];
    return NULL;
}

static uint64_t bytes_in(const struct cl_snapshot *s, const char *pattern)
{
    const struct cl_snapshot_entry *e = find(s, pattern);
    return e ? e->bytes : 0;
}

static int by_excess(const void *a, const void *b)
{
    const struct cl_rank_outlier *x = a, *y = b;
    uint64_t ex = x->bytes - x->median, ey = y->bytes - y->median;
    return ex < ey ? 1 : ex > ey ? -1 : x->snap < y->snap ? -1 : x->snap > y->snap;
}

/* Every (rank, pattern) more than the median of the ranks, biggest excess first, into r; false
 * when out of memory. */
static bool outliers(struct cl_ranks *r)
{
    const struct cl_snapshot *snaps = r->snaps;
    size_t n = r->n, cap = 0;
    uint64_t *values = malloc((n + 1) * sizeof *values);
    bool ok = values != NULL;
    for (size_t s = 0; ok && s < n; s++) {
        for (size_t e = 0; ok && e < snaps[s].n; e++) {
            const char *pattern = snaps[s].v[e].path;
            bool seen = false;   /* each pattern once: where it first appears */
            for (size_t t = 0; t < s && !seen; t++)
                seen = find(&snaps[t], pattern) != NULL;
            if (seen)
                continue;
            for (size_t t = 0; t < n; t++)
                values[t] = bytes_in(&snaps[t], pattern);
            qsort(values, n, sizeof *values, by_value);
            /* of two ranks, the one that holds less: "the median" of two would be their mean,
             * half of what one rank holds more than the other */
            uint64_t median = n == 2  ? values[0]
                              : n % 2 ? values[n / 2]
                                      : values[n / 2 - 1] / 2 + values[n / 2] / 2;
            for (size_t t = 0; ok && t < n; t++) {
                uint64_t b = bytes_in(&snaps[t], pattern);
                if (b <= median || b - median < CL_RANKS_MIN_EXCESS || b - median < median / 10)
                    continue;
                ok = CL_VEC_RESERVE(r->outliers, r->noutliers, cap);
                if (ok)
                    r->outliers[r->noutliers++] = (struct cl_rank_outlier){t, pattern, b, median};
            }
        }
    }
    free(values);
    if (ok && r->noutliers)
        qsort(r->outliers, r->noutliers, sizeof *r->outliers, by_excess);
    return ok;
}

int cl_ranks_build(const struct cl_snapshot *snaps, const char *const *sources, size_t n,
                   struct cl_ranks *out, struct cl_error *err)
{
    *out = (struct cl_ranks){.snaps = snaps, .sources = sources, .n = n};
    if (outliers(out))
        return 0;
    cl_ranks_free(out);
    return cl_error_set(err, CL_E_INTERNAL, "out of memory comparing %zu ranks", n);
}

void cl_ranks_free(struct cl_ranks *r)
{
    free(r->outliers);
    memset(r, 0, sizeof *r);
}

/* "rank 3", or "pid 1234" when the target's environment named no rank. */
static void name_of(const struct cl_snapshot *s, char *out, size_t cap)
{
    if (s->rank.rank >= 0)
        snprintf(out, cap, "rank %d", s->rank.rank);
    else
        snprintf(out, cap, "pid %d", s->pid);
}

void cl_ranks_write_json(struct cl_json *j, const struct cl_ranks *r)
{
    cl_json_begin_object(j);
    cl_json_key(j, "ranks");
    cl_json_begin_array(j);
    for (size_t s = 0; s < r->n; s++) {
        const struct cl_snapshot *snap = &r->snaps[s];
        cl_json_begin_object(j);
        cl_json_key(j, "source");
        cl_json_string(j, r->sources[s]);
        cl_json_key(j, "pid");
        cl_json_int(j, snap->pid);
        cl_json_rank(j, &snap->rank);
        cl_json_key(j, "hostname");
        cl_json_string(j, snap->hostname);
        cl_json_key(j, "storages");
        cl_json_int(j, (long long)snap->storages);
        cl_json_key(j, "bytes");
        cl_json_int(j, (long long)snap->bytes);
        cl_json_end_object(j);
    }
    cl_json_end_array(j);
    cl_json_key(j, "above_median");
    cl_json_begin_array(j);
    for (size_t i = 0; i < r->noutliers; i++) {
        const struct cl_rank_outlier *o = &r->outliers[i];
        cl_json_begin_object(j);
        cl_json_key(j, "index");
        cl_json_int(j, (long long)o->snap);
        cl_json_key(j, "pattern");
        cl_json_string(j, o->pattern);
        cl_json_key(j, "bytes");
        cl_json_int(j, (long long)o->bytes);
        cl_json_key(j, "median");
        cl_json_int(j, (long long)o->median);
        cl_json_end_object(j);
    }
    cl_json_end_array(j);
    cl_json_end_object(j);
}

void cl_ranks_write_text(FILE *out, const struct cl_ranks *r)
{
    char name[64], a[32], b[32];
    fprintf(out, "%zu ranks:\n  %-10s %6s %-16s %8s %9s %14s  %s\n", r->n, "", "local", "host",
            "pid", "storages", "bytes", "source");
    for (size_t s = 0; s < r->n; s++) {
        const struct cl_snapshot *snap = &r->snaps[s];
        name_of(snap, name, sizeof name);
        char local[16] = "-";
        if (snap->rank.local_rank >= 0)
            snprintf(local, sizeof local, "%d", snap->rank.local_rank);
        fprintf(out, "  %-10s %6s %-16s %8d %9llu %14llu  %s\n", name, local, snap->hostname,
                snap->pid, (unsigned long long)snap->storages, (unsigned long long)snap->bytes,
                r->sources[s] ? r->sources[s] : "now");
    }
    if (!r->noutliers && r->n == 2)
        fprintf(out, "neither rank holds %u MiB or more than the other in any pattern\n",
                CL_RANKS_MIN_EXCESS >> 20);
    else if (!r->noutliers)
        fprintf(out, "no rank holds %u MiB or more above the median of the ranks in any pattern\n",
                CL_RANKS_MIN_EXCESS >> 20);
    for (size_t i = 0; i < r->noutliers; i++) {
        const struct cl_rank_outlier *o = &r->outliers[i];
        name_of(&r->snaps[o->snap], name, sizeof name);
        cl_bytes_text(a, sizeof a, o->bytes - o->median);
        cl_bytes_text(b, sizeof b, o->median);
        char other[64] = "the median";
        if (r->n == 2)
            name_of(&r->snaps[1 - o->snap], other, sizeof other);
        fprintf(out, "%s: +%s in %s more than %s (%s)\n", name, a, o->pattern, other, b);
    }
}
