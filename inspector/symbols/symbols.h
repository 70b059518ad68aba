/* The target's ELF modules and their symbols, through libdwfl. Modules are built from the
 * target's address-space map (the same for live processes and cores), each file found through the
 * target's locator and checked against the build-id in target memory, so a file replaced on disk
 * or brought from the wrong machine never lends its symbols. */
#ifndef CULEAK_SYMBOLS_SYMBOLS_H
#define CULEAK_SYMBOLS_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

#include "symbols/names.h"
#include "symbols/record.h"
#include "target/target.h"
#include "util/bytes.h"

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
    Dwfl_Module *dwfl;      /* NULL unless state is OK (and always for a dump) */
    struct cl_symbols *owner;   /* where its answers are recorded, or come from (a dump) */
};

struct cl_symbols {
    Dwfl *dwfl;
    Dwfl_Callbacks callbacks;   /* libdwfl keeps a pointer to these: they live as long as dwfl */
    char *debuginfo_path;       /* where debug files are looked for (see symbols.c) */
    struct cl_module *mods;
    size_t n, cap;
    struct cl_symnames *names;  /* per module, its symbols by name: made on the first lookup */
    struct cl_target *target;   /* the target they were loaded for (a dump's is lost on a miss) */
    bool recording;             /* `culeak dump` runs: every answer goes into rec */
    bool replay;                /* a dump: every answer comes from rec */
    bool optional_missed;       /* a dump lacked an optional question: noted once */
    struct cl_symrec rec;
    char *load_notes; /* the warnings loading added to the target's (a dump repeats them) */
};

/* For a dump target, the modules and answers its symbol section holds; for a target opened with
 * record, the answers are kept from here on (cl_symbols_write). */
int cl_symbols_load(struct cl_target *t, struct cl_symbols **out, struct cl_error *err);
void cl_symbols_close(struct cl_symbols *s);
/* The modules, the loading's warnings and every answer given so far, as a dump's symbol section
 * (replay.c, which also reads it back). */
void cl_symbols_write(const struct cl_symbols *s, struct cl_bytes_out *o);

/* For the query functions (here and dwarf.c). Reading a dump: fills q's answer from the
 * recording and returns true; a question it does not hold loses the target (cl_target_lose) and
 * is answered "not found". Otherwise returns false: the caller computes the answer and passes
 * it to cl_symbols_answered, which keeps it while dumping. */
bool cl_symbols_recorded(struct cl_symbols *s, struct cl_symq *q);
void cl_symbols_answered(struct cl_symbols *s, const struct cl_symq *q);
/* The question of kind about m (keys may be NULL). */
struct cl_symq cl_symbols_question(const struct cl_module *m, enum cl_symq_kind kind,
                                   const char *key, const char *key2);

/* The first module whose file name (after the last '/') starts with prefix, or NULL. */
const struct cl_module *cl_symbols_module_named(const struct cl_symbols *s, const char *prefix);
/* The module whose mappings include addr, or NULL. */
const struct cl_module *cl_symbols_module_at(const struct cl_symbols *s, uint64_t addr);

/* Target address and size of a symbol defined in m (.symtab when present, else .dynsym). */
bool cl_module_symbol(const struct cl_module *m, const char *name, uint64_t *addr, uint64_t *size);
/* The same for a symbol that a newer culeak looks up: a dump written before culeak asked for it
 * answers "not found" with a note, where cl_module_symbol would lose the target. */
bool cl_module_symbol_optional(const struct cl_module *m, const char *name, uint64_t *addr,
                               uint64_t *size);
/* Target address and size of a section of m's file; _optional as cl_module_symbol_optional. */
bool cl_module_section(const struct cl_module *m, const char *name, uint64_t *addr, uint64_t *size);
bool cl_module_section_optional(const struct cl_module *m, const char *name, uint64_t *addr,
                                uint64_t *size);
/* Whether m has DWARF (in the file, or a separate debug file found by debuglink / build-id). */
bool cl_module_has_dwarf(const struct cl_module *m);
/* Whether m's symbols come from a full .symtab rather than only the exported .dynsym. */
bool cl_module_has_symtab(const struct cl_module *m);

/* Reverse lookup: the symbol containing addr and the offset into it; NULL when none. */
const char *cl_symbols_name_at(struct cl_symbols *s, uint64_t addr, uint64_t *offset);
/* The same for an address a newer culeak names: a dump that did not record it answers NULL with
 * a note, as cl_module_symbol_optional. */
const char *cl_symbols_name_at_optional(struct cl_symbols *s, uint64_t addr, uint64_t *offset);

#endif
