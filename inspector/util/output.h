/* The files culeak writes for its user (-o, --html, --torch-snapshot, a dump, a plugin command's
 * --output): private, since a dump or a report holds what the job held (its strings, file names,
 * tokens), and whole or absent, since a reader of a half-written report would take it for the
 * report. Each is written to a new file of mode 0600 beside its path and renamed over it once
 * complete; on failure the path is left as it was. A path that is there and is no regular file
 * (/dev/null, /dev/stdout, a FIFO) is written in place: renaming over it would replace the
 * device with a file. */
#ifndef CULEAK_UTIL_OUTPUT_H
#define CULEAK_UTIL_OUTPUT_H

#include <stdio.h>

#include "util/error.h"

struct cl_output {
    FILE *f;                   /* write here */
    const char *path;          /* where it goes */
    char *tmp;                 /* where it is written meanwhile; NULL: in place */
};

/* Opens the temporary file beside path: 0, or CL_E_IO saying why. */
int cl_output_open(const char *path, struct cl_output *out, struct cl_error *err);
/* Closes it and renames it over path: 0, or CL_E_IO (a write failed: a full disk) and the
 * temporary file removed. */
int cl_output_commit(struct cl_output *out, struct cl_error *err);
/* Closes and removes it, leaving path as it was (a command that failed after opening). */
void cl_output_abort(struct cl_output *out);

#endif
