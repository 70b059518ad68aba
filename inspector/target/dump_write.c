/* Writes a recording target as a dump (format: target/dumpfile.h): its description, maps, files,
 * the symbol section the caller made, and the pages it read as runs. */
#include "target/dump.h"

#include <errno.h>
#include <string.h>

#include "target/clock.h"
#include "target/dumpfile.h"
#include "util/bytes.h"

static void section(struct cl_dumpfile_writer *w, enum cl_dump_section_id id,
                    const struct cl_bytes_out *o)
{
    if (o->oom)
        w->failed = true;
    cl_dumpfile_begin_section(w, id, 8);
    cl_dumpfile_write(w, o->p, o->len);
}

static void write_meta(struct cl_dumpfile_writer *w, const struct cl_target *t, const char *notes)
{
    struct cl_bytes_out o = {0};
    cl_out_u32(&o, (uint32_t)t->kind);
    cl_out_u32(&o, (uint32_t)t->pid);
    cl_out_u32(&o, (uint32_t)t->ns_pid);
    cl_out_u32(&o, (uint32_t)t->signal);
    cl_out_str(&o, t->exe_path);
    cl_out_str(&o, notes);
    cl_out_u64(&o, t->nthreads);
    for (size_t i = 0; i < t->nthreads; i++)
        cl_out_u32(&o, (uint32_t)t->threads[i].tid);
    section(w, CL_DUMP_META, &o);
    cl_out_free(&o);
}

static void write_maps(struct cl_dumpfile_writer *w, const struct cl_target *t)
{
    struct cl_bytes_out o = {0};
    cl_out_u64(&o, t->maps.n);
    for (size_t i = 0; i < t->maps.n; i++) {
        const struct cl_mapping *m = &t->maps.v[i];
        cl_out_u64(&o, m->start);
        cl_out_u64(&o, m->end);
        cl_out_u64(&o, m->offset);
        cl_out_u32(&o, m->perms);
        cl_out_str(&o, m->path);
    }
    section(w, CL_DUMP_MAPS, &o);
    cl_out_free(&o);
}

static void write_files(struct cl_dumpfile_writer *w, const struct cl_target *t)
{
    struct cl_bytes_out o = {0};
    cl_out_u64(&o, t->files.n);
    for (size_t i = 0; i < t->files.n; i++) {
        cl_out_str(&o, t->files.v[i].target_path);
        cl_out_str(&o, t->files.v[i].local);
        cl_out_str(&o, t->files.v[i].text);
    }
    section(w, CL_DUMP_FILES, &o);
    cl_out_free(&o);
}


static enum cl_dump_run_kind kind_of(const struct cl_pagerec *r, const struct cl_pagerec_entry *e)
{
    if (e->status)
        return CL_DUMP_RUN_FAILED;
    return cl_all_zero(cl_pagerec_data(r, e), CL_PAGE_SIZE) ? CL_DUMP_RUN_ZERO : CL_DUMP_RUN_DATA;
}

/* Consecutive pages of one kind (and one failure status) make one run; a data run's pages are
 * stored back to back, zero pages not at all. */
static void write_pages(struct cl_dumpfile_writer *w, struct cl_pagerec *r)
{
    cl_pagerec_sort(r);
    struct cl_bytes_out runs = {0};
    size_t nruns = 0;
    uint64_t data_at = 0;
    cl_out_u64(&runs, 0);   /* the count, filled in below */
    for (size_t i = 0; i < r->n;) {
        enum cl_dump_run_kind k = kind_of(r, &r->v[i]);
        size_t j = i + 1;
        while (j < r->n && j - i < UINT32_MAX && r->v[j].addr == r->v[j - 1].addr + CL_PAGE_SIZE &&
               r->v[j].status == r->v[i].status && kind_of(r, &r->v[j]) == k)
            j++;
        cl_out_u64(&runs, r->v[i].addr);
        cl_out_u32(&runs, (uint32_t)(j - i));
        cl_out_u32(&runs, k);
        cl_out_u32(&runs, (uint32_t)r->v[i].status);
        cl_out_u32(&runs, 0);
        cl_out_u64(&runs, k == CL_DUMP_RUN_DATA ? data_at : 0);
        if (k == CL_DUMP_RUN_DATA)
            data_at += (uint64_t)(j - i) * CL_PAGE_SIZE;
        nruns++;
        i = j;
    }
    for (int b = 0; b < 8 && runs.len >= 8; b++)
        runs.p[b] = (unsigned char)((uint64_t)nruns >> (8 * b));
    section(w, CL_DUMP_PAGE_RUNS, &runs);
    cl_out_free(&runs);
    cl_dumpfile_begin_section(w, CL_DUMP_PAGE_DATA, CL_PAGE_SIZE);
    for (size_t i = 0; i < r->n; i++)
        if (kind_of(r, &r->v[i]) == CL_DUMP_RUN_DATA)
            cl_dumpfile_write(w, cl_pagerec_data(r, &r->v[i]), CL_PAGE_SIZE);
}

int cl_dump_write(struct cl_target *t, const char *open_notes, const void *symbols, size_t symlen,
                  FILE *f, uint64_t *size, struct cl_error *err)
{
    if (!t->record || t->record->oom || t->record->n > SIZE_MAX / 2)
        return cl_error_set(err, CL_E_INTERNAL,
                            "out of memory: the pages read could not all be "
                            "kept for the dump");
    struct cl_dumpfile_writer w;
    cl_dumpfile_begin(&w, f);
    write_meta(&w, t, open_notes);
    write_maps(&w, t);
    write_files(&w, t);
    cl_dumpfile_begin_section(&w, CL_DUMP_SYMBOLS, 8);
    cl_dumpfile_write(&w, symbols, symlen);
    write_pages(&w, t->record);
    if (t->allocator_only || t->redacted) { /* a whole dump has none, as before */
        struct cl_bytes_out scope = {0};
        cl_out_u32(&scope, (t->allocator_only ? CL_DUMP_SCOPE_ALLOCATOR_ONLY : 0) |
                               (t->redacted ? CL_DUMP_SCOPE_REDACTED : 0));
        section(&w, CL_DUMP_SCOPE, &scope);
        cl_out_free(&scope);
    }
    if (t->clock && t->clock_source == CL_CLOCK_TARGET && t->kind != CL_TARGET_DUMP) {
        struct cl_bytes_out clock = {0};   /* measured on the target's machine: keep it */
        cl_out_u32(&clock, CL_CLOCK_PAIRS);
        for (size_t i = 0; i < CL_CLOCK_PAIRS; i++) {
            cl_out_u64(&clock, (uint64_t)t->clock[i].unix_ns);
            cl_out_u64(&clock, t->clock[i].ticks);
        }
        section(&w, CL_DUMP_CLOCK, &clock);
        cl_out_free(&clock);
    }
    if (t->note) {
        struct cl_bytes_out note = {0};
        cl_out_bytes(&note, t->note, strlen(t->note));
        section(&w, CL_DUMP_NOTE, &note);
        cl_out_free(&note);
    }
    if (cl_dumpfile_finish(&w))
        return cl_error_set(err, CL_E_IO, "cannot write the dump: %s", strerror(errno));
    *size = w.at;
    return 0;
}
