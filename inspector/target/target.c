#include "target/target.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/text.h"

#define DEFAULT_CACHE_PAGES 4096u   /* 16 MiB */

static int fill_page(void *source, uint64_t addr, void *page)
{
    struct cl_target *t = source;
    int rc = t->ops->read_page(t, addr, page);
    /* A read that failed because the process went away fails the dump; it is not kept. */
    if (t->record && !t->gone)
        cl_pagerec_add(t->record, addr, rc, page);
    if (t->scouting && t->ops->touch)
        t->ops->touch(t, addr);
    return rc;
}

static int init_common(struct cl_target *t, const struct cl_open_options *opt)
{
    size_t pages = opt && opt->cache_pages ? opt->cache_pages : DEFAULT_CACHE_PAGES;
    if (opt)
        t->locator = opt->locator;
    if (opt && opt->note && !(t->note = strdup(opt->note)))
        return CL_E_INTERNAL;
    if (opt && opt->record && !(t->record = calloc(1, sizeof *t->record)))
        return CL_E_INTERNAL;
    return cl_pagecache_init(&t->cache, pages, fill_page, t) == 0 ? 0 : CL_E_INTERNAL;
}

int cl_target_new(const struct cl_target_ops *ops, enum cl_target_kind kind, void *impl,
                  const struct cl_open_options *opt, struct cl_target **out)
{
    struct cl_target *t = calloc(1, sizeof *t);
    *out = NULL;
    if (!t)
        return CL_E_INTERNAL;
    t->ops = ops;
    t->kind = kind;
    t->source_kind = kind;
    t->impl = impl;
    if (init_common(t, opt)) {
        free(t->note);
        free(t->record);
        free(t);
        return CL_E_INTERNAL;
    }
    *out = t;
    return 0;
}

void cl_target_close(struct cl_target *t)
{
    if (!t)
        return;
    if (t->ops && t->ops->close)
        t->ops->close(t);
    cl_pagecache_free(&t->cache);
    cl_pagerec_free(t->record);
    free(t->record);
    cl_filerec_free(&t->files);
    cl_mappings_free(&t->maps);
    free(t->threads);
    free(t->exe_path);
    free(t->warnings);
    free(t->note);
    free(t->clock);
    free(t);
}

int cl_target_went_away(const struct cl_target *t, struct cl_error *err)
{
    if (!t->gone)
        return 0;
    if (t->gone_why.code) {
        *err = t->gone_why;
        return t->gone_why.code;
    }
    return cl_error_set(err, CL_E_NO_PROCESS,
                        "the process went away: process %d exited or was "
                        "killed while culeak was reading it",
                        t->pid);
}

void cl_target_check_vanished(struct cl_target *t)
{
    if (!t->gone && t->ops->vanished && t->ops->vanished(t))
        t->gone = true;
}

void cl_target_lose(struct cl_target *t, enum cl_status code, const char *fmt, ...)
{
    if (t->gone)   /* the first reason stands */
        return;
    va_list ap;
    va_start(ap, fmt);
    cl_error_vset(&t->gone_why, code, fmt, ap);
    va_end(ap);
    t->gone = true;
    t->err = t->gone_why;
}

/* The resident range that holds addr, or NULL: one of the last found, or the target's. */
static const struct cl_window *resident(struct cl_target *t, uint64_t addr)
{
    for (unsigned i = 0; i < CL_RECENT_WINDOWS; i++)
        if (addr - t->recent[i].start < t->recent[i].len)
            return &t->recent[i];
    struct cl_window *w = &t->recent[t->next_recent++ % CL_RECENT_WINDOWS];
    if (t->ops->resident(t, addr, w))
        return w;
    *w = (struct cl_window){0};
    return NULL;
}

/* From the target's resident memory, whose range around addr becomes the window, or else from
 * the page cache. */
int cl_read_outside(struct cl_target *t, uint64_t addr, void *buf, size_t len)
{
    if (len == 0)
        return 0;
    t->bytes_read += len;
    /* Pages cached before the process died would still read; refuse them too, so walkers stop
     * at once instead of going on over a mix of old pages and failures. */
    if (t->gone)
        return cl_target_went_away(t, &t->err);
    if (addr + len < addr)
        return cl_error_set(&t->err, CL_E_UNREADABLE, "read of %zu bytes at 0x%llx wraps around",
                            len, (unsigned long long)addr);
    /* A dump being recorded sees every page through fill_page. */
    const struct cl_window *w = t->ops->resident && !t->record ? resident(t, addr) : NULL;
    if (w && len <= w->len - (addr - w->start)) {
        t->window = *w;
        memcpy(buf, w->data + (addr - w->start), len);
        return 0;
    }
    /* Fail fast, without a syscall, on addresses no mapping covers: most garbage pointers. */
    for (uint64_t a = addr; a < addr + len;) {
        const struct cl_mapping *m = cl_mappings_find(&t->maps, a);
        if (!m)
            return cl_error_set(&t->err, CL_E_UNREADABLE,
                                "address 0x%llx is not mapped in the target",
                                (unsigned long long)a);
        a = m->end;
    }
    /* A fill failure leaves its reason in t->err; a cached failure has only its status. */
    t->err.code = CL_OK;
    int rc = cl_pagecache_read(&t->cache, addr, buf, len);
    if (rc != 0 && (int)t->err.code != rc)
        cl_error_set(&t->err, rc, "cannot read %zu bytes at 0x%llx (%s)", len,
                     (unsigned long long)addr, cl_status_name(rc));
    return rc;
}

bool cl_target_holds(struct cl_target *t, uint64_t addr)
{
    struct cl_window w;
    if (cl_target_left_out(t, addr))
        return false;
    return !t->resumed || (t->ops->resident && t->ops->resident(t, addr, &w));
}

bool cl_target_holds_range(struct cl_target *t, uint64_t addr, uint64_t len)
{
    if (len == 0)
        return true;
    uint64_t last = addr + len - 1;
    if (last < addr)
        return false;
    /* by pages, to the last one's start: a range in the top page must not wrap to 0 */
    for (uint64_t page = addr & ~(uint64_t)(CL_PAGE_SIZE - 1);; page += CL_PAGE_SIZE) {
        if (!cl_target_holds(t, page > addr ? page : addr))
            return false;
        if (page == (last & ~(uint64_t)(CL_PAGE_SIZE - 1)))
            return true;
    }
}

int cl_read_held(struct cl_target *t, uint64_t addr, void *buf, size_t len)
{
    return cl_target_holds_range(t, addr, len) ? cl_read(t, addr, buf, len) : CL_E_UNREADABLE;
}

int cl_read_unless_left_out(struct cl_target *t, uint64_t addr, void *buf, size_t len)
{
    /* a dump holds just what it did not leave out; a live copy leaves out what it need not copy,
     * and reads it from the process */
    return t->kind == CL_TARGET_DUMP ? cl_read_held(t, addr, buf, len) : cl_read(t, addr, buf, len);
}

int cl_target_scan(struct cl_target *t, uint64_t start, uint64_t end, cl_scan_fn fn, void *arg)
{
    uint64_t words[CL_PAGE_SIZE / 8];
    for (uint64_t page = start & ~(uint64_t)(CL_PAGE_SIZE - 1); page < end; page += CL_PAGE_SIZE) {
        if (t->gone)
            return cl_target_went_away(t, &t->err);
        struct cl_window w;
        if (!cl_target_holds(t, page))
            continue;
        /* a scout's resident pages are noted as needed: it reads the page instead */
        if (!t->record && !t->scouting && t->ops->resident && t->ops->resident(t, page, &w) &&
            w.len - (page - w.start) >= CL_PAGE_SIZE)
            memcpy(words, w.data + (page - w.start), sizeof words);
        else if (t->ops->read_page(t, page, words) != 0)
            continue;
        /* only the pages where it found something: a scan after them skips a page the target
         * does not hold (a dump's, or one the copy left out) */
        if (!fn(arg, page, words) || t->gone)
            continue;
        if (t->record)
            cl_pagerec_add(t->record, page, 0, words);
        if (t->scouting && t->ops->touch)
            t->ops->touch(t, page);
    }
    return 0;
}

int cl_target_file_status(struct cl_target *t, const char *path)
{
    return t->ops->file_status ? t->ops->file_status(t, path) : 0;
}

bool cl_target_left_out(struct cl_target *t, uint64_t addr)
{
    return t->ops->left_out && t->ops->left_out(t, addr);
}

/* cl_read_cstr by a reader of the caller's: cl_read, or cl_read_held. */
static int read_cstr(struct cl_target *t, uint64_t addr, char *buf, size_t cap,
                     int (*reader)(struct cl_target *, uint64_t, void *, size_t))
{
    if (cap == 0)
        return CL_E_INTERNAL;
    for (size_t i = 0; i < cap;) {
        /* Up to the page end at most, so a string near an unmapped page still reads. */
        size_t n = CL_PAGE_SIZE - (size_t)((addr + i) % CL_PAGE_SIZE);
        if (n > cap - i)
            n = cap - i;
        int rc = reader(t, addr + i, buf + i, n);
        if (rc)
            return rc;
        if (memchr(buf + i, '\0', n))
            return 0;
        i += n;
    }
    buf[cap - 1] = '\0';
    return cl_error_set(&t->err, CL_E_UNREADABLE, "no string terminator within %zu bytes at 0x%llx",
                        cap, (unsigned long long)addr);
}

static int read_plain(struct cl_target *t, uint64_t addr, void *buf, size_t len)
{
    return cl_read(t, addr, buf, len);
}

int cl_read_cstr(struct cl_target *t, uint64_t addr, char *buf, size_t cap)
{
    return read_cstr(t, addr, buf, cap, read_plain);
}

int cl_read_cstr_held(struct cl_target *t, uint64_t addr, char *buf, size_t cap)
{
    return read_cstr(t, addr, buf, cap, cl_read_held);
}

int cl_read_cstr_unless_left_out(struct cl_target *t, uint64_t addr, char *buf, size_t cap)
{
    return read_cstr(t, addr, buf, cap, cl_read_unless_left_out);
}

static char *existing(const char *a, const char *b)
{
    char *p;
    if (asprintf(&p, "%s%s%s", a, (*a && a[strlen(a) - 1] != '/' && *b != '/') ? "/" : "", b) < 0)
        return NULL;
    if (access(p, R_OK) == 0)
        return p;
    free(p);
    return NULL;
}

/* path as the live process pid sees it: /proc/PID/root is its root directory in its own mount
 * namespace (a container's), and plain / for a process of ours. A process chroot'ed in a
 * namespace that shares or copies ours is named differently: its maps give paths from that
 * namespace's root, which begin with where its root is (the link's text), and only its own
 * mounts there may hold them. */
static char *in_root(int pid, const char *path)
{
    char root[40], at[4096];
    snprintf(root, sizeof root, "/proc/%d/root", pid);
    char *p = existing(root, path);
    if (p)
        return p;
    ssize_t n = readlink(root, at, sizeof at - 1);
    if (n <= 1) /* unreadable, or "/": nothing to strip */
        return NULL;
    at[n] = '\0';
    if (strncmp(path, at, (size_t)n) != 0 || path[n] != '/')
        return NULL;
    return existing(root, path + n);
}

char *cl_locate_file(const struct cl_file_locator *loc, const char *target_path, bool is_exe)
{
    if (is_exe && loc->exe)
        return access(loc->exe, R_OK) == 0 ? strdup(loc->exe) : NULL;
    if (!target_path || target_path[0] != '/')
        return NULL;
    char *p;
    if (loc->sysroot && (p = existing(loc->sysroot, target_path)))
        return p;
    const char *base = strrchr(target_path, '/') + 1;
    if (!*base)
        return NULL;
    for (size_t i = 0; i < loc->nlib_dirs; i++)
        if ((p = existing(loc->lib_dirs[i], base)))
            return p;
    if (loc->sysroot) /* a sysroot means "these files, not the host's" */
        return NULL;
    if (loc->root_pid > 0 && (p = in_root(loc->root_pid, target_path)))
        return p;
    /* where /proc/PID/root cannot be read: the path as we see it; the build-id check catches
     * another machine's or another container's file */
    return existing("", target_path);
}

char *cl_locate_mapping(const struct cl_target *t, const struct cl_mapping *m, bool is_exe)
{
    if (t->kind == CL_TARGET_LIVE && (m->perms & CL_MAP_DELETED) && !(is_exe && t->locator.exe)) {
        char link[96];
        snprintf(link, sizeof link, "/proc/%d/map_files/%llx-%llx", t->pid,
                 (unsigned long long)m->start, (unsigned long long)m->end);
        if (access(link, R_OK) == 0) /* needs CAP_SYS_ADMIN; else the file now at the path */
            return strdup(link);
    }
    return cl_locate_file(&t->locator, m->path, is_exe);
}

/* Reads path whole into text; 0 or CL_E_IO. */
static int read_text(const char *path, char *text, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return CL_E_IO;
    size_t n = fread(text, 1, cap - 1, f);
    int bad = ferror(f);
    fclose(f);
    text[n] = '\0';
    return bad ? CL_E_IO : 0;
}

/* A dump's answer: what the machine it was made on found. */
static int recorded_text(struct cl_target *t, const char *target_path, char *local, size_t lcap,
                         char *text, size_t cap)
{
    const struct cl_filerec_entry *e = cl_filerec_find(&t->files, target_path);
    if (!e) {
        cl_target_lose(t, CL_E_UNREADABLE,
                       "the dump does not hold %s: culeak dump did not read "
                       "it",
                       target_path);
        return CL_E_IO;
    }
    const char *where = e->local ? e->local : "";
    if (!cl_copy_span(local, lcap, where, strlen(where)) || !e->text)
        return CL_E_IO;
    cl_copy_span(text, cap, e->text, strlen(e->text)); /* cut to cap, as read_text reads */
    return 0;
}

int cl_target_text_file(struct cl_target *t, const char *target_path, char *local, size_t lcap,
                        char *text, size_t cap)
{
    if (lcap == 0 || cap == 0)
        return CL_E_INTERNAL;
    local[0] = text[0] = '\0';
    if (t->kind == CL_TARGET_DUMP)
        return recorded_text(t, target_path, local, lcap, text, cap);
    char *found = cl_locate_file(&t->locator, target_path, false);
    int rc = found ? read_text(found, text, cap) : CL_E_IO;
    if (found && !cl_copy_span(local, lcap, found, strlen(found)))
        rc = CL_E_IO; /* a path that does not fit could not be opened by it */
    if (t->record && cl_filerec_add(&t->files, target_path, found, rc ? NULL : text))
        t->record->oom = true;
    free(found);
    return rc;
}
