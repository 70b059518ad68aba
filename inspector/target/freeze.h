/* A copy of the memory of a live process, taken while it is stopped, so the process can run
 * again before culeak walks it: the walk then reads the copy, which the process cannot change and
 * may outlive. Pages never written are not copied: anonymous ones are zeros, a file's are read
 * from the file, and so are the pages of its code and read-only data. A process that stays
 * stopped while read is copied as the walk reads it instead, and only what the walk reads. */
#ifndef CULEAK_TARGET_FREEZE_H
#define CULEAK_TARGET_FREEZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/libdata.h"
#include "target/mappings.h"
#include "util/ranges.h"

/* Where the copy comes from: a live process, or a test's stand-in. */
struct cl_freeze_source {
    /* Reads len bytes at addr into buf: the bytes read (fewer when a page cannot be read), or
     * -errno; -ESRCH means the process went away. */
    long (*read)(void *arg, uint64_t addr, void *buf, size_t len);
    /* The page-table entries of npages pages from addr (/proc/PID/pagemap: bit 63 present, bit
     * 62 swapped) into out: the entries read, or -errno. NULL, or failing: every page is read. */
    long (*pagemap)(void *arg, uint64_t addr, size_t npages, uint64_t *out);
    /* The file that mapping m maps, opened for reading (the same file: not one that has since
     * taken its name), or -1. -1 or NULL: every page of m is copied. */
    int (*open_file)(void *arg, const struct cl_mapping *m);
    void *arg;
    unsigned threads;   /* reads cl_freeze_copy may make at once (0 or 1: one at a time) */
};

struct cl_frozen_region {
    uint64_t start, end;
    unsigned char *data;        /* end - start bytes (mmap'ed; pages never written stay zero) */
    uint8_t *absent;            /* a bit per page that was neither present nor swapped out, so
                                 * never written: anonymous memory's read as zeros, a file's from
                                 * the file; NULL when none */
    uint8_t *unreadable;        /* a bit per page that could not be read; NULL when none */
    uint8_t *unread;            /* a bit per page a scout saw and did not read, left out of the
                                 * copy (cl_freeze_plan with a scout's findings); NULL when none */
    uint8_t *filled;            /* copied on demand: a bit per chunk copied; NULL when the
                                 * copy was made at once */
    uint8_t *touched;           /* a bit per page a scout's walk needed (cl_frozen_touch) */
    int fd;                     /* a file's mapping: the file, for its absent pages (one of
                                 * cl_frozen.files); else -1 */
    uint64_t file_offset;       /* where start lies in it */
    uint64_t file_size;         /* its size when opened: no page past it is absent */
    uint64_t dev, inode;        /* the file mapped, as the mapping names it */
    uint64_t bytes;             /* to copy: the pages not absent */
    bool read_only;             /* a file's read-only mapping, which the process cannot write */
    bool leavable; /* anonymous memory but the main stack: a scout may leave it out */
    bool copied; /* copied before the process stopped: not to be copied again */
};

/* A file a plan opened, for the pages of its mappings left out. */
struct cl_frozen_file {
    uint64_t dev, inode;
    int fd;
};

/* A library whose writable mappings a plan looked at: whether its data is foreign to culeak
 * (target/libdata.h), and where its writable segments lie, to know its .bss when it is. */
struct cl_frozen_lib {
    uint64_t dev, inode;
    bool foreign;
    struct cl_lib_segment seg[CL_LIB_SEGMENTS];
    size_t nseg;
};

struct cl_frozen {
    struct cl_frozen_region *v; /* sorted by start, as the mappings they copy */
    size_t n;
    struct cl_frozen_file *files;
    size_t nfiles, files_cap;
    struct cl_frozen_lib *libs;
    size_t nlibs, libs_cap;
    uint64_t bytes; /* to copy: the pages not absent */
    uint64_t unread_bytes; /* left out, as a scout did not read them (not absent) */
    /* A copy made on demand: where from, the bytes it may still copy, and those it did. */
    struct cl_freeze_source src;
    uint64_t budget, filled_bytes;
    bool spent; /* a chunk found the budget short: none is copied any more */
    bool touch_lost;            /* a touch could not be noted: what a scout read is not known */
    uint64_t touched_bytes;     /* the pages a scout's walk needed (cl_frozen_touch) */
};

/* Whether the copy holds mapping m: private memory that is readable (anonymous, the heap, stacks,
 * a file's data, code and read-only data). Shared mappings (device memory, other processes'
 * shared memory) and device files are left out. */
bool cl_freeze_wants(const struct cl_mapping *m);

/* What a scout (a walk made while the process ran, on a copy made on demand: cl_freeze_on_demand)
 * found: the writable memory the process then had, and the pages of it the walk needed. */
struct cl_scouted {
    struct cl_ranges seen, read;
};

/* Notes that a scout's walk needed the page at addr (one a region of f holds); false when out
 * of memory. */
bool cl_frozen_touch(struct cl_frozen *f, uint64_t addr);
/* The scout's findings from its copy f (what it read past the copy's budget, from the process,
 * is noted too): 0, CL_E_INTERNAL when out of memory (a page's touch among them), or
 * CL_E_UNSUPPORTED for a copy not made on demand. */
int cl_freeze_scouted(const struct cl_frozen *f, struct cl_scouted *out);
void cl_scouted_free(struct cl_scouted *s);
/* Which pages of ms the copy takes (f->bytes says how much), before copying any: pages the page
 * tables say were never touched are left out, anonymous memory's read as zeros and a file's
 * private mapping's from the file (a CUDA torch process leaves most of the 400 MB of its
 * libraries' writable data untouched), and so are the file's pages of read-only mappings (2.3 GB
 * of code and constants in a CUDA torch process, of which it wrote 12 MiB). A read-only mapping
 * whose file or page tables cannot be read is left out: read from the process. So is the
 * writable data, .bss included, of a library foreign to culeak (target/libdata.h), which the
 * walk never reads. With scouted, so are the writable pages a scout saw and did not need
 * (f->unread_bytes): the memory of CPU tensors, pinned buffers and datasets that no walk reads,
 * whose copy would stop the process for as long as it takes, and whose page tables are not read
 * either. Memory the scout did not see (new since) is copied. A walk that needs a page left out
 * finds it not held (cl_frozen_page), and must not read it from the process. 0, or
 * CL_E_INTERNAL when out of memory. */
int cl_freeze_plan(struct cl_frozen *f, const struct cl_mappings *ms,
                   const struct cl_freeze_source *src, const struct cl_scouted *scouted);
/* Allocates the memory for the pages the plan takes, where not done yet, and touches it, in up to
 * `threads` threads: fresh memory costs the kernel a page fault and a page of zeros per page (in
 * a virtual machine, often more than reading the page), a cost best paid before the process is
 * stopped. 0, or CL_E_INTERNAL. */
int cl_freeze_reserve(struct cl_frozen *f, unsigned threads);
/* Copies the read-only regions of a plan made while the process runs (reserving what is not
 * yet): it cannot write them, and copying the pages it wrote before (RELRO: 12 MiB of a CUDA torch
 * process, whose page tables take 5 ms to read) would lengthen the stop. 0, or as cl_freeze_copy
 * (f is not freed). */
int cl_freeze_copy_read_only(struct cl_frozen *f, const struct cl_freeze_source *src);
/* cl_freeze_plan, once the process stopped, after reserved, a plan made while it ran whose
 * mappings may since have changed: each region of the same mapping takes the memory reserved
 * for it, and one copied already (cl_freeze_copy_read_only) is taken whole, neither planned nor
 * copied again; what reserved found of the libraries is not looked up again. reserved is
 * freed. */
int cl_freeze_replan(struct cl_frozen *f, const struct cl_mappings *ms,
                     const struct cl_freeze_source *src, struct cl_frozen *reserved,
                     const struct cl_scouted *scouted);
/* Copies what the plan takes, a chunk at a time, in up to src->threads threads (a copy is bound
 * by the copying, about 4 GB/s a core, and the process is stopped until it is done). 0;
 * CL_E_NO_PROCESS when the source went away, CL_E_INTERNAL when out of memory (either way f is
 * freed). */
int cl_freeze_copy(struct cl_frozen *f, const struct cl_freeze_source *src);
/* Makes the copy on demand instead, a chunk at a time as the walk first reads it, up to budget
 * bytes: for a process that stays stopped while culeak reads it (its copy would be over the
 * limit, or a debugger holds it), so that only what the walk needs is read, each page once, in
 * bulk. Past the budget a page is not held; a budget under a chunk frees f. 0, or CL_E_INTERNAL
 * (f is freed). */
int cl_freeze_on_demand(struct cl_frozen *f, const struct cl_freeze_source *src, uint64_t budget);
/* Whether the plan left addr out as a scout did not read it. */
bool cl_frozen_left_unread(const struct cl_frozen *f, uint64_t addr);
/* Whether a region of the plan holds addr: false for what it left out (a foreign library's data,
 * a shared mapping), which is read from the process. */
bool cl_frozen_holds(const struct cl_frozen *f, uint64_t addr);
/* Whether the copy holds page-aligned addr (*held); if it does, 0 and the page in out, or
 * CL_E_UNREADABLE for a page the copy could not read (or whose file has since changed). */
int cl_frozen_page(struct cl_frozen *f, uint64_t addr, void *out, bool *held);
/* The run of pages of one region, each of them read, that holds addr: *len bytes from *start,
 * in place at the pointer returned; NULL when no region holds addr or its page is not in place
 * (unreadable, or read from its file: cl_frozen_page reads it). The walk reads the copy there,
 * with no page cache between. */
const unsigned char *cl_frozen_span(struct cl_frozen *f, uint64_t addr, uint64_t *start,
                                    uint64_t *len);
void cl_frozen_free(struct cl_frozen *f);

#endif
