/* Symbol answers kept for a dump. While `culeak dump` runs, every question the layers above ask
 * of the symbols (a symbol's address, a section, whether there is DWARF, a DWARF struct offset,
 * a reverse lookup) is kept with its answer; reading a dump, the same question gets the same
 * answer and any other question is refused (symbols.c), so no answer is ever a guess. Pure data
 * and its encoding; symbols.c and dwarf.c ask and answer. */
#ifndef CULEAK_SYMBOLS_RECORD_H
#define CULEAK_SYMBOLS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/bytes.h"

enum cl_symq_kind {
    CL_SYMQ_SYMBOL,         /* key: symbol name -> address, size */
    CL_SYMQ_SECTION,        /* key: section name -> address, size */
    CL_SYMQ_HAS_DWARF,
    CL_SYMQ_HAS_SYMTAB,
    CL_SYMQ_DWARF_SIZE,     /* key: type -> sizeof */
    CL_SYMQ_DWARF_MEMBER,   /* key: type, key2: member -> offsetof */
    CL_SYMQ_NAME_AT,        /* addr -> name, offset (module: CL_SYMQ_NO_MODULE) */
    CL_SYMQ_KINDS
};

#define CL_SYMQ_NO_MODULE UINT32_MAX

struct cl_symq {
    enum cl_symq_kind kind;
    uint32_t module;        /* index into the symbols' modules */
    const char *key, *key2; /* NULL when the kind has none */
    uint64_t addr;
    /* the answer */
    bool found;
    uint64_t v1, v2;
    const char *name;       /* NAME_AT */
    bool optional;          /* a dump that never asked it answers "not found" (with a note) */
};

struct cl_symrec {
    struct cl_symq *v;      /* strings owned (malloc'ed) */
    size_t n, cap;
    bool oom;               /* an answer could not be kept: the dump would lack it */
};

/* The recorded answer to q's question (same kind, module, keys, addr), or NULL. */
const struct cl_symq *cl_symrec_find(const struct cl_symrec *r, const struct cl_symq *q);
/* Keeps q (question and answer, strings copied) unless its question is already kept. */
void cl_symrec_add(struct cl_symrec *r, const struct cl_symq *q);
void cl_symrec_free(struct cl_symrec *r);

void cl_symrec_write(const struct cl_symrec *r, struct cl_bytes_out *o);
/* Reads what cl_symrec_write wrote; modules bounds every module index. False when malformed
 * (in->bad) or out of memory (in->oom). */
bool cl_symrec_read(struct cl_bytes_in *in, uint32_t modules, struct cl_symrec *r);

#endif
