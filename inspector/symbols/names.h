/* A module's defined symbols by name, in a table built on the first lookup. The runtimes ask the
 * Python module for tens of symbols, and a scan of its symbol table for each (a debug build of
 * CPython has tens of thousands of symbols) cost every run 130 million instructions before it
 * read the heap. */
#ifndef CULEAK_SYMBOLS_NAMES_H
#define CULEAK_SYMBOLS_NAMES_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

struct cl_symnames {
    struct cl_symname_slot *slots; /* NULL until built */
    size_t mask;
};

/* The first defined symbol named name in mod's table (.symtab when present, else .dynsym, as
 * libdwfl gives them): its value and ELF symbol; false when there is none. Without memory for
 * the table, the symbols are scanned. */
bool cl_symnames_find(struct cl_symnames *x, Dwfl_Module *mod, const char *name, GElf_Sym *sym,
                      GElf_Addr *value);
void cl_symnames_free(struct cl_symnames *x);

#endif
