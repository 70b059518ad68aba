#include "target/mappings.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cl_mappings_add(struct cl_mappings *ms, const struct cl_mapping *m)
{
    if (ms->n == ms->cap) {
        size_t cap = ms->cap ? ms->cap * 2 : 64;
        struct cl_mapping *v = realloc(ms->v, cap * sizeof *v);
        if (!v)
            return -1;
        ms->v = v;
        ms->cap = cap;
    }
    struct cl_mapping *dst = &ms->v[ms->n];
    *dst = *m;
    if (m->path && !(dst->path = strdup(m->path)))
        return -1;
    ms->n++;
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const struct cl_mapping *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

void cl_mappings_sort(struct cl_mappings *ms)
{
    if (ms->n > 1)
        qsort(ms->v, ms->n, sizeof *ms->v, by_start);
}

const struct cl_mapping *cl_mappings_find(const struct cl_mappings *ms, uint64_t addr)
{
    size_t lo = 0, hi = ms->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct cl_mapping *m = &ms->v[mid];
        if (addr < m->start)
            hi = mid;
        else if (addr >= m->end)
            lo = mid + 1;
        else
            return m;
    }
    return NULL;
}

void cl_mappings_free(struct cl_mappings *ms)
{
    for (size_t i = 0; i < ms->n; i++)
        free(ms->v[i].path);
    free(ms->v);
    memset(ms, 0, sizeof *ms);
}

static int parse_line(struct cl_mappings *ms, char *line)
{
    uint64_t start, end, offset;
    char perms[8];
    int path_at = 0;
    if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end, perms,
               &offset, &path_at) < 4 || end <= start)
        return 0;
    struct cl_mapping m = {.start = start, .end = end, .offset = offset};
    m.perms = (perms[0] == 'r' ? CL_MAP_R : 0) | (perms[1] == 'w' ? CL_MAP_W : 0) |
              (perms[2] == 'x' ? CL_MAP_X : 0);
    char *path = path_at ? line + path_at : NULL;
    if (path && *path) {
        static const char deleted[] = " (deleted)";
        size_t n = strlen(path), dn = sizeof deleted - 1;
        if (n > dn && strcmp(path + n - dn, deleted) == 0) {
            path[n - dn] = '\0';
            m.perms |= CL_MAP_DELETED;
        }
        m.path = path;
    }
    return cl_mappings_add(ms, &m);
}

int cl_mappings_parse_proc_maps(struct cl_mappings *ms, const char *text, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, text, len);
    copy[len] = '\0';
    int rc = 0;
    for (char *line = copy, *next; line && *line && rc == 0; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        rc = parse_line(ms, line);
    }
    free(copy);
    cl_mappings_sort(ms);
    return rc;
}
