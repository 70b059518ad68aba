/* The container of a culeak dump: a header, sections by id, and a section table at the end.
 *
 *   header (32 bytes): magic "CLDUMP\r\n", u32 version, u32 section count,
 *                      u64 offset of the section table, u64 size of the whole file
 *   sections:          their bytes, in any order
 *   section table:     per section u32 id, u32 0, u64 offset, u64 length
 *
 * All numbers little-endian. The parser is pure (bytes in memory) and trusts nothing: every
 * offset and length is checked against the file with overflow-safe arithmetic, so a truncated
 * or crafted file gives one error, never a read out of bounds. What the sections hold is
 * target/dump.c's and symbols/record.c's business. */
#ifndef CULEAK_TARGET_DUMPFILE_H
#define CULEAK_TARGET_DUMPFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"

#define CL_DUMP_MAGIC "CLDUMP\r\n"
#define CL_DUMP_MAGIC_LEN 8u
#define CL_DUMP_VERSION 1u
#define CL_DUMP_HEADER_SIZE 32u
#define CL_DUMP_TABLE_ENTRY 24u

enum cl_dump_section_id {
    CL_DUMP_META = 1,       /* the target: kind, pid, executable, threads, open warnings */
    CL_DUMP_MAPS = 2,       /* the address-space map */
    CL_DUMP_FILES = 3,      /* small files read beside memory (target/filerec.h) */
    CL_DUMP_SYMBOLS = 4,    /* modules and the symbol answers (symbols/record.h) */
    CL_DUMP_PAGE_RUNS = 5,  /* runs of pages: data, zero or failed */
    CL_DUMP_PAGE_DATA = 6,  /* the data runs' bytes */
    CL_DUMP_REQUIRED_IDS,   /* every dump has the sections before this one */
    CL_DUMP_SCOPE = CL_DUMP_REQUIRED_IDS, /* u32 flags, CL_DUMP_SCOPE_*: what the run left out */
    CL_DUMP_CLOCK,          /* u32 count, then (i64 unix ns, u64 ticks) pairs: target/clock.h */
    CL_DUMP_NOTE,           /* why it was taken (dump --note): UTF-8 text, no NUL */
    CL_DUMP_SECTION_IDS     /* one past the last */
};
#define CL_DUMP_SCOPE_ALLOCATOR_ONLY 1u /* culeak dump --allocator-only: no Python objects */
#define CL_DUMP_SCOPE_REDACTED 2u /* culeak dump --redact: strs' and bytes' contents zeros */

/* A page run's kind (RUNS section): its pages' bytes in DATA, all zeros, or failed to read. */
enum cl_dump_run_kind { CL_DUMP_RUN_DATA, CL_DUMP_RUN_ZERO, CL_DUMP_RUN_FAILED, CL_DUMP_RUN_KINDS };
#define CL_DUMP_RUN_SIZE 32u /* u64 start, u32 pages, u32 kind, u32 status, u32 0, u64 offset */

struct cl_dumpfile {
    const unsigned char *sec[CL_DUMP_SECTION_IDS];
    size_t len[CL_DUMP_SECTION_IDS];
    bool has[CL_DUMP_SECTION_IDS];
    uint32_t version;
};

/* Whether the bytes begin with a dump's magic (for the "this is a dump" hint of --core). */
bool cl_dumpfile_is_dump(const unsigned char *p, size_t len);
/* Checks the header and the section table of p[0..len); name is for the messages. Sections of
 * ids unknown to this version are an error: they would mean a newer format. */
int cl_dumpfile_parse(const unsigned char *p, size_t len, const char *name, struct cl_dumpfile *out,
                      struct cl_error *err);

/* Writes a dump section by section: begin, then for each section begin_section, write, ... */
struct cl_dumpfile_writer {
    FILE *f;
    uint64_t at; /* bytes written so far */
    uint32_t ids[CL_DUMP_SECTION_IDS];
    uint64_t off[CL_DUMP_SECTION_IDS], len[CL_DUMP_SECTION_IDS];
    size_t n;
    bool failed; /* a write failed (errno says why) */
};

void cl_dumpfile_begin(struct cl_dumpfile_writer *w, FILE *f);
/* Pads to align bytes before the section starts (page data is page-aligned, for mmap). */
void cl_dumpfile_begin_section(struct cl_dumpfile_writer *w, enum cl_dump_section_id id,
                               size_t align);
void cl_dumpfile_write(struct cl_dumpfile_writer *w, const void *data, size_t len);
/* Writes the table and the header; 0, or CL_E_IO when anything failed to write. */
int cl_dumpfile_finish(struct cl_dumpfile_writer *w);

#endif
