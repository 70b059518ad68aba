/* The memory-source interface every walker reads through. A target is a stopped live process, a
 * core file, or (in the gdb plugin) whatever gdb is debugging; walkers see only cl_read() and the
 * address-space map, never which kind it is. Targets are never written to. */
#ifndef CULEAK_TARGET_TARGET_H
#define CULEAK_TARGET_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "target/filerec.h"
#include "target/mappings.h"
#include "target/pagecache.h"
#include "target/pagerec.h"
#include "util/clock.h"
#include "util/error.h"

/* CL_TARGET_DUMP: a file written by `culeak dump` (target/dump.c). */
enum cl_target_kind { CL_TARGET_LIVE, CL_TARGET_CORE, CL_TARGET_GDB, CL_TARGET_DUMP };

struct cl_thread {
    int tid;
    int pending_signal;   /* live: a signal caught while stopping, re-delivered on detach */
};

struct cl_target;

#define CL_RECENT_WINDOWS 4

/* Target memory held in place: [start, start + len) at data. */
struct cl_window {
    uint64_t start, len;
    const unsigned char *data;
};

struct cl_target_ops {
    /* Reads one whole page at a page-aligned address: 0 or a cl_status, message in t->err. */
    int (*read_page)(struct cl_target *t, uint64_t addr, void *page);
    void (*close)(struct cl_target *t);
    /* Optional: the range around addr whose bytes this process already holds in place, every
     * one readable (a live target's copy, a core's or a dump's mapped file); false to read addr
     * through the page cache. */
    bool (*resident)(struct cl_target *t, uint64_t addr, struct cl_window *w);
    /* Optional, for a source whose files are looked up on this machine (a core): whether the
     * file the target mapped at path is here (else CL_E_IO) and the one it mapped (else
     * CL_E_EXE_MISMATCH); 0 also for a path it does not need. */
    int (*file_status)(struct cl_target *t, const char *path);
    /* Optional: whether the source left addr out as memory no walk needs, to be read only if a
     * reader must (a live copy's foreign library data: read from the running process; a page a
     * dump did not record: reading it loses the target). */
    bool (*left_out)(struct cl_target *t, uint64_t addr);
    /* Optional: a scout's walk (t->scouting) needed the page at page-aligned addr. */
    void (*touch)(struct cl_target *t, uint64_t page);
    /* Optional, for a source that can go away (a live process): whether it has (a zombie, or
     * no entry in /proc). */
    bool (*vanished)(struct cl_target *t);
};

/* How file-backed memory that a core does not contain is found on this machine. */
struct cl_file_locator {
    const char *sysroot;        /* prefix for every absolute path, for cores from elsewhere */
    const char *const *lib_dirs;/* searched by basename, in order */
    size_t nlib_dirs;
    const char *exe;            /* the executable, overriding the path the target recorded */
    int root_pid;               /* live: its paths are its own mount namespace's (a container):
                                 * looked up under /proc/PID/root first; 0 for none */
};

struct cl_target {
    const struct cl_target_ops *ops;
    enum cl_target_kind kind;
    enum cl_target_kind source_kind;   /* a dump: what it was made from; else kind */
    int pid;
    int ns_pid;                 /* live: the pid in its own PID namespace (NSpid); 0 if unknown */
    char *exe_path;             /* the executable as the target names it */
    int signal;                 /* core: the signal that made the dump (0 for gcore) */
    struct cl_thread *threads;
    size_t nthreads;
    struct cl_mappings maps;
    struct cl_file_locator locator;
    struct cl_pagecache cache;
    struct cl_error err;        /* the last failure's details */
    char *warnings;             /* newline-separated notes gathered while opening; NULL if none */
    char *note; /* why it was taken (cl_open_options.note, a dump's); NULL: none */
    /* live: the process exited or was killed while open. Sticky: from then on every read fails
     * with CL_E_NO_PROCESS, so walkers stop, and no command prints a report built on reads that
     * failed only because the process was gone (see cl_target_went_away). */
    bool gone;
    /* Why the target is gone, when not because a process went away: a dump asked for a page or
     * an answer it does not hold (code 0: the process went away). */
    struct cl_error gone_why;
    /* live: the bytes copied while it was stopped (target/freeze.c), 0 when nothing was; whether
     * culeak then resumed it (it had stopped it) and how long it was stopped until then. */
    uint64_t copied_bytes;
    bool resumed;
    double stopped_seconds;
    /* live: read as it runs, not stopped, by a scout (cl_open_options.may_scout): what its walk
     * reads, cl_target_scouted tells, and no report is made of it */
    bool scouting;
    /* live: the bytes the copy left out as a scout's walk did not read them; whether a walk then
     * needed one (t->gone with it: the inspection is redone, stopped); whether this inspection
     * is that redone one */
    uint64_t unread_bytes;
    bool missed, redone;
    uint64_t bytes_read; /* by every cl_read so far: what progress lines report */
    /* The resident range the last read outside it came from (ops->resident): cl_read serves the
     * reads inside it inline, which are most of a walk's millions of 8-byte reads. The walk moves
     * between a few (an object's pool, its dict's values, its type), so the last ones are kept. */
    struct cl_window window;
    struct cl_window recent[CL_RECENT_WINDOWS];
    unsigned next_recent;
    /* `culeak dump --allocator-only`, and a dump it wrote: the Python heap is not walked (the
     * session refuses it), so only the runtimes and the CUDA allocator are read. */
    bool allocator_only;
    /* `culeak dump --redact`, and a dump it wrote: the characters of strs that are not interned
     * and of bytes objects are zeros (their sizes kept); a str's reader says so */
    bool redacted;
    /* While `culeak dump` runs: every page the source served (NULL otherwise). */
    struct cl_pagerec *record;
    /* The small files read beside memory: recorded while dumping, a dump's answers. */
    struct cl_filerec files;
    /* The clock reading trace times are converted with (target/clock.h): NULL until asked, or a
     * dump's; clock_source is an enum cl_clock_source. */
    struct cl_clock_pair *clock;
    int clock_source;
    void *impl;
};

struct cl_open_options {
    struct cl_file_locator locator;
    bool assume_stopped; /* live: a debugger already holds the process stopped */
    size_t cache_pages; /* 0: default */
    bool record; /* keep every page read, for `culeak dump` (t->record) */
    /* live: the most memory copied so the process can resume before the walk (0: half of what
     * the machine has available); keep_stopped: copy nothing, stopped until closed */
    uint64_t copy_limit;
    bool keep_stopped;
    /* a line saying why the target is read at this instant (an out-of-memory error: its device
     * and size), which a dump keeps and the reports print; NULL: none */
    const char *note;
    /* live: the target may be scouted (read as it runs: t->scouting) where its copy would stop
     * it long; scouted: what a scout found, for the copy to leave out what it did not read */
    bool may_scout;
    const struct cl_scouted *scouted;
    /* live: the most threads that copy it while it is stopped (0: one a CPU, cl_cpus()); the
     * processes read at once share the CPUs as they share the copy limit */
    unsigned copy_threads;
};

struct cl_scouted;
/* What a scout's walk read of t (t->scouting) into out: 0, or a cl_status where it is not known
 * (the copy of what it read ran over the limit). */
int cl_target_scouted(const struct cl_target *t, struct cl_scouted *out);
/* The copy limit when none is given: half of the memory available. */
uint64_t cl_default_copy_limit(void);
/* The CPUs culeak may run on (its affinity mask), at least 1. */
unsigned cl_cpus(void);
/* Opens a live process, stopping all its threads (unless assume_stopped). */
int cl_target_open_live(int pid, const struct cl_open_options *opt, struct cl_target **out,
                        struct cl_error *err);
/* Opens an ELF core file. */
int cl_target_open_core(const char *path, const struct cl_open_options *opt, struct cl_target **out,
                        struct cl_error *err);
/* Opens a file written by `culeak dump`: its pages and answers, no file of the target's. */
int cl_target_open_dump(const char *path, const struct cl_open_options *opt, struct cl_target **out,
                        struct cl_error *err);
/* Detaches (a live process resumes exactly as it was) and frees everything. */
void cl_target_close(struct cl_target *t);

/* CL_E_NO_PROCESS with err set when the process went away while open (t->gone), else 0. Every
 * command asks this before it prints what it read. */
int cl_target_went_away(const struct cl_target *t, struct cl_error *err);
/* Marks the target gone where its source went away (cl_target_ops.vanished): a caller about to
 * blame the target for what it did not find (no Python runtime in a process killed as its maps
 * were read) asks first. */
void cl_target_check_vanished(struct cl_target *t);
/* Makes the target gone for good with this reason (see gone_why): every later read fails and
 * every command reports the reason instead of a report built on a guess. */
void cl_target_lose(struct cl_target *t, enum cl_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* cl_read of what its window does not hold. */
int cl_read_outside(struct cl_target *t, uint64_t addr, void *buf, size_t len);
/* Reads exactly len bytes or fails with a cl_status (message in t->err). Bounds and mapping
 * checks are done here, so walkers may pass any address they read from the target. */
static inline int cl_read(struct cl_target *t, uint64_t addr, void *buf, size_t len)
{
    const struct cl_window *w = &t->window;
    /* len <= PTRDIFF_MAX holds for every window: it tells the compiler so, for a constant len */
    if (len <= PTRDIFF_MAX && addr - w->start < w->len && len <= w->len - (addr - w->start) &&
        !t->gone) {
        memcpy(buf, w->data + (addr - w->start), len);
        t->bytes_read += len;
        return 0;
    }
    return cl_read_outside(t, addr, buf, len);
}
static inline int cl_read_u64(struct cl_target *t, uint64_t addr, uint64_t *out)
{
    return cl_read(t, addr, out, sizeof *out);
}
static inline int cl_read_u32(struct cl_target *t, uint64_t addr, uint32_t *out)
{
    return cl_read(t, addr, out, sizeof *out);
}
/* The pointer at addr, or 0 when it is NULL or cannot be read: walkers treat both as "no edge". */
static inline uint64_t cl_read_ptr_or_0(struct cl_target *t, uint64_t addr)
{
    uint64_t v;
    return cl_read_u64(t, addr, &v) == 0 ? v : 0;
}
/* Reads a NUL-terminated string of at most cap-1 bytes; fails if no NUL comes within cap. */
int cl_read_cstr(struct cl_target *t, uint64_t addr, char *buf, size_t cap);
/* The same only from memory the target holds (cl_read_held). */
int cl_read_cstr_held(struct cl_target *t, uint64_t addr, char *buf, size_t cap);

/* The target's file_status of path: 0 where the source reads no files of this machine. */
int cl_target_file_status(struct cl_target *t, const char *path);
/* The target's left_out of addr: false where the source leaves nothing out (a core). A reader
 * that scans memory for what may lie there (cpython/statics.c) skips such pages. */
bool cl_target_left_out(struct cl_target *t, uint64_t addr);

/* Whether the target holds addr for a reader that probes an address it is not sure of
 * (cpython/statics.c): not left out, and, of a process culeak resumed, copied while it was
 * stopped (a read past the copy would go to the running process). */
bool cl_target_holds(struct cl_target *t, uint64_t addr);

/* Whether the target holds every page of [addr, addr + len) (cl_target_holds). */
bool cl_target_holds_range(struct cl_target *t, uint64_t addr, uint64_t len);
/* cl_read of memory a probing reader is not sure of (a pointer read from a structure no table
 * describes): CL_E_UNREADABLE, with nothing read, unless the target holds every page of it
 * (cl_target_holds), so that a dump's replay reads only what its run read. */
int cl_read_held(struct cl_target *t, uint64_t addr, void *buf, size_t len);
/* cl_read_ptr_or_0 of such memory (cl_read_held). */
static inline uint64_t cl_read_held_ptr_or_0(struct cl_target *t, uint64_t addr)
{
    uint64_t v;
    return cl_read_held(t, addr, &v, sizeof v) == 0 ? v : 0;
}
/* cl_read of memory that does not change while the process runs (a library's read-only data: a
 * vtable, RTTI) but that a dump an older culeak wrote may not hold: CL_E_UNREADABLE, with nothing
 * read, where a dump left a page of it out (cl_target_left_out), else cl_read. */
int cl_read_unless_left_out(struct cl_target *t, uint64_t addr, void *buf, size_t len);
/* cl_read_cstr the same way. */
int cl_read_cstr_unless_left_out(struct cl_target *t, uint64_t addr, char *buf, size_t cap);

/* Memory scanned for a few words (cl_target_scan): fn gets each page the target holds in [start,
 * end) and returns whether it uses what it found there. */
typedef bool (*cl_scan_fn)(void *arg, uint64_t page, const uint64_t *words);
/* Calls fn with every page of [start, end) (page-aligned) that the target holds, read straight
 * from its source past the page cache, which a scan of much memory would only flush; of a
 * process culeak resumed, only the pages copied while it was stopped. While `culeak
 * dump` records, only the pages fn uses are kept: the dump then holds every page the same scan
 * finds something in, and leaves out (cl_target_left_out) the others, which the scan skips. 0,
 * or CL_E_NO_PROCESS when the process went away. */
int cl_target_scan(struct cl_target *t, uint64_t start, uint64_t end, cl_scan_fn fn, void *arg);

/* Resolves a path the target recorded to a file on this machine, honouring the locator. Returns a
 * malloc'ed path, or NULL if no candidate exists. is_exe selects the --exe override. */
char *cl_locate_file(const struct cl_file_locator *loc, const char *target_path, bool is_exe);
/* The file behind a mapping: for a live target's deleted or replaced file the copy it still maps
 * (/proc/PID/map_files, where this process may open it), else cl_locate_file's answer. */
char *cl_locate_mapping(const struct cl_target *t, const struct cl_mapping *m, bool is_exe);

/* A small text file the target names (torch's version.py), read whole into text (at most cap-1
 * bytes, NUL-terminated), with where it was found in local. CL_E_IO when it is not found or
 * cannot be read. While dumping the answer is recorded; a dump gives the recorded answer. */
int cl_target_text_file(struct cl_target *t, const char *target_path, char *local, size_t lcap,
                        char *text, size_t cap);

/* A target over a memory source of the caller's (ops, impl); maps, threads, pid and exe are the
 * caller's to fill. Shared by the implementations. */
int cl_target_new(const struct cl_target_ops *ops, enum cl_target_kind kind, void *impl,
                  const struct cl_open_options *opt, struct cl_target **out);

#endif
