/* A copy of the memory of a live process that can change, taken while it is stopped, so the
 * process can run again before culeak walks it: the walk then reads the copy, and what the copy
 * leaves out (code and read-only data of its files) cannot change under it. */
#ifndef CULEAK_TARGET_FREEZE_H
#define CULEAK_TARGET_FREEZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/mappings.h"

/* Reads len bytes at addr of the source into buf: the bytes read (fewer when a page cannot be
 * read), or -errno. ESRCH means the process went away. */
typedef long (*cl_bulk_read_fn)(void *source, uint64_t addr, void *buf, size_t len);

struct cl_frozen_region {
    uint64_t start, end;
    unsigned char *data;        /* end - start bytes (mmap'ed) */
    uint8_t *unreadable;        /* a bit per page that could not be read; NULL when none */
};

struct cl_frozen {
    struct cl_frozen_region *v; /* sorted by start, as the mappings they copy */
    size_t n;
    uint64_t bytes;             /* copied */
};

/* Whether the copy holds mapping m: private memory that is readable and either writable or not
 * backed by a file (anonymous, the heap, stacks). Shared mappings (device memory, other
 * processes' shared memory) and device files are left out. */
bool cl_freeze_wants(const struct cl_mapping *m);
/* The bytes a copy of ms would take. */
uint64_t cl_freeze_size(const struct cl_mappings *ms);

/* Copies every mapping of ms that cl_freeze_wants through read. 0; CL_E_NO_PROCESS when the
 * source went away (nothing is kept); CL_E_INTERNAL when out of memory. */
int cl_freeze_copy(struct cl_frozen *f, const struct cl_mappings *ms, cl_bulk_read_fn read,
                   void *source);
/* The copy's page at page-aligned addr: 0 and the page in out; CL_E_UNREADABLE for a page the
 * copy could not read; -1 when the copy does not hold addr. */
int cl_frozen_page(const struct cl_frozen *f, uint64_t addr, void *out);
void cl_frozen_free(struct cl_frozen *f);

#endif
