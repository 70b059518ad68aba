/* The target's address-space map: what /proc/PID/maps says for a live process, what the core's
 * PT_LOAD headers and NT_FILE note say for a core. Sorted by start, non-overlapping. */
#ifndef CULEAK_TARGET_MAPPINGS_H
#define CULEAK_TARGET_MAPPINGS_H

#include <stddef.h>
#include <stdint.h>

/* CL_MAP_DELETED: live, maps said "(deleted)": the file was removed or replaced since mapped.
 * CL_MAP_SHARED: live, a shared mapping ('s'), whose pages other processes or devices write. */
enum { CL_MAP_R = 1, CL_MAP_W = 2, CL_MAP_X = 4, CL_MAP_DELETED = 8, CL_MAP_SHARED = 16 };

struct cl_mapping {
    uint64_t start, end;   /* [start, end) */
    uint64_t offset;       /* byte offset in path where start is mapped */
    unsigned perms; /* CL_MAP_* (0 when the source does not say, e.g. NT_FILE-only ranges) */
    char *path; /* backing file as the target named it; NULL for anonymous memory */
    uint64_t dev, inode; /* live: the file's device (makedev) and inode as maps names them */
};

struct cl_mappings {
    struct cl_mapping *v;
    size_t n, cap;
};

/* Appends a copy of m (path duplicated). Returns 0 or CL_E_INTERNAL (out of memory). */
int cl_mappings_add(struct cl_mappings *ms, const struct cl_mapping *m);
/* Sorts by start; call once after adding. */
void cl_mappings_sort(struct cl_mappings *ms);
/* The mapping containing addr, or NULL. Binary search; needs a sorted list. */
const struct cl_mapping *cl_mappings_find(const struct cl_mappings *ms, uint64_t addr);
void cl_mappings_free(struct cl_mappings *ms);

/* Parses the text of /proc/PID/maps. Lines that do not parse are skipped; pseudo paths such as
 * "[heap]" and "[stack]" are kept as paths, "(deleted)" suffixes are stripped (and
 * kept as CL_MAP_DELETED). Returns 0 or CL_E_INTERNAL (out of memory). */
int cl_mappings_parse_proc_maps(struct cl_mappings *ms, const char *text, size_t len);

#endif
