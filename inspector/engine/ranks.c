#include "engine/ranks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/info.h"
#include "report/text.h"
#include "util/vec.h"

struct outlier {
    size_t snap;
    const char *pattern;
    uint64_t bytes, median;
};

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
    const struct outlier *x = a, *y = b;
    uint64_t ex = x->bytes - x->median, ey = y->bytes - y->median;
    return ex < ey ? 1 : ex > ey ? -1 : x->snap < y->snap ? -1 : x->snap > y->snap;
}

/* Every (rank, pattern) more than the median of the ranks, biggest excess first; NULL when
 * there are none (or no memory: then *n is 0 too). */
static struct outlier *outliers(const struct cl_snapshot *snaps, size_t n, size_t *count)
{
    struct outlier *v = NULL;
    size_t cap = 0;
    uint64_t *values = malloc((n + 1) * sizeof *values);
    *count = 0;
    for (size_t s = 0; values && s < n; s++) {
        for (size_t e = 0; e < snaps[s].n; e++) {
            const char *pattern = snaps[s].v[e].path;
            bool seen = false;   /* each pattern once: where it first appears */
            for (size_t t = 0; t < s && !seen; t++)
                seen = find(&snaps[t], pattern) != NULL;
            if (seen)
                continue;
            for (size_t t = 0; t < n; t++)
                values[t] = bytes_in(&snaps[t], pattern);
            qsort(values, n, sizeof *values, by_value);
            uint64_t median = n % 2 ? values[n / 2] : values[n / 2 - 1] / 2 + values[n / 2] / 2;
            for (size_t t = 0; t < n; t++) {
                uint64_t b = bytes_in(&snaps[t], pattern);
                if (b <= median || b - median < CL_RANKS_MIN_EXCESS || b - median < median / 10)
                    continue;
                if (CL_VEC_RESERVE(v, *count, cap))
                    v[(*count)++] = (struct outlier){t, pattern, b, median};
            }
        }
    }
    free(values);
    if (*count)
        qsort(v, *count, sizeof *v, by_excess);
    return v;
}

/* "rank 3", or "pid 1234" when the target's environment named no rank. */
static void name_of(const struct cl_snapshot *s, char *out, size_t cap)
{
    if (s->rank.rank >= 0)
        snprintf(out, cap, "rank %d", s->rank.rank);
    else
        snprintf(out, cap, "pid %d", s->pid);
}

void cl_ranks_report(FILE *out, struct cl_json *j, const struct cl_snapshot *snaps,
                     const char *const *sources, size_t n)
{
    size_t count;
    struct outlier *v = outliers(snaps, n, &count);
    char name[64], a[32], b[32];
    if (j) {
        cl_json_begin_object(j);
        cl_json_key(j, "ranks");
        cl_json_begin_array(j);
        for (size_t s = 0; s < n; s++) {
            cl_json_begin_object(j);
            cl_json_key(j, "source");
            cl_json_string(j, sources[s]);
            cl_json_key(j, "pid");
            cl_json_int(j, snaps[s].pid);
            cl_json_rank(j, &snaps[s].rank);
            cl_json_key(j, "hostname");
            cl_json_string(j, snaps[s].hostname);
            cl_json_key(j, "storages");
            cl_json_int(j, (long long)snaps[s].storages);
            cl_json_key(j, "bytes");
            cl_json_int(j, (long long)snaps[s].bytes);
            cl_json_end_object(j);
        }
        cl_json_end_array(j);
        cl_json_key(j, "above_median");
        cl_json_begin_array(j);
        for (size_t i = 0; i < count; i++) {
            cl_json_begin_object(j);
            cl_json_key(j, "index");
            cl_json_int(j, (long long)v[i].snap);
            cl_json_key(j, "pattern");
            cl_json_string(j, v[i].pattern);
            cl_json_key(j, "bytes");
            cl_json_int(j, (long long)v[i].bytes);
            cl_json_key(j, "median");
            cl_json_int(j, (long long)v[i].median);
            cl_json_end_object(j);
        }
        cl_json_end_array(j);
        cl_json_end_object(j);
        free(v);
        return;
    }
    fprintf(out, "%zu ranks:\n  %-10s %6s %-16s %8s %9s %14s  %s\n", n, "", "local", "host", "pid",
            "storages", "bytes", "source");
    for (size_t s = 0; s < n; s++) {
        name_of(&snaps[s], name, sizeof name);
        char local[16] = "-";
        if (snaps[s].rank.local_rank >= 0)
            snprintf(local, sizeof local, "%d", snaps[s].rank.local_rank);
        fprintf(out, "  %-10s %6s %-16s %8d %9llu %14llu  %s\n", name, local, snaps[s].hostname,
                snaps[s].pid, (unsigned long long)snaps[s].storages,
                (unsigned long long)snaps[s].bytes, sources[s] ? sources[s] : "now");
    }
    if (!count)
        fprintf(out, "no rank holds %u MiB or more above the median of the ranks in any pattern\n",
                CL_RANKS_MIN_EXCESS >> 20);
    for (size_t i = 0; i < count; i++) {
        name_of(&snaps[v[i].snap], name, sizeof name);
        cl_bytes_text(a, sizeof a, v[i].bytes - v[i].median);
        cl_bytes_text(b, sizeof b, v[i].median);
        fprintf(out, "%s: +%s in %s more than the median (%s)\n", name, a, v[i].pattern, b);
    }
    free(v);
}
