/* A target read from a file `culeak dump` wrote (format: target/dumpfile.h): the pages the dump
 * run read, its address-space map, threads and the small files it read. A page the dump does not
 * hold is not guessed: the target is lost with a message saying so (cl_target_lose). The
 * symbols layer takes its answers from the dump's symbol section (cl_dump_symbols). */
#ifndef CULEAK_TARGET_DUMP_H
#define CULEAK_TARGET_DUMP_H

#include <stdio.h>

#include "target/target.h"

/* The dump's symbol section (symbols/record.c parses it); false for a target of another kind. */
bool cl_dump_symbols(const struct cl_target *t, const unsigned char **p, size_t *len);

/* Writes t (a live process or core, opened with record) as a dump (dump_write.c): open_notes are
 * the warnings its opening gave (before any layer above added its own), symbols the symbol
 * section. The number of bytes written goes to size. 0, CL_E_IO, or CL_E_INTERNAL when pages were
 * lost to an allocation failure. */
int cl_dump_write(struct cl_target *t, const char *open_notes, const void *symbols, size_t symlen,
                  FILE *f, uint64_t *size, struct cl_error *err);

/* Opens a dump held in memory (p must outlive the target); name is for messages. */
int cl_target_open_dump_bytes(const unsigned char *p, size_t len, const char *name,
                              const struct cl_open_options *opt, struct cl_target **out,
                              struct cl_error *err);

#endif
