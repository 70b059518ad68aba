/* The target's ELF modules and their symbols, through libdwfl. Modules are built from the
 * target's address-space map (the same for live processes and cores), each file found through the
 * target's locator and checked against the build-id in target memory, so a file replaced on disk
 * or brought from the wrong machine never lends its symbols. */
#ifndef CULEAK_SYMBOLS_SYMBOLS_H
#define CULEAK_SYMBOLS_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "target/target.h"

#include <elfutils/libdwfl.h>

enum cl_module_state {
    CL_MODULE_OK,
    CL_MODULE_MISSING,      /* no file on this machine */
    CL_MODULE_MISMATCH,     /* the file's build-id differs from the target's */
};

struct cl_module {
    char *path;             /* as the target names it */
    char *file;             /* on this machine; NULL when missing */
    uint64_t start, end;    /* lowest and highest address of its mappings */
    uint64_t bias;          /* load bias: symbol value + bias = target address */
    enum cl_module_state state;
    Dwfl_Module *dwfl;      /* NULL unless state is OK */
};

struct cl_symbols {
    Dwfl *dwfl;
    Dwfl_Callbacks callbacks;   /* libdwfl keeps a pointer to these: they live as long as dwfl */
    char *debuginfo_path;       /* where debug files are looked for (see symbols.c) */
    struct cl_module *mods;
    size_t n;
};

int cl_symbols_load(struct cl_target *t, struct cl_symbols **out, struct cl_error *err);
void cl_symbols_free(struct cl_symbols *s);

/* The first module whose file name (after the last '/') starts with prefix, or NULL. */
const struct cl_module *cl_symbols_module_named(const struct cl_symbols *s, const char *prefix);
/* The module whose mappings include addr, or NULL. */
const struct cl_module *cl_symbols_module_at(const struct cl_symbols *s, uint64_t addr);

/* Target address and size of a symbol defined in m (.symtab when present, else .dynsym). */
bool cl_module_symbol(const struct cl_module *m, const char *name, uint64_t *addr, uint64_t *size);
/* Target address and size of a section of m's file. */
bool cl_module_section(const struct cl_module *m, const char *name, uint64_t *addr, uint64_t *size);
/* Whether m has DWARF (in the file, or a separate debug file found by debuglink / build-id). */
bool cl_module_has_dwarf(const struct cl_module *m);
/* Whether m's symbols come from a full .symtab rather than only the exported .dynsym. */
bool cl_module_has_symtab(const struct cl_module *m);

/* Reverse lookup: the symbol containing addr and the offset into it; NULL when none. */
const char *cl_symbols_name_at(const struct cl_symbols *s, uint64_t addr, uint64_t *offset);

#endif
