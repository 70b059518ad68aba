#include "target/freeze.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/pagecache.h"
#include "util/error.h"
#include "util/vec.h"
#include "util/bsearch.h"

/* Bytes per read: large enough that the syscalls cost nothing beside the copy, small enough that
 * a page that fails costs one chunk read page by page. */
#define CHUNK (1u << 20)
/* Page-table entries per read of them (32 KiB). A mapping of more than PAGEMAP_MAX_PAGES (64 GiB,
 * whose entries alone are 128 MiB) is taken whole, and so counts whole against the limit: such
 * reservations (a sanitizer's shadow memory) are no heap worth copying. */
#define PAGEMAP_BATCH 4096u
#define PAGEMAP_MAX_PAGES (16ull << 20)
/* Files a plan holds open for the file pages it leaves out, at most, each once for all its
 * mappings: a CUDA torch process maps about 90 files in 330 read-only mappings and 100 writable
 * ones, a plan made stopped opens them beside the one made before, and culeak opens files of its
 * own besides (the usual limit is 1024). */
#define MAX_FILES 256u
/* Pages copied at a time by a copy made on demand (256 KiB): pymalloc's pools and arenas, and
 * the malloc chunks between them, lie together, so a walk needs most pages near one it needs. */
#define FILL_PAGES 64u
#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)
#define PM_FILE (1ull << 61)   /* the page is the file's (or shared), not one the process wrote */

/* Pseudo paths of memory that is the process's own: the heap, stacks, named anonymous memory. */
static bool own_pseudo_path(const char *path)
{
    return strcmp(path, "[heap]") == 0 || strncmp(path, "[stack", 6) == 0 ||
           strncmp(path, "[anon:", 6) == 0;
}

bool cl_freeze_wants(const struct cl_mapping *m)
{
    if (!(m->perms & CL_MAP_R) || (m->perms & CL_MAP_SHARED))
        return false;
    if (!m->path)
        return true;
    if (m->path[0] == '[')   /* [vvar] and [vsyscall] are the kernel's, [vdso] its code */
        return own_pseudo_path(m->path);
    if (strncmp(m->path, "/dev/", 5) == 0 && strcmp(m->path, "/dev/zero") != 0)
        return false;   /* a device's memory: reading it may have effects, and it is no heap */
    /* A file's read-only pages too: they never change, but the walk reads them (type names,
     * vtables) after the process runs again, which may then die (of the OOM culeak was called
     * for). They are read from the file, but for those the process wrote (RELRO). */
    return true;
}

static bool anonymous(const struct cl_mapping *m)
{
    return !m->path || m->path[0] == '[' || strcmp(m->path, "/dev/zero") == 0;
}

static bool bit(const uint8_t *bits, uint64_t i)
{
    return bits && (bits[i / 8] >> (i % 8) & 1);
}

static void set_bit(uint8_t *bits, uint64_t i)
{
    bits[i / 8] |= (uint8_t)(1u << (i % 8));
}

static void clear_bit(uint8_t *bits, uint64_t i)
{
    bits[i / 8] &= (uint8_t)~(1u << (i % 8));
}

static void free_region(struct cl_frozen_region *r)
{
    if (r->data)
        munmap(r->data, r->end - r->start);
    free(r->absent);
    free(r->unreadable);
    free(r->filled);
    free(r->unread);
    free(r->touched);
}

static void forget_absent(struct cl_frozen_region *r, uint64_t *absent)
{
    free(r->absent);
    r->absent = NULL;
    *absent = 0;
}

/* plan_absent's answer where the page tables could not be read: every page is taken (not a
 * cl_status). */
#define PAGEMAP_UNREAD (-1)

/* Marks r's pages that are neither present nor swapped out, from the page tables, and counts
 * them in *absent; with file_pages, also those present that are still the file's. Pages left
 * out unread are neither looked up nor marked. 0,
 * PAGEMAP_UNREAD, or CL_E_INTERNAL when out of memory. */
static int plan_absent(struct cl_frozen_region *r, const struct cl_freeze_source *src,
                       bool file_pages, uint64_t *absent)
{
    uint64_t npages = (r->end - r->start) / CL_PAGE_SIZE;
    *absent = 0;
    if (!src->pagemap || npages > PAGEMAP_MAX_PAGES)
        return PAGEMAP_UNREAD;
    uint64_t *entries = malloc(PAGEMAP_BATCH * sizeof *entries);
    if (!entries || !(r->absent = calloc((npages + 7) / 8, 1))) {
        free(entries);
        return CL_E_INTERNAL;
    }
    for (uint64_t i = 0; i < npages;) {
        if (bit(r->unread, i)) {   /* left out: its page-table entry is not needed */
            i++;
            continue;
        }
        size_t want = 1;
        while (want < PAGEMAP_BATCH && i + want < npages && !bit(r->unread, i + want))
            want++;
        long n = src->pagemap(src->arg, r->start + i * CL_PAGE_SIZE, want, entries);
        if (n != (long)want) {   /* unreadable: take every page */
            free(entries);
            forget_absent(r, absent);
            return PAGEMAP_UNREAD;
        }
        for (size_t k = 0; k < want; k++, i++)
            if (!(entries[k] & (PM_PRESENT | PM_SWAPPED)) ||
                (file_pages && (entries[k] & (PM_PRESENT | PM_FILE)) == (PM_PRESENT | PM_FILE))) {
                set_bit(r->absent, i);
                ++*absent;
            }
    }
    free(entries);
    if (!*absent)
        forget_absent(r, absent);
    return 0;
}

/* The file mapping m maps, opened once for all its mappings (f keeps it), or -1 where it cannot
 * be had. */
static int plan_open(struct cl_frozen *f, const struct cl_mapping *m,
                     const struct cl_freeze_source *src)
{
    for (size_t i = 0; i < f->nfiles; i++)
        if (f->files[i].dev == m->dev && f->files[i].inode == m->inode)
            return f->files[i].fd;
    int fd;
    if (!src->open_file || f->nfiles >= MAX_FILES ||
        !CL_VEC_RESERVE(f->files, f->nfiles, f->files_cap) ||
        (fd = src->open_file(src->arg, m)) < 0)
        return -1;
    f->files[f->nfiles++] = (struct cl_frozen_file){m->dev, m->inode, fd};
    return fd;
}

/* The file behind r's absent pages, for a file's mapping m: false where it cannot be had (those
 * pages are then copied after all). Pages past the file's end are copied (reading them fails, as
 * it would in the process). */
static bool plan_file(struct cl_frozen *f, struct cl_frozen_region *r, const struct cl_mapping *m,
                      const struct cl_freeze_source *src, uint64_t *absent)
{
    struct stat st;
    if ((r->fd = plan_open(f, m, src)) < 0) {
        forget_absent(r, absent);
        return false;
    }
    r->file_offset = m->offset;
    r->file_size = fstat(r->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
    uint64_t npages = (r->end - r->start) / CL_PAGE_SIZE;
    for (uint64_t i = 0; i < npages; i++)
        if (bit(r->absent, i) && r->file_offset + i * CL_PAGE_SIZE >= r->file_size) {
            clear_bit(r->absent, i);
            --*absent;
        }
    if (!*absent) {
        r->fd = -1;
        forget_absent(r, absent);
    }
    return true;
}

/* Sets (or clears) the bits of r's pages that the ranges of set cover. */
static void mark_pages(struct cl_frozen_region *r, const struct cl_ranges *set, bool on)
{
    for (size_t k = cl_ranges_first_after(set, r->start); k < set->n && set->v[k].start < r->end;
         k++) {
        uint64_t from = set->v[k].start > r->start ? set->v[k].start : r->start;
        uint64_t to = set->v[k].end < r->end ? set->v[k].end : r->end;
        for (uint64_t i = (from - r->start) / CL_PAGE_SIZE;
             i < (to - r->start + CL_PAGE_SIZE - 1) / CL_PAGE_SIZE; i++)
            on ? set_bit(r->unread, i) : clear_bit(r->unread, i);
    }
}

/* Marks r's pages the scout saw and did not read as left out (r->unread), before anything else
 * is planned of them; their count in *unread. False when out of memory. */
static bool plan_unread(struct cl_frozen_region *r, const struct cl_scouted *s, uint64_t *unread)
{
    uint64_t npages = (r->end - r->start) / CL_PAGE_SIZE;
    *unread = 0;
    if (!s || !r->leavable)
        return true;
    if (!(r->unread = calloc((npages + 7) / 8, 1)))
        return false;
    mark_pages(r, &s->seen, true);
    mark_pages(r, &s->read, false);
    for (uint64_t p = 0; p < npages; p++)
        *unread += bit(r->unread, p);
    if (!*unread) {
        free(r->unread);
        r->unread = NULL;
    }
    return true;
}

/* Plans r, which copies m: 0, PLAN_LEFT_OUT for a file's read-only mapping whose pages cannot
 * be told apart or whose file cannot be had (copying its code whole would cost more than the
 * process is worth stopped: it is read from the process), or CL_E_INTERNAL. */
#define PLAN_LEFT_OUT (-1)
static int plan_region(struct cl_frozen *f, struct cl_frozen_region *r, const struct cl_mapping *m,
                       const struct cl_freeze_source *src, const struct cl_scouted *scouted)
{
    *r = (struct cl_frozen_region){.start = m->start,
                                   .end = m->end,
                                   .fd = -1,
                                   .dev = m->dev,
                                   .inode = m->inode,
                                   .read_only = !(m->perms & CL_MAP_W) && !anonymous(m),
                                   .leavable = anonymous(m) &&
                                               !(m->path && strncmp(m->path, "[stack", 6) == 0)};
    uint64_t absent = 0, unread;
    if (!plan_unread(r, scouted, &unread))
        return CL_E_INTERNAL;
    int rc = plan_absent(r, src, r->read_only, &absent);
    if (rc == CL_E_INTERNAL)
        return rc;
    if (r->read_only && rc == PAGEMAP_UNREAD)
        return PLAN_LEFT_OUT;
    if (absent && !anonymous(m) && !plan_file(f, r, m, src, &absent) && r->read_only)
        return PLAN_LEFT_OUT;
    r->bytes = m->end - m->start - (absent + unread) * CL_PAGE_SIZE;
    f->bytes += r->bytes;
    f->unread_bytes += unread * CL_PAGE_SIZE;
    return 0;
}

/* The library whose writable mapping m is, looked up once a plan (f keeps it): NULL when out of
 * memory. One whose file cannot be had is not foreign: its data is copied. */
static const struct cl_frozen_lib *plan_lib(struct cl_frozen *f, const struct cl_mapping *m,
                                            const struct cl_freeze_source *src)
{
    for (size_t i = 0; i < f->nlibs; i++)
        if (f->libs[i].dev == m->dev && f->libs[i].inode == m->inode)
            return &f->libs[i];
    if (!CL_VEC_RESERVE(f->libs, f->nlibs, f->libs_cap))
        return NULL;
    struct cl_frozen_lib *lib = &f->libs[f->nlibs++];
    *lib = (struct cl_frozen_lib){.dev = m->dev, .inode = m->inode};
    int fd = plan_open(f, m, src);
    if (fd >= 0)
        lib->foreign = cl_libdata_foreign(fd, lib->seg, &lib->nseg);
    return lib;
}

/* A writable segment of a library can span no more than this (libcublasLt's: 86 MiB). */
#define MAX_SEGMENT_MEMORY (4ull << 30)
#define PAGE_MASK ((uint64_t)CL_PAGE_SIZE - 1)

/* The end of the memory of lib's writable segment that m maps part of, its .bss included; 0
 * when m maps none of them, or when the segment does not fit where m lies. */
static uint64_t segment_end(const struct cl_frozen_lib *lib, const struct cl_mapping *m)
{
    for (size_t i = 0; i < lib->nseg; i++) {
        const struct cl_lib_segment *s = &lib->seg[i];
        uint64_t in_file = s->offset & ~PAGE_MASK;   /* the segment's first page */
        if (m->offset < in_file || m->offset - in_file >= s->memsz || s->memsz > MAX_SEGMENT_MEMORY)
            continue;
        /* m->start lies (m->offset - in_file) into the segment's first page in memory */
        uint64_t first = m->start - (m->offset - in_file);
        uint64_t end = first + (s->vaddr & PAGE_MASK) + s->memsz;
        end = (end + PAGE_MASK) & ~PAGE_MASK;
        return first <= m->start && end >= m->end ? end : 0;
    }
    return 0;
}

/* Whether the plan leaves m out as the writable data of a foreign library: one of its writable
 * file mappings, or an anonymous mapping right after it within its segment (its .bss), which
 * *bss_at and *bss_end track. 1, 0, or CL_E_INTERNAL. */
static int plan_foreign(struct cl_frozen *f, const struct cl_mapping *m,
                        const struct cl_freeze_source *src, uint64_t *bss_at, uint64_t *bss_end)
{
    if (!m->path && m->start == *bss_at && m->end <= *bss_end) {
        *bss_at = m->end;
        return 1;
    }
    *bss_at = *bss_end = 0;
    if (!(m->perms & CL_MAP_W) || anonymous(m))
        return 0;
    const struct cl_frozen_lib *lib = plan_lib(f, m, src);
    if (!lib)
        return CL_E_INTERNAL;
    uint64_t end = lib->foreign ? segment_end(lib, m) : 0;
    if (!end)
        return 0;
    *bss_at = m->end;
    *bss_end = end;
    return 1;
}

/* Gives f the file q reads its pages from, which reserved opened: false when out of memory. */
static bool take_file(struct cl_frozen *f, struct cl_frozen *reserved,
                      const struct cl_frozen_region *q)
{
    for (size_t i = 0; i < f->nfiles; i++)
        if (f->files[i].fd == q->fd)
            return true;
    for (size_t i = 0; i < reserved->nfiles; i++)
        if (reserved->files[i].fd == q->fd) {
            if (!CL_VEC_RESERVE(f->files, f->nfiles, f->files_cap))
                return false;
            f->files[f->nfiles++] = reserved->files[i];
            reserved->files[i].fd = -1;
            return true;
        }
    return false;
}

/* Whether q, of a plan made while the process ran, copied m already: m is the same read-only
 * mapping of the same file, whose pages the process cannot have written since. */
static bool copied_already(const struct cl_frozen_region *q, const struct cl_mapping *m)
{
    return q->copied && q->start == m->start && q->end == m->end && !(m->perms & CL_MAP_W) &&
           q->dev == m->dev && q->inode == m->inode && (q->fd < 0 || q->file_offset == m->offset);
}

/* Plans r, which copies m, from q, reserved's region of the same start (or NULL): takes q whole
 * where it was copied already, else q's memory if its range is m's. */
static int replan_region(struct cl_frozen *f, struct cl_frozen_region *r,
                         const struct cl_mapping *m, const struct cl_freeze_source *src,
                         struct cl_frozen *reserved, struct cl_frozen_region *q,
                         const struct cl_scouted *scouted)
{
    if (q && copied_already(q, m) && (q->fd < 0 || take_file(f, reserved, q))) {
        *r = *q;
        *q = (struct cl_frozen_region){.fd = -1};
        f->bytes += r->bytes;
        return 0;
    }
    int rc = plan_region(f, r, m, src, scouted);
    if (!rc && q && q->end == r->end) {
        r->data = q->data;
        q->data = NULL;
    }
    return rc;
}

int cl_freeze_replan(struct cl_frozen *f, const struct cl_mappings *ms,
                     const struct cl_freeze_source *src, struct cl_frozen *reserved,
                     const struct cl_scouted *scouted)
{
    size_t cap = 0, k = 0;
    uint64_t bss_at = 0, bss_end = 0;
    int rc = 0;
    memset(f, 0, sizeof *f);
    if (reserved) { /* what it found of the libraries, not to be read again while stopped */
        f->libs = reserved->libs;
        f->nlibs = reserved->nlibs;
        f->libs_cap = reserved->libs_cap;
        reserved->libs = NULL;
        reserved->nlibs = reserved->libs_cap = 0;
    }
    for (size_t i = 0; i < ms->n && !rc; i++) {
        const struct cl_mapping *m = &ms->v[i];
        if (!cl_freeze_wants(m))
            continue;
        int foreign = plan_foreign(f, m, src, &bss_at, &bss_end);
        if (foreign) {
            rc = foreign < 0 ? foreign : 0;
            continue;
        }
        if (!CL_VEC_RESERVE(f->v, f->n, cap)) {
            rc = CL_E_INTERNAL;
            break;
        }
        /* the region of reserved that starts where m does, if any (both are sorted) */
        while (reserved && k < reserved->n && reserved->v[k].start < m->start)
            k++;
        struct cl_frozen_region *q = reserved && k < reserved->n && reserved->v[k].start == m->start
                                         ? &reserved->v[k]
                                         : NULL;
        struct cl_frozen_region *r = &f->v[f->n++];
        rc = replan_region(f, r, m, src, reserved, q, scouted);
        if (rc == PLAN_LEFT_OUT) {
            free_region(r);
            f->n--;
            rc = 0;
        }
    }
    if (rc)
        cl_frozen_free(f);
    if (reserved)
        cl_frozen_free(reserved);
    return rc;
}

int cl_freeze_plan(struct cl_frozen *f, const struct cl_mappings *ms,
                   const struct cl_freeze_source *src, const struct cl_scouted *scouted)
{
    return cl_freeze_replan(f, ms, src, NULL, scouted);
}

/* Guards the unreadable bits while the copy runs in threads: pages of one region that fail in two
 * of them share the bitmap, and may share a byte of it. */
static pthread_mutex_t unreadable_lock = PTHREAD_MUTEX_INITIALIZER;

/* Pages [from, to) of r, one read each: those that fail are marked unreadable. 0, or
 * CL_E_NO_PROCESS / CL_E_INTERNAL. */
static int copy_pages(struct cl_frozen_region *r, uint64_t from, uint64_t to,
                      const struct cl_freeze_source *src)
{
    uint64_t npages = (r->end - r->start) / CL_PAGE_SIZE;
    for (uint64_t a = from; a < to; a += CL_PAGE_SIZE) {
        long n = src->read(src->arg, a, r->data + (a - r->start), CL_PAGE_SIZE);
        if (n == -ESRCH)
            return CL_E_NO_PROCESS;
        if (n == CL_PAGE_SIZE)
            continue;
        pthread_mutex_lock(&unreadable_lock);
        if (r->unreadable || (r->unreadable = calloc((npages + 7) / 8, 1)))
            set_bit(r->unreadable, (a - r->start) / CL_PAGE_SIZE);
        bool marked = r->unreadable != NULL;
        pthread_mutex_unlock(&unreadable_lock);
        if (!marked)
            return CL_E_INTERNAL;
    }
    return 0;
}

/* Pages [from, to) of r in reads of up to CHUNK; a read that comes back short is done again page
 * by page from the first page it missed. */
static int copy_run(struct cl_frozen_region *r, uint64_t from, uint64_t to,
                    const struct cl_freeze_source *src)
{
    for (uint64_t a = from; a < to;) {
        size_t want = to - a < CHUNK ? (size_t)(to - a) : CHUNK;
        long n = src->read(src->arg, a, r->data + (a - r->start), want);
        if (n == -ESRCH)
            return CL_E_NO_PROCESS;
        if (n != (long)want) {
            uint64_t missed = a + (n > 0 ? (uint64_t)n / CL_PAGE_SIZE * CL_PAGE_SIZE : 0);
            int rc = copy_pages(r, missed, a + want, src);
            if (rc)
                return rc;
        }
        a += want;
    }
    return 0;
}

/* Whether the copy takes page i of r: neither absent nor left out unread. */
static bool taken(const struct cl_frozen_region *r, uint64_t i)
{
    return !bit(r->absent, i) && !bit(r->unread, i);
}

/* Calls fn on every run of r's pages [first, end) that the copy takes, until one returns
 * non-zero. */
static int foreach_run(struct cl_frozen_region *r, uint64_t first, uint64_t end,
                       int (*fn)(void *arg, uint64_t from, uint64_t to), void *arg)
{
    for (uint64_t i = first; i < end;) {
        if (!taken(r, i)) {
            i++;
            continue;
        }
        uint64_t j = i + 1;
        while (j < end && taken(r, j))
            j++;
        int rc = fn(arg, r->start + i * CL_PAGE_SIZE, r->start + j * CL_PAGE_SIZE);
        if (rc)
            return rc;
        i = j;
    }
    return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23   /* Linux 5.14 */
#endif

/* Faults a run in: one madvise where the kernel has MADV_POPULATE_WRITE (a quarter cheaper than
 * a fault per page on this project's machines), else a write to each page. */
static int populate_run(void *arg, uint64_t from, uint64_t to)
{
    struct cl_frozen_region *r = arg;
    unsigned char *p = r->data + (from - r->start);
    if (madvise(p, (size_t)(to - from), MADV_POPULATE_WRITE) != 0)
        for (uint64_t off = 0; off < to - from; off += CL_PAGE_SIZE)
            ((volatile unsigned char *)p)[off] = 0;
    return 0;
}

/* r's memory, mapped if it is not yet: nothing in it is touched. */
static bool map_region(struct cl_frozen_region *r)
{
    if (r->data)
        return true;
    void *data = mmap(NULL, (size_t)(r->end - r->start), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (data == MAP_FAILED)
        return false;
    r->data = data;
    return true;
}

/* Work on the pages of a copy (faulting its memory in, copying into it) as pieces of at most a
 * CHUNK of a run, taken in turn by the threads doing it: the process is stopped until the copy
 * is done, and one core copies about 4 GB/s. */
struct piece {
    struct cl_frozen_region *r;
    uint64_t from, to;
};

struct pieces {
    struct piece *v;
    size_t n, cap;
    struct cl_frozen_region *r;   /* whose runs are being cut */
    int (*work)(const struct piece *piece, const struct cl_freeze_source *src);
    const struct cl_freeze_source *src;
    atomic_size_t next;           /* the first piece no thread took yet */
    atomic_int rc;                /* the first failure: every thread stops at it */
};

static int cut_run(void *arg, uint64_t from, uint64_t to)
{
    struct pieces *p = arg;
    for (uint64_t a = from; a < to; a += CHUNK) {
        if (!CL_VEC_RESERVE(p->v, p->n + 1, p->cap))
            return CL_E_INTERNAL;
        p->v[p->n++] = (struct piece){p->r, a, to - a < CHUNK ? to : a + CHUNK};
    }
    return 0;
}

/* Adds r's runs of pages (those not absent) to the pieces. */
static int cut_region(struct pieces *p, struct cl_frozen_region *r)
{
    if (r->copied)
        return 0;
    p->r = r;
    return foreach_run(r, 0, (r->end - r->start) / CL_PAGE_SIZE, cut_run, p);
}

static void *work_on_pieces(void *arg)
{
    struct pieces *p = arg;
    for (size_t i; atomic_load(&p->rc) == 0 && (i = atomic_fetch_add(&p->next, 1)) < p->n;) {
        int rc = p->work(&p->v[i], p->src), none = 0;
        if (rc)
            atomic_compare_exchange_strong(&p->rc, &none, rc);
    }
    return NULL;
}

/* Does the pieces' work in up to `threads` threads, this one among them. The others take no
 * signal: culeak's handler for Ctrl-C detaches the process, which only the thread that attached
 * it can. */
#define MAX_THREADS 16u
static int work_in_threads(struct pieces *p, unsigned threads)
{
    atomic_init(&p->next, 0);
    atomic_init(&p->rc, 0);
    pthread_t helpers[MAX_THREADS];
    size_t started = 0, want = threads < p->n ? threads : p->n;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    /* a thread that cannot start leaves its share to the others */
    while (started + 1 < want && started < MAX_THREADS &&
           pthread_create(&helpers[started], NULL, work_on_pieces, p) == 0)
        started++;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    work_on_pieces(p);
    for (size_t i = 0; i < started; i++)
        pthread_join(helpers[i], NULL);
    return atomic_load(&p->rc);
}

static int populate_piece(const struct piece *piece, const struct cl_freeze_source *src)
{
    (void)src;
    return populate_run(piece->r, piece->from, piece->to);
}

static int copy_piece(const struct piece *piece, const struct cl_freeze_source *src)
{
    return copy_run(piece->r, piece->from, piece->to, src);
}

int cl_freeze_reserve(struct cl_frozen *f, unsigned threads)
{
    struct pieces p = {.work = populate_piece};
    int rc = 0;
    for (size_t i = 0; i < f->n && !rc; i++)
        if (!f->v[i].data)   /* not reserved yet */
            rc = map_region(&f->v[i]) ? cut_region(&p, &f->v[i]) : CL_E_INTERNAL;
    if (!rc)
        rc = work_in_threads(&p, threads);
    free(p.v);
    return rc;
}

/* Copies the regions the plan takes, or only the read-only ones, but for those copied already, in
 * up to src->threads threads. Reserved first where they were not before (a debugger's process, a
 * mapping new since): cheaper than a fault per page inside the read. */
static int copy_regions(struct cl_frozen *f, const struct cl_freeze_source *src, bool read_only)
{
    struct pieces p = {.work = copy_piece, .src = src};
    int rc = cl_freeze_reserve(f, src->threads);
    for (size_t i = 0; i < f->n && !rc; i++)
        if (!read_only || f->v[i].read_only)
            rc = cut_region(&p, &f->v[i]);
    if (!rc)
        rc = work_in_threads(&p, src->threads);
    free(p.v);
    return rc;
}

int cl_freeze_copy(struct cl_frozen *f, const struct cl_freeze_source *src)
{
    int rc = copy_regions(f, src, false);
    if (rc)
        cl_frozen_free(f);
    return rc;
}

int cl_freeze_copy_read_only(struct cl_frozen *f, const struct cl_freeze_source *src)
{
    int rc = copy_regions(f, src, true);
    for (size_t i = 0; i < f->n && !rc; i++)
        f->v[i].copied = f->v[i].read_only;
    return rc;
}

int cl_freeze_on_demand(struct cl_frozen *f, const struct cl_freeze_source *src, uint64_t budget)
{
    if (budget < FILL_PAGES * CL_PAGE_SIZE) { /* every read would look for a chunk in vain */
        cl_frozen_free(f);
        return 0;
    }
    for (size_t i = 0; i < f->n; i++) {
        struct cl_frozen_region *r = &f->v[i];
        if (r->copied)
            continue;
        uint64_t chunks = ((r->end - r->start) / CL_PAGE_SIZE + FILL_PAGES - 1) / FILL_PAGES;
        if (!(r->filled = calloc((chunks + 7) / 8, 1))) {
            cl_frozen_free(f);
            return CL_E_INTERNAL;
        }
    }
    f->src = *src;
    f->budget = budget;
    return 0;
}

struct copying {
    struct cl_frozen_region *r;
    const struct cl_freeze_source *src;
};

/* A run of pages faulted in, then copied. */
static int fill_run(void *arg, uint64_t from, uint64_t to)
{
    struct copying *c = arg;
    populate_run(c->r, from, to);
    return copy_run(c->r, from, to, c->src);
}

/* Copies chunk c of r, the pages of it not absent, if the budget has room: false when it has not
 * (nor will it have for any chunk after), or the copy failed (the caller reads the process
 * instead, and meets the failure there). */
static bool fill_chunk(struct cl_frozen *f, struct cl_frozen_region *r, uint64_t c)
{
    if (f->spent)
        return false;
    uint64_t npages = (r->end - r->start) / CL_PAGE_SIZE, first = c * FILL_PAGES;
    uint64_t end = first + FILL_PAGES < npages ? first + FILL_PAGES : npages, bytes = 0;
    for (uint64_t i = first; i < end; i++)
        bytes += bit(r->absent, i) ? 0 : CL_PAGE_SIZE;
    if (bytes > f->budget || !map_region(r)) {
        /* from now on, what is not copied is read from the process */
        f->spent = true;
        return false;
    }
    struct copying copying = {r, &f->src};
    if (foreach_run(r, first, end, fill_run, &copying))
        return false;
    set_bit(r->filled, c);
    f->budget -= bytes;
    f->filled_bytes += bytes;
    return true;
}

/* Whether page of r is in r->data: copied at once, or now. */
static bool ensure_filled(struct cl_frozen *f, struct cl_frozen_region *r, uint64_t page)
{
    return !r->filled || bit(r->filled, page / FILL_PAGES) || fill_chunk(f, r, page / FILL_PAGES);
}

/* The index of the region that holds addr, or SIZE_MAX. */
struct region_at {
    const struct cl_frozen *f;
    uint64_t addr;
};

static bool region_starts_by(size_t i, const void *ctx)
{
    const struct region_at *q = ctx;
    return q->f->v[i].start <= q->addr;
}

static size_t region_of(const struct cl_frozen *f, uint64_t addr)
{
    /* the last region that starts at or before addr */
    struct region_at q = {f, addr};
    size_t after = cl_partition_point(f->n, region_starts_by, &q);
    return after == 0 || addr >= f->v[after - 1].end ? SIZE_MAX : after - 1;
}

/* Whether page of r is read from its file rather than held in r->data. */
static bool from_file(const struct cl_frozen_region *r, uint64_t page)
{
    return r->fd >= 0 && bit(r->absent, page);
}

/* A page of r's file, as the process would read it (zeros past the file's end in its last
 * page), or CL_E_UNREADABLE where the file is shorter than it was. */
static int read_file_page(const struct cl_frozen_region *r, uint64_t page, void *out)
{
    uint64_t at = r->file_offset + page * CL_PAGE_SIZE;
    size_t want = r->file_size - at < CL_PAGE_SIZE ? (size_t)(r->file_size - at) : CL_PAGE_SIZE;
    ssize_t n = pread(r->fd, out, want, (off_t)at);
    if (n != (ssize_t)want)
        return CL_E_UNREADABLE;
    memset((unsigned char *)out + want, 0, CL_PAGE_SIZE - want);
    return 0;
}

bool cl_frozen_holds(const struct cl_frozen *f, uint64_t addr)
{
    return region_of(f, addr) != SIZE_MAX;
}

bool cl_frozen_left_unread(const struct cl_frozen *f, uint64_t addr)
{
    size_t i = region_of(f, addr);
    return i != SIZE_MAX && bit(f->v[i].unread, (addr - f->v[i].start) / CL_PAGE_SIZE);
}

int cl_frozen_page(struct cl_frozen *f, uint64_t addr, void *out, bool *held)
{
    size_t i = region_of(f, addr);
    *held = i != SIZE_MAX;
    if (!*held)
        return 0;
    struct cl_frozen_region *r = &f->v[i];
    uint64_t page = (addr - r->start) / CL_PAGE_SIZE;
    if (from_file(r, page))
        return read_file_page(r, page, out);
    if (bit(r->unread, page) || !ensure_filled(f, r, page)) {
        *held = false;
        return 0;
    }
    if (bit(r->unreadable, page))
        return CL_E_UNREADABLE;
    memcpy(out, r->data + (addr - r->start), CL_PAGE_SIZE);
    return 0;
}

/* How far a span reaches either side of its address's page in a region with pages not in place
 * (in pages), or copied on demand (in chunks): a bound on the bits looked at, not on what can be
 * read. */
#define SPAN_PAGES 64
#define SPAN_CHUNKS 16

static bool in_place(const struct cl_frozen_region *r, uint64_t page)
{
    return !bit(r->unreadable, page) && !from_file(r, page) && !bit(r->unread, page);
}

/* The pages of the run of filled chunks around page's, at most SPAN_CHUNKS either side of it. */
static void filled_run(const struct cl_frozen_region *r, uint64_t page, uint64_t *first,
                       uint64_t *end)
{
    uint64_t pages = (r->end - r->start) / CL_PAGE_SIZE, c = page / FILL_PAGES, lo = c, hi = c + 1;
    while (lo > 0 && c - lo < SPAN_CHUNKS && bit(r->filled, lo - 1))
        lo--;
    while (hi * FILL_PAGES < pages && hi - c < SPAN_CHUNKS && bit(r->filled, hi))
        hi++;
    *first = lo * FILL_PAGES;
    *end = hi * FILL_PAGES < pages ? hi * FILL_PAGES : pages;
}

const unsigned char *cl_frozen_span(struct cl_frozen *f, uint64_t addr, uint64_t *start,
                                    uint64_t *len)
{
    size_t i = region_of(f, addr);
    if (i == SIZE_MAX)
        return NULL;
    struct cl_frozen_region *r = &f->v[i];
    uint64_t page = (addr - r->start) / CL_PAGE_SIZE, first = 0,
             end = (r->end - r->start) / CL_PAGE_SIZE;
    if (!from_file(r, page) && !ensure_filled(f, r, page))
        return NULL;
    if (r->filled)
        filled_run(r, page, &first, &end);
    if (r->unreadable || r->fd >= 0 || r->unread) {
        if (!in_place(r, page))
            return NULL;
        uint64_t lo = first, hi = end;
        first = end = page;
        while (first > lo && page - first < SPAN_PAGES && in_place(r, first - 1))
            first--;
        while (++end < hi && end - page < SPAN_PAGES && in_place(r, end))
            ;
    }
    *start = r->start + first * CL_PAGE_SIZE;
    *len = (end - first) * CL_PAGE_SIZE;
    return r->data + first * CL_PAGE_SIZE;
}

bool cl_frozen_touch(struct cl_frozen *f, uint64_t addr)
{
    size_t i = region_of(f, addr);
    if (i == SIZE_MAX)
        return true;
    struct cl_frozen_region *r = &f->v[i];
    uint64_t npages = (r->end - r->start) / CL_PAGE_SIZE;
    if (!r->touched && !(r->touched = calloc((npages + 7) / 8, 1))) {
        f->touch_lost = true;
        return false;
    }
    uint64_t page = (addr - r->start) / CL_PAGE_SIZE;
    if (!bit(r->touched, page)) {
        set_bit(r->touched, page);
        f->touched_bytes += CL_PAGE_SIZE;
    }
    return true;
}

/* The runs of r's pages a scout touched, as ranges into read. */
static bool add_touched(struct cl_ranges *read, const struct cl_frozen_region *r)
{
    uint64_t npages = (r->end - r->start) / CL_PAGE_SIZE;
    for (uint64_t p = 0; r->touched && p < npages;) {
        if (!bit(r->touched, p)) {
            p++;
            continue;
        }
        uint64_t q = p + 1;
        while (q < npages && bit(r->touched, q))
            q++;
        if (!cl_ranges_add(read, r->start + p * CL_PAGE_SIZE, r->start + q * CL_PAGE_SIZE))
            return false;
        p = q;
    }
    return true;
}

int cl_freeze_scouted(const struct cl_frozen *f, struct cl_scouted *out)
{
    memset(out, 0, sizeof *out);
    if (!f->src.read)
        return CL_E_UNSUPPORTED;
    if (f->touch_lost)
        return CL_E_INTERNAL;
    for (size_t i = 0; i < f->n; i++) {
        const struct cl_frozen_region *r = &f->v[i];
        if (!r->leavable)
            continue;
        if (!cl_ranges_add(&out->seen, r->start, r->end) || !add_touched(&out->read, r)) {
            cl_scouted_free(out);
            return CL_E_INTERNAL;
        }
    }
    cl_ranges_sort(&out->seen);
    cl_ranges_sort(&out->read);
    return 0;
}

void cl_scouted_free(struct cl_scouted *s)
{
    cl_ranges_free(&s->seen);
    cl_ranges_free(&s->read);
}

void cl_frozen_free(struct cl_frozen *f)
{
    for (size_t i = 0; i < f->n; i++)
        free_region(&f->v[i]);
    for (size_t i = 0; i < f->nfiles; i++)
        if (f->files[i].fd >= 0) /* -1: given to another plan */
            close(f->files[i].fd);
    free(f->files);
    free(f->libs);
    free(f->v);
    memset(f, 0, sizeof *f);
}
