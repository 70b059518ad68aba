/* Spill files: where output waits that may run to hundreds of megabytes (a JSON report of every
 * tensor of a leaking job), on disk rather than in culeak's memory beside the heap's copy. */
#ifndef CULEAK_UTIL_SPILL_H
#define CULEAK_UTIL_SPILL_H

#include <stdbool.h>
#include <stdio.h>

/* The folder for temporary files: $TMPDIR when set, else /tmp. */
const char *cl_tmp_dir(void);

/* A new temporary file, read and written, that no name reaches (it goes when closed); NULL when
 * none can be made in cl_tmp_dir(). */
FILE *cl_spill_open(void);

/* Writes everything f holds, from its start, to out; false on an error reading f or writing out. */
bool cl_spill_copy(FILE *f, FILE *out);

#endif
