#include "target/mappings.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "util/error.h"
#include "util/vec.h"
#include "util/bsearch.h"

int cl_mappings_add(struct cl_mappings *ms, const struct cl_mapping *m)
{
    if (!CL_VEC_RESERVE(ms->v, ms->n, ms->cap))
        return CL_E_INTERNAL;
    struct cl_mapping *dst = &ms->v[ms->n];
    *dst = *m;
    if (m->path && !(dst->path = strdup(m->path)))
        return CL_E_INTERNAL;
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

struct below {
    const struct cl_mapping *v;
    uint64_t addr;
};

/* Whether mapping i ends at or below addr (mappings are sorted and disjoint). */
static bool ends_below(size_t i, const void *ctx)
{
    const struct below *q = ctx;
    return q->v[i].end <= q->addr;
}

const struct cl_mapping *cl_mappings_find(const struct cl_mappings *ms, uint64_t addr)
{
    struct below q = {ms->v, addr};
    size_t i = cl_partition_point(ms->n, ends_below, &q);
    return i < ms->n && ms->v[i].start <= addr ? &ms->v[i] : NULL;
}

void cl_mappings_free(struct cl_mappings *ms)
{
    for (size_t i = 0; i < ms->n; i++)
        free(ms->v[i].path);
    free(ms->v);
    memset(ms, 0, sizeof *ms);
}

/* A hex number of 1 to 16 digits at *p (the kernel writes at most 16), advancing *p; false for
 * none or one too wide for 64 bits, which sscanf would have made undefined. */
static bool hex_field(const char **p, uint64_t *out)
{
    uint64_t v = 0;
    int n = 0;
    for (const char *s = *p;; s++, n++) {
        int d = *s >= '0' && *s <= '9'   ? *s - '0'
                : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
                : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
                                         : -1;
        if (d < 0) {
            *p = s;
            *out = v;
            return n > 0;
        }
        if (n == 16)
            return false;
        v = v << 4 | (uint64_t)d;
    }
}

/* Skips one field and the spaces after it; false when the line ends first. */
static bool skip_field(const char **p)
{
    const char *s = *p;
    while (*s && *s != ' ')
        s++;
    if (s == *p || !*s)
        return false;
    while (*s == ' ')
        s++;
    *p = s;
    return true;
}

/* "start-end perms offset dev inode   path": a line that is not that is skipped. */
static int parse_line(struct cl_mappings *ms, char *line)
{
    const char *p = line;
    uint64_t start, end, offset;
    if (!hex_field(&p, &start) || *p++ != '-' || !hex_field(&p, &end) || *p++ != ' ' ||
        end <= start)
        return 0;
    const char *perms = p;
    if (strlen(perms) < 4 || !skip_field(&p) || !hex_field(&p, &offset) || *p++ != ' ')
        return 0;
    uint64_t major, minor, inode = 0;
    if (!hex_field(&p, &major) || *p++ != ':' || !hex_field(&p, &minor) || *p++ != ' ' ||
        major > UINT32_MAX || minor > UINT32_MAX)
        return 0;
    for (; *p >= '0' && *p <= '9'; p++)   /* inode, then the spaces before the path */
        if (__builtin_mul_overflow(inode, 10, &inode) ||
            __builtin_add_overflow(inode, (uint64_t)(*p - '0'), &inode))
            return 0;
    if (*p && *p != ' ')
        return 0;
    while (*p == ' ')
        p++;
    struct cl_mapping m = {.start = start,
                           .end = end,
                           .offset = offset,
                           .dev = makedev((unsigned)major, (unsigned)minor),
                           .inode = inode};
    m.perms = (perms[0] == 'r' ? CL_MAP_R : 0) | (perms[1] == 'w' ? CL_MAP_W : 0) |
              (perms[2] == 'x' ? CL_MAP_X : 0) | (perms[3] == 's' ? CL_MAP_SHARED : 0);
    char *path = line + (p - line);
    if (*path) {
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
        return CL_E_INTERNAL;
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
