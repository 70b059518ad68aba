/* Pure parsers for the notes in an ELF core: they see bytes, never files, so the unit tests can
 * feed them anything. Every length is checked against the buffer it claims to lie in. */
#ifndef CULEAK_TARGET_CORENOTES_H
#define CULEAK_TARGET_CORENOTES_H

#include <stddef.h>
#include <stdint.h>

#include "target/mappings.h"

struct cl_note {
    uint32_t type;
    const char *name;            /* NUL-terminated within the buffer, e.g. "CORE" */
    const unsigned char *desc;
    size_t descsz;
};

/* Calls fn for each note in a PT_NOTE segment's bytes; fn returning non-zero stops the walk and is
 * returned. A note that overruns the buffer ends the walk with CL_E_NOT_CORE. */
int cl_notes_foreach(const unsigned char *data, size_t len,
                     int (*fn)(const struct cl_note *n, void *arg), void *arg);

/* NT_FILE: appends one mapping per entry (offset in bytes: the entry's file offset times the
 * note's page size, which the kernel writes as 4096 and gdb's gcore as 1). Returns 0, CL_E_NOT_CORE
 * for a malformed note, CL_E_INTERNAL on allocation failure. */
int cl_nt_file_parse(const unsigned char *desc, size_t len, struct cl_mappings *out);

/* Fields culeak uses from the process notes (x86-64 layouts). */
struct cl_prstatus {
    int pid;
    int cursig;
};
int cl_prstatus_parse(const unsigned char *desc, size_t len, struct cl_prstatus *out);
struct cl_prpsinfo {
    int pid;
    char fname[17];
    char psargs[81];
};
int cl_prpsinfo_parse(const unsigned char *desc, size_t len, struct cl_prpsinfo *out);
/* The value of auxv entry `type`, or 0 when absent. */
uint64_t cl_auxv_get(const unsigned char *desc, size_t len, uint64_t type);

/* The GNU build-id of an ELF image from its first bytes (as in a file, or the first page of its
 * first mapping): copies it to out and returns its length; 0 when none is visible in those bytes
 * or it is longer than cap (then out is not written). */
size_t cl_buildid_parse(const unsigned char *image, size_t len, unsigned char *out, size_t cap);

#endif
