/* Small text files culeak reads beside target memory (torch's version.py), with where they were
 * found: recorded while dumping, and what a dump answers from, so a dump needs no file of the
 * machine it came from. */
#ifndef CULEAK_TARGET_FILEREC_H
#define CULEAK_TARGET_FILEREC_H

#include <stddef.h>

struct cl_filerec_entry {
    char *target_path;      /* as the target names it */
    char *local;            /* where it was found; NULL when it was not */
    char *text;             /* its contents; NULL when it was not found or could not be read */
};

struct cl_filerec {
    struct cl_filerec_entry *v;
    size_t n, cap;
};

/* Appends an answer (strings copied; local and text may be NULL). 0 or CL_E_INTERNAL. */
int cl_filerec_add(struct cl_filerec *r, const char *target_path, const char *local,
                   const char *text);
/* The answer recorded for target_path, or NULL. */
const struct cl_filerec_entry *cl_filerec_find(const struct cl_filerec *r, const char *target_path);
void cl_filerec_free(struct cl_filerec *r);

#endif
