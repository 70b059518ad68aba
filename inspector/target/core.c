/* Core files: memory from the core's PT_LOAD segments, and for ranges the core leaves out
 * (p_filesz 0, or no segment at all as with gcore) from the files its NT_FILE note names, found
 * through the locator and checked against the build-id the core recorded. A missing or mismatched
 * file is an error for that read, never zeros. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/corenotes.h"
#include "target/dumpfile.h"
#include "target/target.h"
#include "util/notes.h"
#include "util/vec.h"
#include "util/bsearch.h"

#define BUILDID_MAX 64

struct segment {
    uint64_t vaddr, memsz, filesz, offset;
    unsigned perms;
};

/* A file that backs memory the core does not contain, opened on first use. */
struct backing_file {
    const char *target_path;     /* owned by the mappings */
    char *local_path;
    int fd;                      /* -1 until opened or when unusable */
    int status;                  /* 0 usable, CL_E_IO missing, CL_E_EXE_MISMATCH other build */
    off_t size;
    bool tried;
};

struct core {
    int fd;
    unsigned char *map;   /* the whole file, mapped PROT_READ: never written */
    size_t size;
    struct segment *segs;
    size_t nsegs;
    struct cl_mappings files;    /* NT_FILE entries */
    struct backing_file *backing;/* one per distinct path in files */
    size_t nbacking;
    uint64_t at_entry;
};

struct at {
    const struct core *c;
    uint64_t addr;
};

/* Whether segment i ends at or below addr (segments are sorted and disjoint: check_layout). */
static bool segment_below(size_t i, const void *ctx)
{
    const struct at *q = ctx;
    const struct segment *s = &q->c->segs[i];
    return s->vaddr <= q->addr && q->addr - s->vaddr >= s->memsz;
}

/* Whether segment i starts at or below addr. */
static bool starts_by(size_t i, const void *ctx)
{
    const struct at *q = ctx;
    return q->c->segs[i].vaddr <= q->addr;
}

static const struct segment *segment_at(const struct core *c, uint64_t addr)
{
    struct at q = {c, addr};
    size_t i = cl_partition_point(c->nsegs, segment_below, &q);
    return i < c->nsegs && c->segs[i].vaddr <= addr ? &c->segs[i] : NULL;
}

/* The bytes the core itself holds for [addr, addr+len), or NULL. */
static const unsigned char *dumped(const struct core *c, uint64_t addr, size_t len)
{
    const struct segment *s = segment_at(c, addr);
    if (!s || len > s->filesz || addr - s->vaddr > s->filesz - len)
        return NULL;
    return c->map + s->offset + (addr - s->vaddr);
}

static int by_target_path(const void *a, const void *b)
{
    const struct backing_file *x = a, *y = b;
    return strcmp(x->target_path, y->target_path);
}

/* Sorted by target path (add_backing_files): a core may name 10^5 files, so no linear scans. */
static struct backing_file *backing_for(struct core *c, const char *path)
{
    struct backing_file key = {.target_path = path};
    return c->nbacking ? bsearch(&key, c->backing, c->nbacking, sizeof key, by_target_path) : NULL;
}

/* One backing file per distinct path that NT_FILE names, sorted by that path. */
static int add_backing_files(struct core *c)
{
    if (c->files.n == 0)
        return 0;
    c->backing = calloc(c->files.n, sizeof *c->backing);
    if (!c->backing)
        return CL_E_INTERNAL;
    for (size_t i = 0; i < c->files.n; i++)
        c->backing[i] = (struct backing_file){.target_path = c->files.v[i].path, .fd = -1};
    qsort(c->backing, c->files.n, sizeof *c->backing, by_target_path);
    c->nbacking = 1;
    for (size_t i = 1; i < c->files.n; i++)
        if (strcmp(c->backing[i].target_path, c->backing[c->nbacking - 1].target_path) != 0)
            c->backing[c->nbacking++] = c->backing[i];
    return 0;
}

/* The build-id the core recorded for the file mapped at offset 0 of path, if its first page was
 * dumped (coredump_filter bit 4, on by default). */
static size_t core_buildid(const struct core *c, const char *path, unsigned char *out)
{
    for (size_t i = 0; i < c->files.n; i++) {
        const struct cl_mapping *m = &c->files.v[i];
        if (m->offset != 0 || strcmp(m->path, path) != 0)
            continue;
        const unsigned char *page = dumped(c, m->start, CL_PAGE_SIZE);
        return page ? cl_buildid_parse(page, CL_PAGE_SIZE, out, BUILDID_MAX) : 0;
    }
    return 0;
}

static size_t file_buildid(int fd, unsigned char *out)
{
    unsigned char head[CL_PAGE_SIZE];
    ssize_t n = pread(fd, head, sizeof head, 0);
    return n > 0 ? cl_buildid_parse(head, (size_t)n, out, BUILDID_MAX) : 0;
}

static void open_backing(struct cl_target *t, struct core *c, struct backing_file *b)
{
    b->tried = true;
    b->fd = -1;
    bool is_exe = t->exe_path && strcmp(b->target_path, t->exe_path) == 0;
    b->local_path = cl_locate_file(&t->locator, b->target_path, is_exe);
    if (!b->local_path || (b->fd = open(b->local_path, O_RDONLY | O_CLOEXEC)) < 0) {
        b->status = CL_E_IO;
        return;
    }
    struct stat st;
    b->size = fstat(b->fd, &st) == 0 ? st.st_size : 0;
    unsigned char want[BUILDID_MAX], have[BUILDID_MAX];
    size_t nw = core_buildid(c, b->target_path, want), nh = nw ? file_buildid(b->fd, have) : 0;
    if (nw && (nh != nw || memcmp(want, have, nw) != 0)) {
        b->status = CL_E_EXE_MISMATCH;
        close(b->fd);
        b->fd = -1;
        cl_note_add(&t->warnings,
                    "%s is not the file the core was made from (build-id differs); its "
                    "memory is unreadable",
                    b->local_path);
        return;
    }
    b->status = 0;
}

/* Fills [addr, addr+len) (within one page) from the file that the target mapped there. */
static int read_from_file(struct cl_target *t, struct core *c, uint64_t addr, unsigned char *buf,
                          size_t len)
{
    const struct cl_mapping *m = cl_mappings_find(&c->files, addr);
    if (!m)
        return cl_error_set(&t->err, CL_E_UNREADABLE,
                            "0x%llx is not in the core (left out of the dump, e.g. by "
                            "coredump_filter)",
                            (unsigned long long)addr);
    struct backing_file *b = backing_for(c, m->path);
    if (!b->tried)
        open_backing(t, c, b);
    if (b->status == CL_E_IO)
        return cl_error_set(&t->err, CL_E_UNREADABLE,
                            "0x%llx is backed by %s, which is not on this machine "
                            "(use --sysroot or --lib-path)",
                            (unsigned long long)addr, m->path);
    if (b->status)
        return cl_error_set(&t->err, CL_E_UNREADABLE,
                            "0x%llx is backed by %s, which does not match the core (build-id)",
                            (unsigned long long)addr, b->local_path);
    uint64_t at;   /* the file offset; a corrupt NT_FILE offset may wrap it */
    if (__builtin_add_overflow(m->offset, addr - m->start, &at) || at >= (uint64_t)b->size)
        return cl_error_set(&t->err, CL_E_UNREADABLE, "0x%llx lies past the end of %s",
                            (unsigned long long)addr, b->local_path);
    off_t off = (off_t)at;   /* below the file's size, so it fits */
    size_t avail = (size_t)(b->size - off) < len ? (size_t)(b->size - off) : len;
    if (pread(b->fd, buf, avail, off) != (ssize_t)avail)
        return cl_error_set(&t->err, CL_E_UNREADABLE, "reading %s: %s", b->local_path,
                            strerror(errno));
    memset(buf + avail, 0, len - avail);   /* the rest of the file's last page reads as zeros */
    return 0;
}

static int core_read_page(struct cl_target *t, uint64_t addr, void *page)
{
    struct core *c = t->impl;
    unsigned char *out = page;
    const struct segment *s = segment_at(c, addr);
    size_t in_core = 0;
    if (s && addr - s->vaddr < s->filesz) {
        in_core = (size_t)(s->filesz - (addr - s->vaddr));
        if (in_core > CL_PAGE_SIZE)
            in_core = CL_PAGE_SIZE;
        memcpy(out, c->map + s->offset + (addr - s->vaddr), in_core);
    }
    if (in_core == CL_PAGE_SIZE)
        return 0;
    return read_from_file(t, c, addr + in_core, out + in_core, CL_PAGE_SIZE - in_core);
}

static void core_close(struct cl_target *t)
{
    struct core *c = t->impl;
    if (!c)
        return;
    for (size_t i = 0; i < c->nbacking; i++) {
        if (c->backing[i].fd >= 0)
            close(c->backing[i].fd);
        free(c->backing[i].local_path);
    }
    free(c->backing);
    cl_mappings_free(&c->files);
    free(c->segs);
    if (c->map)
        munmap(c->map, c->size);
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}

static bool core_resident(struct cl_target *t, uint64_t addr, struct cl_window *w)
{
    const struct core *c = t->impl;
    const struct segment *s = segment_at(c, addr);
    if (!s || addr - s->vaddr >= s->filesz)
        return false;
    *w = (struct cl_window){s->vaddr, s->filesz, c->map + s->offset};
    return true;
}

static int core_file_status(struct cl_target *t, const char *path)
{
    struct core *c = t->impl;
    struct backing_file *b = backing_for(c, path);
    if (!b)
        return 0;   /* not a file the core names */
    if (!b->tried)
        open_backing(t, c, b);
    return b->status;
}

static const struct cl_target_ops core_ops = {.read_page = core_read_page,
                                              .close = core_close,
                                              .resident = core_resident,
                                              .file_status = core_file_status};

struct note_state {
    struct cl_target *t;
    struct core *c;
    int pid_from_psinfo;
    size_t threads_cap;          /* allocated length of t->threads */
};

static int add_thread(struct note_state *st, int tid)
{
    struct cl_target *t = st->t;
    if (!CL_VEC_RESERVE(t->threads, t->nthreads, st->threads_cap))
        return CL_E_INTERNAL;
    t->threads[t->nthreads++] = (struct cl_thread){.tid = tid};
    return 0;
}

static int on_note(const struct cl_note *n, void *arg)
{
    struct note_state *st = arg;
    if (strcmp(n->name, "CORE") != 0)
        return 0;
    switch (n->type) {
    case NT_PRSTATUS: {
        struct cl_prstatus ps;
        if (cl_prstatus_parse(n->desc, n->descsz, &ps) != 0)
            return CL_E_NOT_CORE;   /* a thread cut short: the list of threads would be wrong */
        if (st->t->nthreads == 0)   /* the first thread is the one that took the signal */
            st->t->signal = ps.cursig;
        return add_thread(st, ps.pid);
    }
    case NT_PRPSINFO: {
        struct cl_prpsinfo pi;
        if (cl_prpsinfo_parse(n->desc, n->descsz, &pi) == 0)
            st->pid_from_psinfo = pi.pid;
        break;
    }
    case NT_AUXV: st->c->at_entry = cl_auxv_get(n->desc, n->descsz, AT_ENTRY); break;
    case NT_FILE: return cl_nt_file_parse(n->desc, n->descsz, &st->c->files);
    }
    return 0;
}

static int by_vaddr(const void *a, const void *b)
{
    const struct segment *x = a, *y = b;
    return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* The ELF header: an x86-64 core with a program header table that lies inside the file. The
 * table's end is computed without wrapping: a corrupt e_phoff must not pass as a small one. */
static int read_ehdr(const struct core *c, const char *path, Elf64_Ehdr *eh, struct cl_error *err)
{
    if (cl_dumpfile_is_dump(c->map, c->size))
        return cl_error_set(err, CL_E_NOT_CORE,
                            "%s is a culeak dump, not a core: read it with "
                            "--dump %s",
                            path, path);
    /* gdb writes a core's ELF header last, when it closes the file: a gcore that ran out of
     * disk (cuda-gdb's of a process with CUDA address reservations can need a terabyte) is
     * all there but for zeros where the header belongs. */
    static const unsigned char zeros[sizeof(Elf64_Ehdr)];
    if (c->size >= sizeof zeros && memcmp(c->map, zeros, sizeof zeros) == 0)
        return cl_error_set(err, CL_E_TRUNCATED,
                            "%s is an unfinished core: zeros where its ELF header belongs "
                            "(gdb writes the header last; a full disk leaves this)",
                            path);
    if (c->size < SELFMAG || memcmp(c->map, ELFMAG, SELFMAG) != 0)
        return cl_error_set(err, CL_E_NOT_CORE, "%s is not an ELF file", path);
    if (c->size < sizeof *eh)
        return cl_error_set(err, CL_E_TRUNCATED,
                            "%s is truncated: %zu bytes, shorter than an "
                            "ELF header",
                            path, c->size);
    memcpy(eh, c->map, sizeof *eh);
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
        eh->e_machine != EM_X86_64)
        return cl_error_set(err, CL_E_NOT_CORE,
                            "%s is a core of another architecture (ELF "
                            "class %d, machine %d); culeak reads x86-64 cores",
                            path, eh->e_ident[EI_CLASS], eh->e_machine);
    if (eh->e_type != ET_CORE)
        return cl_error_set(err, CL_E_NOT_CORE, "%s is an ELF %s, not a core file", path,
                            eh->e_type == ET_EXEC || eh->e_type == ET_DYN ? "program or library"
                                                                          : "object");
    if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 || eh->e_phnum == PN_XNUM)
        return cl_error_set(err, CL_E_NOT_CORE, "%s: unsupported program header table", path);
    uint64_t ph_end;
    if (__builtin_add_overflow(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), &ph_end))
        return cl_error_set(err, CL_E_NOT_CORE,
                            "%s: corrupt ELF header (program header offset "
                            "0x%llx)",
                            path, (unsigned long long)eh->e_phoff);
    if (ph_end > c->size)
        return cl_error_set(err, CL_E_TRUNCATED,
                            "%s is truncated: %zu bytes, its program "
                            "headers end at %llu",
                            path, c->size, (unsigned long long)ph_end);
    return 0;
}

/* Whether a program header describes a range that exists: its file bytes end below 2^64 and,
 * for PT_LOAD, its memory ends below 2^64 and holds its file bytes. A wrapped end would make
 * the map's ranges run backwards. */
static bool phdr_sane(const Elf64_Phdr *ph)
{
    uint64_t end;
    if (__builtin_add_overflow(ph->p_offset, ph->p_filesz, &end))
        return false;
    if (ph->p_type != PT_LOAD)
        return true;
    return ph->p_filesz <= ph->p_memsz && !__builtin_add_overflow(ph->p_vaddr, ph->p_memsz, &end);
}

static unsigned segment_perms(uint32_t flags)
{
    return ((flags & PF_R) ? CL_MAP_R : 0) | ((flags & PF_W) ? CL_MAP_W : 0) |
           ((flags & PF_X) ? CL_MAP_X : 0);
}

/* One program header: a PT_LOAD becomes a segment, a PT_NOTE is read for threads and files.
 * *need grows to the end of the bytes it claims, so truncation is reported once, after all. */
static int take_phdr(struct core *c, const Elf64_Phdr *ph, unsigned i, struct note_state *st,
                     uint64_t *need, const char *path, struct cl_error *err)
{
    if (!phdr_sane(ph))
        return cl_error_set(err, CL_E_NOT_CORE, "%s: corrupt program header %u", path, i);
    uint64_t end = ph->p_offset + ph->p_filesz;   /* phdr_sane: does not wrap */
    if (end > *need)
        *need = end;
    if (end > c->size)
        return 0;   /* reported by the caller as truncation */
    if (ph->p_type == PT_LOAD && ph->p_memsz > 0) {
        c->segs[c->nsegs++] = (struct segment){ph->p_vaddr, ph->p_memsz, ph->p_filesz, ph->p_offset,
                                               segment_perms(ph->p_flags)};
    } else if (ph->p_type == PT_NOTE) {
        int rc = cl_notes_foreach(c->map + ph->p_offset, ph->p_filesz, on_note, st);
        if (rc == CL_E_INTERNAL)
            return cl_error_set(err, rc, "out of memory");
        if (rc)
            return cl_error_set(err, CL_E_NOT_CORE, "%s: malformed note segment", path);
    }
    return 0;
}

/* The map's lookups are binary searches over ranges sorted by start, which need them disjoint:
 * the kernel and gcore never write overlapping PT_LOADs or NT_FILE entries. */
static int check_layout(const struct core *c, const char *path, struct cl_error *err)
{
    for (size_t i = 1; i < c->nsegs; i++)
        if (c->segs[i].vaddr - c->segs[i - 1].vaddr < c->segs[i - 1].memsz)
            return cl_error_set(err, CL_E_NOT_CORE,
                                "%s: corrupt program headers (PT_LOADs at "
                                "0x%llx and 0x%llx overlap)",
                                path, (unsigned long long)c->segs[i - 1].vaddr,
                                (unsigned long long)c->segs[i].vaddr);
    for (size_t i = 1; i < c->files.n; i++)
        if (c->files.v[i].start < c->files.v[i - 1].end)
            return cl_error_set(err, CL_E_NOT_CORE,
                                "%s: corrupt NT_FILE note (entries at "
                                "0x%llx and 0x%llx overlap)",
                                path, (unsigned long long)c->files.v[i - 1].start,
                                (unsigned long long)c->files.v[i].start);
    return 0;
}

static int read_headers(struct cl_target *t, struct core *c, const char *path, struct cl_error *err)
{
    Elf64_Ehdr eh;
    int rc = read_ehdr(c, path, &eh, err);
    if (rc)
        return rc;
    c->segs = calloc(eh.e_phnum, sizeof *c->segs);
    if (!c->segs)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    struct note_state st = {t, c, 0, 0};
    uint64_t need = eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr);   /* read_ehdr */
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, c->map + eh.e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
        if ((rc = take_phdr(c, &ph, i, &st, &need, path, err)))
            return rc;
    }
    if (need > c->size)
        return cl_error_set(err, CL_E_TRUNCATED,
                            "%s is truncated: %zu of %llu bytes present "
                            "(the dump was cut short, e.g. by a disk or ulimit -c limit)",
                            path, c->size, (unsigned long long)need);
    qsort(c->segs, c->nsegs, sizeof *c->segs, by_vaddr);
    cl_mappings_sort(&c->files);
    if ((rc = check_layout(c, path, err)))
        return rc;
    t->pid = st.pid_from_psinfo ? st.pid_from_psinfo : (t->nthreads ? t->threads[0].tid : 0);
    if (t->nthreads == 0)
        return cl_error_set(err, CL_E_NOT_CORE,
                            "%s has no thread (NT_PRSTATUS) notes; not a "
                            "process core",
                            path);
    return 0;
}

/* The start of the first segment above addr, or UINT64_MAX when none is. */
static uint64_t next_segment_start(const struct core *c, uint64_t addr)
{
    struct at q = {c, addr};
    size_t i = cl_partition_point(c->nsegs, starts_by, &q);
    return i < c->nsegs ? c->segs[i].vaddr : UINT64_MAX;
}

/* Maps the parts of an NT_FILE entry that no segment covers. Each step moves past a segment or
 * up to the next one (segments end below 2^64 and do not overlap: check_layout), so the loop
 * takes at most 2 * nsegs + 1 steps. */
static int add_file_gaps(struct cl_target *t, const struct core *c, const struct cl_mapping *f)
{
    for (uint64_t a = f->start; a < f->end;) {
        const struct segment *s = segment_at(c, a);
        if (s) {
            a = s->vaddr + s->memsz;
            continue;
        }
        uint64_t end = next_segment_start(c, a);
        if (end > f->end)
            end = f->end;
        struct cl_mapping m = {.start = a,
                               .end = end,
                               .perms = CL_MAP_R,
                               .path = f->path,
                               .offset = f->offset + (a - f->start)};
        if (cl_mappings_add(&t->maps, &m))
            return CL_E_INTERNAL;
        a = end;
    }
    return 0;
}

/* The target's map: every PT_LOAD (named by the NT_FILE entry that covers it) and every NT_FILE
 * range no PT_LOAD covers (gcore drops excluded file mappings entirely). */
static int build_maps(struct cl_target *t, struct core *c)
{
    for (size_t i = 0; i < c->nsegs; i++) {
        const struct segment *s = &c->segs[i];
        const struct cl_mapping *f = cl_mappings_find(&c->files, s->vaddr);
        struct cl_mapping m = {.start = s->vaddr, .end = s->vaddr + s->memsz, .perms = s->perms};
        if (f) {
            m.path = f->path;
            m.offset = f->offset + (s->vaddr - f->start);
        }
        if (cl_mappings_add(&t->maps, &m))
            return CL_E_INTERNAL;
    }
    for (size_t i = 0; i < c->files.n; i++)
        if (add_file_gaps(t, c, &c->files.v[i]))
            return CL_E_INTERNAL;
    cl_mappings_sort(&t->maps);
    if (add_backing_files(c))
        return CL_E_INTERNAL;
    const struct cl_mapping *exe = c->at_entry ? cl_mappings_find(&c->files, c->at_entry) : NULL;
    if (exe && !(t->exe_path = strdup(exe->path)))
        return CL_E_INTERNAL;
    return 0;
}

/* --exe must be the program the core was made from: same build-id when the core recorded one,
 * and its entry point where the kernel said the entry was. */
static int check_exe(struct cl_target *t, struct core *c, struct cl_error *err)
{
    const char *exe = t->locator.exe;
    int fd = open(exe, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cl_error_set(err, CL_E_IO, "cannot open --exe %s: %s", exe, strerror(errno));
    unsigned char head[CL_PAGE_SIZE], want[BUILDID_MAX], have[BUILDID_MAX];
    ssize_t n = pread(fd, head, sizeof head, 0);
    close(fd);
    Elf64_Ehdr eh;
    if (n < (ssize_t)sizeof eh || memcmp(head, ELFMAG, SELFMAG) != 0)
        return cl_error_set(err, CL_E_EXE_MISMATCH, "--exe %s is not an ELF program", exe);
    memcpy(&eh, head, sizeof eh);
    if (!t->exe_path)
        return cl_error_set(err, CL_E_EXE_MISMATCH,
                            "the core does not say which mapping is the "
                            "executable, so --exe %s cannot be checked",
                            exe);
    size_t nw = core_buildid(c, t->exe_path, want);
    size_t nh = cl_buildid_parse(head, (size_t)n, have, BUILDID_MAX);
    if (nw && (nw != nh || memcmp(want, have, nw) != 0))
        return cl_error_set(err, CL_E_EXE_MISMATCH,
                            "--exe %s does not match the core: the core "
                            "was made from %s, whose build-id differs",
                            exe, t->exe_path);
    if (eh.e_type == ET_EXEC && c->at_entry && eh.e_entry != c->at_entry)
        return cl_error_set(err, CL_E_EXE_MISMATCH,
                            "--exe %s does not match the core: entry "
                            "point 0x%llx, the core's is 0x%llx",
                            exe, (unsigned long long)eh.e_entry, (unsigned long long)c->at_entry);
    if (!nw)
        cl_note_add(&t->warnings,
                    "the core holds no build-id for %s; --exe %s is trusted unchecked", t->exe_path,
                    exe);
    return 0;
}

int cl_target_open_core(const char *path, const struct cl_open_options *opt, struct cl_target **out,
                        struct cl_error *err)
{
    *out = NULL;
    struct cl_target *t;
    struct core *c = calloc(1, sizeof *c);
    if (!c || cl_target_new(&core_ops, CL_TARGET_CORE, c, opt, &t)) {
        free(c);
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    }
    c->fd = -1;
    int rc;
    struct stat st;
    /* O_NONBLOCK: a FIFO given as --core must not block the open. */
    if ((c->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0 || fstat(c->fd, &st) != 0) {
        rc = errno == EACCES ? CL_E_PERMISSION : CL_E_IO;
        cl_error_set(err, rc, "cannot open core %s: %s", path, strerror(errno));
        cl_target_close(t);
        return rc;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {
        cl_target_close(t);
        return cl_error_set(err, CL_E_NOT_CORE, "%s is %s, not a core file", path,
                            S_ISREG(st.st_mode) ? "empty" : "not a regular file");
    }
    c->size = (size_t)st.st_size;
    void *map = mmap(NULL, c->size, PROT_READ, MAP_PRIVATE, c->fd, 0);
    if (map == MAP_FAILED) {
        cl_target_close(t);
        return cl_error_set(err, CL_E_IO, "cannot map %s: %s", path, strerror(errno));
    }
    c->map = map;
    if ((rc = read_headers(t, c, path, err)) || (rc = build_maps(t, c)) ||
        (t->locator.exe && (rc = check_exe(t, c, err)))) {
        if (rc == CL_E_INTERNAL)
            cl_error_set(err, rc, "out of memory");
        cl_target_close(t);
        return rc;
    }
    *out = t;
    return 0;
}
