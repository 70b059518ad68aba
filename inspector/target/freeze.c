#include "target/freeze.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "target/pagecache.h"
#include "util/error.h"
#include "util/vec.h"

/* Bytes per read: large enough that the syscalls cost nothing beside the copy, small enough that
 * a page that fails costs one chunk read page by page. */
#define CHUNK (1u << 20)

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
    return (m->perms & CL_MAP_W) != 0;   /* a file's read-only pages never change */
}

uint64_t cl_freeze_size(const struct cl_mappings *ms)
{
    uint64_t n = 0;
    for (size_t i = 0; i < ms->n; i++)
        if (cl_freeze_wants(&ms->v[i]))
            n += ms->v[i].end - ms->v[i].start;
    return n;
}

static void free_region(struct cl_frozen_region *r)
{
    if (r->data)
        munmap(r->data, r->end - r->start);
    free(r->unreadable);
}

/* One chunk that did not read whole, page by page from the first page it missed: pages that
 * fail are marked unreadable. 0, or CL_E_NO_PROCESS / CL_E_INTERNAL. */
static int copy_pages(struct cl_frozen_region *r, uint64_t from, uint64_t to, cl_bulk_read_fn read,
                      void *source)
{
    uint64_t npages = (r->end - r->start) / CL_PAGE_SIZE;
    for (uint64_t a = from; a < to; a += CL_PAGE_SIZE) {
        long n = read(source, a, r->data + (a - r->start), CL_PAGE_SIZE);
        if (n == -ESRCH)
            return CL_E_NO_PROCESS;
        if (n == CL_PAGE_SIZE)
            continue;
        if (!r->unreadable && !(r->unreadable = calloc((npages + 7) / 8, 1)))
            return CL_E_INTERNAL;
        uint64_t page = (a - r->start) / CL_PAGE_SIZE;
        r->unreadable[page / 8] |= (uint8_t)(1u << (page % 8));
    }
    return 0;
}

static int copy_region(struct cl_frozen_region *r, cl_bulk_read_fn read, void *source)
{
    size_t len = (size_t)(r->end - r->start);
    void *data = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
    if (data == MAP_FAILED)
        return CL_E_INTERNAL;
    r->data = data;
    for (uint64_t a = r->start; a < r->end;) {
        size_t want = r->end - a < CHUNK ? (size_t)(r->end - a) : CHUNK;
        long n = read(source, a, r->data + (a - r->start), want);
        if (n == -ESRCH)
            return CL_E_NO_PROCESS;
        if (n != (long)want) {   /* some page failed: find which, from the first one missed */
            uint64_t missed = a + (n > 0 ? (uint64_t)n / CL_PAGE_SIZE * CL_PAGE_SIZE : 0);
            int rc = copy_pages(r, missed, a + want, read, source);
            if (rc)
                return rc;
        }
        a += want;
    }
    return 0;
}

int cl_freeze_copy(struct cl_frozen *f, const struct cl_mappings *ms, cl_bulk_read_fn read,
                   void *source)
{
    size_t cap = 0;
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < ms->n; i++) {
        const struct cl_mapping *m = &ms->v[i];
        if (!cl_freeze_wants(m))
            continue;
        int rc = CL_VEC_RESERVE(f->v, f->n, cap) ? 0 : CL_E_INTERNAL;
        if (!rc) {
            f->v[f->n] = (struct cl_frozen_region){.start = m->start, .end = m->end};
            rc = copy_region(&f->v[f->n], read, source);
            f->n++;   /* counted even when it failed, so its memory is freed below */
        }
        if (rc) {
            cl_frozen_free(f);
            return rc;
        }
        f->bytes += m->end - m->start;
    }
    return 0;
}

int cl_frozen_page(const struct cl_frozen *f, uint64_t addr, void *out)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) {   /* the last region that starts at or before addr */
        size_t mid = lo + (hi - lo) / 2;
        if (f->v[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || addr >= f->v[lo - 1].end)
        return -1;
    const struct cl_frozen_region *r = &f->v[lo - 1];
    uint64_t page = (addr - r->start) / CL_PAGE_SIZE;
    if (r->unreadable && (r->unreadable[page / 8] >> (page % 8) & 1))
        return CL_E_UNREADABLE;
    memcpy(out, r->data + (addr - r->start), CL_PAGE_SIZE);
    return 0;
}

void cl_frozen_free(struct cl_frozen *f)
{
    for (size_t i = 0; i < f->n; i++)
        free_region(&f->v[i]);
    free(f->v);
    memset(f, 0, sizeof *f);
}
