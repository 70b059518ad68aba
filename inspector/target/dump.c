/* Reads a dump as a target (target/dump.h); dump_write.c writes one. */
#include "target/dump.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/clock.h"
#include "target/dumpfile.h"
#include "util/bytes.h"
#include "util/bsearch.h"

#define MAP_MIN_SIZE 32u        /* start, end, offset, perms, an empty path's length */
#define MAX_PATH_LEN 4096u
#define MAX_NOTES_LEN (1u << 20)
#define MAX_TEXT_LEN (1u << 20)
#define MAX_THREADS (1u << 22)

struct run {
    uint64_t start, end;        /* [start, end), page-aligned */
    enum cl_dump_run_kind kind;
    int status;                 /* CL_DUMP_RUN_FAILED: what the read failed with */
    uint64_t offset;            /* CL_DUMP_RUN_DATA: into the page data section */
};

struct dump {
    void *map;                  /* the mmap'ed file, when opened from a path */
    size_t map_len;
    struct run *runs;
    size_t nruns;
    const unsigned char *data;  /* page data section */
    size_t data_len;
    const unsigned char *symbols;
    size_t symlen;
};

/* ---- reading ---- */

/* The run containing addr, or NULL: runs are sorted and disjoint (checked at open). */
struct run_at {
    const struct dump *d;
    uint64_t addr;
};

static bool run_below(size_t i, const void *ctx)
{
    const struct run_at *q = ctx;
    return q->d->runs[i].end <= q->addr;
}

static const struct run *run_at(const struct dump *d, uint64_t addr)
{
    struct run_at q = {d, addr};
    size_t i = cl_partition_point(d->nruns, run_below, &q);
    return i < d->nruns && d->runs[i].start <= addr ? &d->runs[i] : NULL;
}

static int dump_read_page(struct cl_target *t, uint64_t addr, void *page)
{
    const struct dump *d = t->impl;
    const struct run *r = run_at(d, addr);
    if (!r) {
        cl_target_lose(t, CL_E_UNREADABLE,
                       "the dump holds no page at 0x%llx: culeak dump did "
                       "not read it (an option the dump run did not use, such as "
                       "--allocator-layout, or a bigger --max-objects)",
                       (unsigned long long)addr);
        return CL_E_UNREADABLE;
    }
    if (r->kind == CL_DUMP_RUN_FAILED)
        return cl_error_set(&t->err, r->status,
                            "the page at 0x%llx could not be read when the "
                            "dump was made (%s)",
                            (unsigned long long)addr, cl_status_name(r->status));
    if (r->kind == CL_DUMP_RUN_ZERO)
        memset(page, 0, CL_PAGE_SIZE);
    else
        memcpy(page, d->data + r->offset + (addr - r->start), CL_PAGE_SIZE);
    return 0;
}

static void dump_close(struct cl_target *t)
{
    struct dump *d = t->impl;
    if (!d)
        return;
    if (d->map)
        munmap(d->map, d->map_len);
    free(d->runs);
    free(d);
}

static bool dump_resident(struct cl_target *t, uint64_t addr, struct cl_window *w)
{
    const struct dump *d = t->impl;
    const struct run *r = run_at(d, addr);
    if (!r || r->kind != CL_DUMP_RUN_DATA)
        return false;
    *w = (struct cl_window){r->start, r->end - r->start, d->data + r->offset};
    return true;
}

static bool dump_left_out(struct cl_target *t, uint64_t addr)
{
    return !run_at(t->impl, addr);
}

static const struct cl_target_ops dump_ops = {.read_page = dump_read_page,
                                              .close = dump_close,
                                              .resident = dump_resident,
                                              .left_out = dump_left_out};

static int corrupt(struct cl_error *err, const char *name, const char *what)
{
    return cl_error_set(err, CL_E_NOT_CORE, "%s is a corrupt culeak dump: %s", name, what);
}

static bool valid_status(uint32_t s)
{
    return s > CL_OK && s <= CL_E_IO;
}

/* One run, checked: page-aligned, not wrapping, after the previous one, data inside its section. */
static bool parse_run(struct cl_bytes_in *in, const struct dump *d, uint64_t prev_end,
                      struct run *r)
{
    uint64_t start = cl_in_u64(in);
    uint32_t npages = cl_in_u32(in), kind = cl_in_u32(in), status = cl_in_u32(in);
    (void)cl_in_u32(in); /* reserved */
    uint64_t offset = cl_in_u64(in);
    uint64_t bytes = (uint64_t)npages * CL_PAGE_SIZE;
    if (in->bad || npages == 0 || start % CL_PAGE_SIZE || start < prev_end ||
        start > UINT64_MAX - bytes || kind >= CL_DUMP_RUN_KINDS)
        return false;
    if (kind == CL_DUMP_RUN_FAILED && !valid_status(status))
        return false;
    if (kind == CL_DUMP_RUN_DATA && (offset > d->data_len || bytes > d->data_len - offset))
        return false;
    *r = (struct run){start, start + bytes, (enum cl_dump_run_kind)kind, (int)status, offset};
    return true;
}

static int parse_runs(const struct cl_dumpfile *df, const char *name, struct dump *d,
                      struct cl_error *err)
{
    struct cl_bytes_in in = {df->sec[CL_DUMP_PAGE_RUNS], df->len[CL_DUMP_PAGE_RUNS], 0, false,
                             false};
    uint64_t n = cl_in_u64(&in);
    if (in.bad || n > cl_in_room(&in, CL_DUMP_RUN_SIZE))
        return corrupt(err, name, "its page-run count exceeds its page-run section");
    d->data = df->sec[CL_DUMP_PAGE_DATA];
    d->data_len = df->len[CL_DUMP_PAGE_DATA];
    if (n && !(d->runs = calloc((size_t)n, sizeof *d->runs)))
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    for (uint64_t i = 0; i < n; i++, d->nruns++)
        if (!parse_run(&in, d, i ? d->runs[i - 1].end : 0, &d->runs[i]))
            return corrupt(err, name,
                           "a page run is misaligned, out of order, or points "
                           "outside the page data");
    return 0;
}

static int parse_maps(const struct cl_dumpfile *df, const char *name, struct cl_target *t,
                      struct cl_error *err)
{
    struct cl_bytes_in in = {df->sec[CL_DUMP_MAPS], df->len[CL_DUMP_MAPS], 0, false, false};
    uint64_t n = cl_in_u64(&in);
    if (in.bad || n > cl_in_room(&in, MAP_MIN_SIZE))
        return corrupt(err, name, "its mapping count exceeds its map section");
    for (uint64_t i = 0; i < n; i++) {
        struct cl_mapping m = {0};
        m.start = cl_in_u64(&in);
        m.end = cl_in_u64(&in);
        m.offset = cl_in_u64(&in);
        m.perms = cl_in_u32(&in);
        m.path = cl_in_str(&in, MAX_PATH_LEN);
        bool ordered = m.start < m.end && (!t->maps.n || t->maps.v[t->maps.n - 1].end <= m.start);
        int rc = in.bad || !ordered              ? CL_E_NOT_CORE
                 : cl_mappings_add(&t->maps, &m) ? CL_E_INTERNAL
                                                 : 0;
        free(m.path);
        if (rc == CL_E_INTERNAL || in.oom)
            return cl_error_set(err, CL_E_INTERNAL, "out of memory");
        if (rc)
            return corrupt(err, name, "a mapping is malformed, empty or out of order");
    }
    return 0;
}

static int parse_meta(const struct cl_dumpfile *df, const char *name, struct cl_target *t,
                      struct cl_error *err)
{
    struct cl_bytes_in in = {df->sec[CL_DUMP_META], df->len[CL_DUMP_META], 0, false, false};
    uint32_t kind = cl_in_u32(&in);
    t->pid = (int)cl_in_u32(&in);
    t->ns_pid = (int)cl_in_u32(&in);
    t->signal = (int)cl_in_u32(&in);
    t->exe_path = cl_in_str(&in, MAX_PATH_LEN);
    t->warnings = cl_in_str(&in, MAX_NOTES_LEN);
    uint64_t n = cl_in_u64(&in);
    if (in.oom)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    if (in.bad || (kind != CL_TARGET_LIVE && kind != CL_TARGET_CORE) || n > MAX_THREADS ||
        n > cl_in_room(&in, 4))
        return corrupt(err, name, "its target description is malformed");
    t->source_kind = (enum cl_target_kind)kind;
    if (n && !(t->threads = calloc((size_t)n, sizeof *t->threads)))
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    for (; t->nthreads < n; t->nthreads++)
        t->threads[t->nthreads].tid = (int)cl_in_u32(&in);
    return 0;
}

static int parse_files(const struct cl_dumpfile *df, const char *name, struct cl_target *t,
                       struct cl_error *err)
{
    struct cl_bytes_in in = {df->sec[CL_DUMP_FILES], df->len[CL_DUMP_FILES], 0, false, false};
    uint64_t n = cl_in_u64(&in);
    if (in.bad || n > cl_in_room(&in, 12))
        return corrupt(err, name, "its file count exceeds its file section");
    for (uint64_t i = 0; i < n; i++) {
        char *path = cl_in_str(&in, MAX_PATH_LEN);
        char *local = cl_in_str(&in, MAX_PATH_LEN);
        char *text = cl_in_str(&in, MAX_TEXT_LEN);
        int rc = in.bad || !path ? CL_E_NOT_CORE : cl_filerec_add(&t->files, path, local, text);
        free(path);
        free(local);
        free(text);
        if (in.oom || rc == CL_E_INTERNAL)
            return cl_error_set(err, CL_E_INTERNAL, "out of memory");
        if (rc)
            return corrupt(err, name, "a recorded file is malformed");
    }
    return 0;
}

static int parse_scope(const struct cl_dumpfile *df, const char *name, struct cl_target *t,
                       struct cl_error *err)
{
    if (!df->has[CL_DUMP_SCOPE])
        return 0;
    struct cl_bytes_in in = {df->sec[CL_DUMP_SCOPE], df->len[CL_DUMP_SCOPE], 0, false, false};
    uint32_t flags = cl_in_u32(&in);
    if (in.bad || cl_in_room(&in, 1) ||
        (flags & ~(CL_DUMP_SCOPE_ALLOCATOR_ONLY | CL_DUMP_SCOPE_REDACTED)))
        return corrupt(err, name, "its scope section is malformed");
    t->allocator_only = flags & CL_DUMP_SCOPE_ALLOCATOR_ONLY;
    t->redacted = flags & CL_DUMP_SCOPE_REDACTED;
    return 0;
}

/* The clock reading made where the process ran, if the dump has one (target/clock.h). */
static int parse_clock(const struct cl_dumpfile *df, const char *name, struct cl_target *t,
                       struct cl_error *err)
{
    if (!df->has[CL_DUMP_CLOCK])
        return 0;
    struct cl_bytes_in in = {df->sec[CL_DUMP_CLOCK], df->len[CL_DUMP_CLOCK], 0, false, false};
    if (cl_in_u32(&in) != CL_CLOCK_PAIRS || in.bad || cl_in_room(&in, 16) != CL_CLOCK_PAIRS)
        return corrupt(err, name, "its clock section is malformed");
    if (!(t->clock = malloc(CL_CLOCK_PAIRS * sizeof *t->clock)))
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    for (size_t i = 0; i < CL_CLOCK_PAIRS; i++) {
        t->clock[i].unix_ns = (int64_t)cl_in_u64(&in);
        t->clock[i].ticks = cl_in_u64(&in);
    }
    t->clock_source = CL_CLOCK_TARGET;
    return 0;
}

#define MAX_NOTE 4096

/* Why the dump was taken, if it says (dump --note). */
static int parse_note(const struct cl_dumpfile *df, const char *name, struct cl_target *t,
                      struct cl_error *err)
{
    size_t len = df->len[CL_DUMP_NOTE];
    if (!df->has[CL_DUMP_NOTE])
        return 0;
    if (len == 0 || len > MAX_NOTE || memchr(df->sec[CL_DUMP_NOTE], 0, len))
        return corrupt(err, name, "its note section is malformed");
    if (!(t->note = strndup((const char *)df->sec[CL_DUMP_NOTE], len)))
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    return 0;
}

int cl_target_open_dump_bytes(const unsigned char *p, size_t len, const char *name,
                              const struct cl_open_options *opt, struct cl_target **out,
                              struct cl_error *err)
{
    *out = NULL;
    struct cl_dumpfile df;
    int rc = cl_dumpfile_parse(p, len, name, &df, err);
    if (rc)
        return rc;
    struct cl_open_options o = opt ? *opt : (struct cl_open_options){0};
    o.record = false; /* a dump of a dump would hold only what this run reads */
    struct dump *d = calloc(1, sizeof *d);
    struct cl_target *t;
    if (!d || cl_target_new(&dump_ops, CL_TARGET_DUMP, d, &o, &t)) {
        free(d);
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    }
    d->symbols = df.sec[CL_DUMP_SYMBOLS];
    d->symlen = df.len[CL_DUMP_SYMBOLS];
    if ((rc = parse_meta(&df, name, t, err)) || (rc = parse_maps(&df, name, t, err)) ||
        (rc = parse_files(&df, name, t, err)) || (rc = parse_runs(&df, name, d, err)) ||
        (rc = parse_scope(&df, name, t, err)) || (rc = parse_clock(&df, name, t, err)) ||
        (rc = parse_note(&df, name, t, err))) {
        cl_target_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

int cl_target_open_dump(const char *path, const struct cl_open_options *opt, struct cl_target **out,
                        struct cl_error *err)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int rc = errno == EACCES ? CL_E_PERMISSION : CL_E_IO;
        cl_error_set(err, rc, "cannot open dump %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        return cl_error_set(err, CL_E_NOT_CORE, "%s is %s, not a culeak dump", path,
                            S_ISREG(st.st_mode) ? "empty" : "not a regular file");
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return cl_error_set(err, CL_E_IO, "cannot map %s: %s", path, strerror(errno));
    int rc = cl_target_open_dump_bytes(map, (size_t)st.st_size, path, opt, out, err);
    if (rc) {
        munmap(map, (size_t)st.st_size);
        return rc;
    }
    struct dump *d = (*out)->impl;
    d->map = map;
    d->map_len = (size_t)st.st_size;
    return 0;
}

bool cl_dump_symbols(const struct cl_target *t, const unsigned char **p, size_t *len)
{
    if (t->kind != CL_TARGET_DUMP)
        return false;
    const struct dump *d = t->impl;
    *p = d->symbols;
    *len = d->symlen;
    return true;
}
