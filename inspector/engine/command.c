#include "engine/command.h"

#include <errno.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/runtime.h"
#include "cpython/layout_check.h"
#include "cudacache/stacks.h"
#include "engine/cmdline.h"
#include "engine/ranks.h"
#include "engine/snapshot.h"
#include "report/html.h"
#include "report/info.h"
#include "report/objects.h"
#include "report/tensors.h"
#include "report/torch_snapshot.h"
#include "target/children.h"
#include "util/notes.h"
#include "util/spill.h"
#include "util/text.h"

/* ---- the commands ---- */

static int cmd_info(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                    struct cl_error *err)
{
    (void)err;
    struct cl_report_notes w = cl_session_notes(s);
    if (cli->json)
        cl_report_info_json(out, s->target, &s->python, &s->torch, &s->rank, &w);
    else
        cl_report_info_text(out, s->target, &s->python, &s->torch, &s->rank, &w);
    return 0;
}

static int cmd_objects(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                       struct cl_error *err)
{
    struct py_heap *h;
    int rc = cl_session_heap(s, &cli->walk, &h, err);
    if (!rc) {
        struct cl_report_notes w = cl_session_notes(s);
        cl_report_objects(out, h, cli->top ? cli->top : (cli->json ? 0 : 30), cli->json, &w);
    }
    return rc;
}

static int cmd_refs(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                    struct cl_error *err)
{
    if (!cli->naddrs == !cli->type)
        return cl_error_set(err, CL_E_USAGE, "refs wants --addr ADDR or --type NAME");
    struct py_heap *h;
    struct py_walk_options walk = cli->walk;
    int rc = cl_session_heap(s, &walk, &h, err);
    if (rc)
        return rc;
    /* Holders name the C++ owners (a .grad, a saved tensor) of tensors no root reaches. */
    struct cl_holders *hs = NULL;
    struct cl_error no_holders;
    if (s->torch.loaded && cl_session_holders(s, &walk, cli->allocator_layout, &hs, &no_holders))
        cl_note_add(&s->target->warnings,
                    "tensors could not be read (%s): objects held only "
                    "from C++ are not named",
                    no_holders.msg);
    struct cl_refs_query q = {cli->addrs, cli->naddrs, cli->type, cli->max_paths};
    struct cl_report_notes w = cl_session_notes(s);
    cl_report_refs(out, h, hs ? &s->tensors : NULL, hs, &q, cli->json, &w);
    return 0;
}

/* --html FILE: the page of the holders and, where the allocator was read, the segments. */
static int write_html(const char *path, struct cl_session *s, const struct cl_holders *hs,
                      struct cl_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return cl_error_set(err, CL_E_IO, "cannot write %s: %s", path, strerror(errno));
    struct cl_report_notes w = cl_session_notes(s);
    int rc = cl_report_html(f, &s->heap, &s->tensors, hs, s->allocator_built ? &s->allocator : NULL,
                            &w, err);
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || (failed && !rc))
        rc = cl_error_set(err, CL_E_IO, "cannot write %s: %s", path, strerror(errno));
    return rc;
}

/* What _record_memory_history() recorded of each block, for --torch-snapshot; NULL with a note
 * when the objects cannot be read. Whatever is not read is noted too: those blocks' frames are
 * then their holders only. */
static struct cc_stacks *alloc_stacks(const struct cl_command_line *cli, struct cl_session *s,
                                      const struct cc_allocator *a)
{
    struct py_heap *h;
    struct cl_error why;
    struct cc_stacks *st = malloc(sizeof *st);
    if (!st || cl_session_heap(s, &cli->walk, &h, &why)) {
        cl_note_add(&s->target->warnings, "recorded allocation stacks not read (%s)",
                    st ? why.msg : "out of memory");
        free(st);
        return NULL;
    }
    cc_stacks_read(&h->objects, a, st);
    if (st->unreadable)
        cl_note_add(&s->target->warnings,
                    "%llu recorded allocation stacks could not be read "
                    "(no torch::CapturedTraceback where the block's context points): those "
                    "blocks' frames are their holders",
                    (unsigned long long)st->unreadable);
    if (st->oom)
        cl_note_add(&s->target->warnings, "out of memory reading allocation stacks: some blocks' "
                                          "frames are their holders");
    if (st->cpp_frames)
        cl_note_add(&s->target->warnings,
                    "--torch-snapshot: the recorded stacks' %llu C++ frames "
                    "are left out (their Python frames are kept)",
                    (unsigned long long)st->cpp_frames);
    return st;
}

static int write_torch_snapshot(const char *path, const struct cl_torch_snapshot_models *m,
                                struct cl_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return cl_error_set(err, CL_E_IO, "cannot write %s: %s", path, strerror(errno));
    cl_torch_snapshot_write(f, m);
    bool failed = ferror(f) != 0;
    if (fclose(f) != 0 || failed)
        return cl_error_set(err, CL_E_IO, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

/* A live process without tensors whose children are Python processes is likely a launcher
 * (torchrun's agent): say where the tensors are. */
static void note_children(struct cl_session *s)
{
    int pids[8];
    size_t n = s->target->kind == CL_TARGET_LIVE && s->tensors.n == 0
                   ? cl_proc_children(s->target->pid, pids, 8)
                   : 0;
    if (!n)
        return;
    char list[96] = "";
    size_t len = 0;
    for (size_t i = 0; i < n && i < 8; i++)
        cl_appendf(list, sizeof list, &len, "%s%d", i ? ", " : "", pids[i]);
    cl_note_add(&s->target->warnings,
                "no tensors here, but %zu child process%s (%s%s): a "
                "launcher's workers? --children %d reads them all",
                n, n > 1 ? "es" : "", list, n > 8 ? ", ..." : "", s->target->pid);
}

static int cmd_tensors(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                       struct cl_error *err)
{
    if (!s->torch.loaded)
        return cl_error_set(err, CL_E_UNSUPPORTED, "PyTorch is not loaded in this process");
    struct cl_holders *hs;
    int rc = cl_session_holders(s, &cli->walk, cli->allocator_layout, &hs, err);
    if (rc)
        return rc;
    note_children(s);
    struct cl_text_options text = {cli->full ? 0 : CL_TEXT_WIDTH, cli->top};
    if (strcmp(cli->command, "summary") == 0) {
        /* A CPU-only process's summary just has no CUDA part; a CUDA one says why it has none. */
        struct cl_error no_allocator;
        struct cc_allocator *a;
        if (cl_session_allocator(s, cli->allocator_layout, &a, &no_allocator) &&
            cl_symbols_module_named(s->symbols, "libc10_cuda"))
            cl_note_add(&s->target->warnings, "no CUDA allocator figures: %s", no_allocator.msg);
        struct cl_report_notes w = cl_session_notes(s);
        rc = cl_report_summary(out, &s->heap, &s->tensors, hs, s->allocator_built ? a : NULL, &text,
                               cli->json, &w, err);
        return rc || !cli->html ? rc : write_html(cli->html, s, hs, err);
    } else {
        struct cl_report_notes w = cl_session_notes(s);
        cl_report_tensors(out, &s->heap, &s->tensors, hs, &cli->tensor_filter, &text, cli->json,
                          &w);
    }
    return 0;
}

static int cmd_blocks(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                      struct cl_error *err)
{
    struct cc_allocator *a;
    int rc = cl_session_allocator(s, cli->allocator_layout, &a, err);
    if (rc)
        return rc;
    /* The tensors name each block's holders; without them the blocks still stand on their own. */
    struct cl_error ignored;
    struct cl_holders *hs = NULL;
    if (cl_session_holders(s, &cli->walk, cli->allocator_layout, &hs, &ignored))
        cl_note_add(&s->target->warnings,
                    "tensors could not be read (%s); blocks are listed "
                    "without their holders",
                    ignored.msg);
    struct cc_stacks *stacks = cli->torch_snapshot ? alloc_stacks(cli, s, a) : NULL;
    struct cl_torch_snapshot_models m = {a, hs ? &s->tensors : NULL, hs, stacks};
    struct cl_report_notes w = cl_session_notes(s);
    cl_report_blocks(out, a, m.tensors, hs, &cli->block_filter, cli->json, &w);
    rc = cli->torch_snapshot ? write_torch_snapshot(cli->torch_snapshot, &m, err) : 0;
    if (stacks)
        cc_stacks_free(stacks);
    free(stacks);
    if (rc)
        return rc;
    if (cli->html && !hs)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "--html needs the tensors, which could not "
                            "be read (%s)",
                            ignored.msg);
    return cli->html ? write_html(cli->html, s, hs, err) : 0;
}

/* Checks what the walkers would read: the variant py_runtime_open chooses, with the runtime's
 * _Py_DebugOffsets filled in. When no variant fits, the minor's first table is checked so that
 * the mismatches show. */
static int cmd_check_layout(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                            struct cl_error *err)
{
    const struct cl_python_info *py = &s->python;
    struct py_runtime_site site = {py->module, py->runtime_addr, py->version_hex, py->version,
                                   py->free_threaded};
    struct py_runtime *rt = malloc(sizeof *rt);
    if (!rt)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    struct cl_error open_err;
    int open_rc = py_runtime_open(s->target, &site, rt, &open_err);
    const struct py_layout *l =
        open_rc ? py_layout_for(py->version_hex >> 24, (py->version_hex >> 16) & 0xff) : rt->l;
    unsigned debug_bad = 0, checked;
    bool has_debug = !open_rc && rt->debug.size;
    if (open_rc)
        fprintf(out, "no layout fits: %s\n", open_err.msg);
    if (has_debug) {
        debug_bad = py_debug_offsets_compare(&rt->debug, rt->table, out, &checked);
        fprintf(out, "layout %s vs _Py_DebugOffsets: %u fields checked, %u mismatched\n",
                rt->table->name, checked, debug_bad);
    }
    struct py_layout_check r;
    bool dwarf = l && py_layout_check_dwarf(l, py->module, out, !cli->json, &r);
    if (dwarf)
        fprintf(out, "layout %s vs DWARF of %s: %u fields checked, %u mismatched, %u missing\n",
                l->name, py->module->path, r.checked, r.mismatched, r.missing);
    free(rt);
    if (open_rc)
        return cl_error_set(err, open_rc, "%s", open_err.msg);
    if (dwarf && (r.mismatched || r.missing))
        return cl_error_set(err, CL_E_UNSUPPORTED, "the layout table disagrees with the runtime");
    if (debug_bad)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the layout table disagrees with the runtime's "
                            "_Py_DebugOffsets");
    if (!dwarf && !has_debug)
        return cl_error_set(err, CL_E_UNSUPPORTED, "%s has no DWARF to check against",
                            py->module->path);
    return 0;
}

static int cmd_snapshot(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                        struct cl_error *err)
{
    struct cl_snapshot snap;
    int rc = cl_snapshot_take(s, &cli->walk, &snap, err);
    if (rc)
        return rc;
    FILE *f = cli->output ? fopen(cli->output, "w") : out;
    if (!f)
        rc = cl_error_set(err, CL_E_IO, "cannot write %s: %s", cli->output, strerror(errno));
    else
        cl_snapshot_write(f, &snap);
    if (f && f != out && fclose(f))
        rc = cl_error_set(err, CL_E_IO, "cannot write %s: %s", cli->output, strerror(errno));
    if (!rc && cli->output && !cli->json)
        fprintf(out, "%llu storages, %llu bytes in %zu holder patterns, saved to %s\n",
                (unsigned long long)snap.storages, (unsigned long long)snap.bytes, snap.n,
                cli->output);
    cl_snapshot_free(&snap);
    return rc;
}

/* diff A --pid P: the file against the target now. */
static int cmd_diff(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                    struct cl_error *err)
{
    struct cl_snapshot before, now;
    int rc = cl_snapshot_read(cli->files[0], &before, err);
    if (rc)
        return rc;
    if (!(rc = cl_snapshot_take(s, &cli->walk, &now, err))) {
        cl_snapshot_diff(out, &before, &now, cli->json);
        cl_snapshot_free(&now);
    }
    cl_snapshot_free(&before);
    return rc;
}

/* watch opens the target once per inspection (cl_command_watch); in gdb, culeak-break-step
 * reports at every training step instead. */
static int cmd_watch(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                     struct cl_error *err)
{
    (void)cli, (void)s, (void)out;
    return cl_error_set(err, CL_E_USAGE,
                        "watch runs from the command line; in gdb, "
                        "culeak-break-step reports what grows at every training step");
}

/* dump opens the target itself, recording (cl_command_dump). */
static int cmd_dump(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                    struct cl_error *err)
{
    (void)cli, (void)s, (void)out;
    return cl_error_set(err, CL_E_USAGE, "dump runs from the command line");
}

/* merge reads snapshot files only (cl_command_run_offline). */
static int cmd_merge(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                     struct cl_error *err)
{
    (void)cli, (void)s, (void)out;
    return cl_error_set(err, CL_E_USAGE, "merge reads snapshot files, not a target");
}

static const struct command {
    const char *name;
    int (*run)(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
               struct cl_error *err);
} commands[] = {
    {"info", cmd_info},
    {"objects", cmd_objects},
    {"refs", cmd_refs},
    {"tensors", cmd_tensors},
    {"summary", cmd_tensors},
    {"blocks", cmd_blocks},
    {"check-layout", cmd_check_layout},
    {"snapshot", cmd_snapshot},
    {"diff", cmd_diff},
    {"watch", cmd_watch},
    {"dump", cmd_dump},
    {"merge", cmd_merge},
};

static const struct command *find(const char *name)
{
    for (size_t i = 0; name && i < sizeof commands / sizeof *commands; i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

bool cl_command_known(const char *name)
{
    return find(name) != NULL;
}

int cl_command_run(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                   struct cl_error *err)
{
    const struct command *c = find(cli->command);
    if (!c)
        return cl_error_set(err, CL_E_USAGE, "unknown command '%s'",
                            cli->command ? cli->command : "");
    if (cl_command_applicable(cli, err))
        return CL_E_USAGE;
    /* Nothing is printed from a process that went away during the reads, also by commands that
     * print as they read (check-layout): the report is held back until the reads are done, in a
     * spill file (a JSON report of every tensor of a leaking job runs to hundreds of megabytes),
     * in memory where none can be made. A core or a dump cannot go away: its report goes out as
     * it is made, not written, read and written again. */
    if (s->target->kind == CL_TARGET_CORE || s->target->kind == CL_TARGET_DUMP)
        return c->run(cli, s, out, err);
    char *report = NULL;
    size_t len = 0;
    FILE *spill = cl_spill_open();
    FILE *held = spill ? spill : open_memstream(&report, &len);
    if (!held)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    int rc = c->run(cli, s, held, err);
    if (s->target->gone)
        rc = cl_target_went_away(s->target, err);
    else if (spill && (ferror(spill) || (!cl_spill_copy(spill, out) && ferror(spill))) && !rc)
        rc = cl_error_set(err, CL_E_IO, "cannot hold the report in a file of %s: %s", cl_tmp_dir(),
                          strerror(errno));
    if (fclose(held) && !rc)
        rc = cl_error_set(err, CL_E_INTERNAL, "out of memory");
    if (!spill && report && !s->target->gone)
        fwrite(report, 1, len, out);
    free(report);
    return rc;
}

bool cl_command_offline(const struct cl_command_line *cli)
{
    return cli->command && ((strcmp(cli->command, "diff") == 0 && cli->nfiles == 2) ||
                            strcmp(cli->command, "merge") == 0);
}

static int by_rank(const void *a, const void *b, void *snaps)
{
    const struct cl_snapshot *x = &((const struct cl_snapshot *)snaps)[*(const size_t *)a];
    const struct cl_snapshot *y = &((const struct cl_snapshot *)snaps)[*(const size_t *)b];
    return cl_rank_order(&x->rank, x->pid, &y->rank, y->pid);
}

/* merge A B...: the snapshot files of a job's ranks side by side, in rank order. */
static int merge(const struct cl_command_line *cli, FILE *out, struct cl_error *err)
{
    size_t n = cli->nfiles, read = 0;
    struct cl_snapshot *snaps = calloc(n, sizeof *snaps), *sorted = calloc(n, sizeof *sorted);
    const char **sources = calloc(n, sizeof *sources);
    size_t *order = calloc(n, sizeof *order);
    int rc =
        snaps && sorted && sources && order ? 0 : cl_error_set(err, CL_E_INTERNAL, "out of memory");
    for (; !rc && read < n; read++)
        rc = cl_snapshot_read(cli->files[read], &snaps[read], err);
    if (!rc) {
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        qsort_r(order, n, sizeof *order, by_rank, snaps);
        for (size_t i = 0; i < n; i++) {
            sorted[i] = snaps[order[i]]; /* shallow: snaps owns them */
            sources[i] = cli->files[order[i]];
        }
        struct cl_json j;
        if (cli->json) {
            cl_json_begin_document(&j, out);
            cl_json_key(&j, "across_ranks");
        }
        cl_ranks_report(out, cli->json ? &j : NULL, sorted, sources, n);
        if (cli->json) {
            cl_json_end_object(&j);
            cl_json_finish(&j);
        }
    }
    for (size_t i = 0; snaps && i < read; i++)
        cl_snapshot_free(&snaps[i]); /* the one that failed freed itself */
    free(snaps);
    free(sorted);
    free(sources);
    free(order);
    return rc;
}

int cl_command_run_offline(const struct cl_command_line *cli, FILE *out, struct cl_error *err)
{
    if (strcmp(cli->command, "merge") == 0)
        return merge(cli, out, err);
    struct cl_snapshot a, b;
    int rc = cl_snapshot_read(cli->files[0], &a, err);
    if (rc)
        return rc;
    if (!(rc = cl_snapshot_read(cli->files[1], &b, err))) {
        cl_snapshot_diff(out, &a, &b, cli->json);
        cl_snapshot_free(&b);
    }
    cl_snapshot_free(&a);
    return rc;
}

/* One inspection of the watched process: open (it stops), snapshot, close (it resumes). */
static int watch_once(const struct cl_command_line *cli, struct cl_snapshot *snap,
                      struct cl_error *err)
{
    struct cl_session *s;
    int rc = cl_session_open(&cli->session, &s, err);
    if (rc)
        return rc;
    rc = cl_snapshot_take(s, &cli->walk, snap, err);
    cl_session_close(s);
    return rc;
}

int cl_command_watch(const struct cl_command_line *cli, FILE *out, struct cl_error *err)
{
    struct cl_snapshot last, now;
    double interval = cli->interval > 0 ? cli->interval : 10;
    int rc = watch_once(cli, &last, err);
    if (rc)
        return rc;
    fprintf(out, "%s pid %d: %llu storages, %llu bytes\n", last.time, last.pid,
            (unsigned long long)last.storages, (unsigned long long)last.bytes);
    fflush(out);
    for (size_t i = 1; !cli->count || i < cli->count; i++) {
        struct timespec pause = {(time_t)interval,
                                 (long)((interval - (double)(time_t)interval) * 1e9)};
        nanosleep(&pause, NULL);
        if ((rc = watch_once(cli, &now, err)))
            break;
        char line[2048];
        cl_snapshot_delta(&last, &now, line, sizeof line);
        fprintf(out, "%s pid %d: %s\n", now.time, now.pid, line);
        fflush(out);
        cl_snapshot_free(&last);
        last = now;
    }
    cl_snapshot_free(&last);
    /* a process that ended is how a watch without --count stops */
    return rc == CL_E_NO_PROCESS && !cli->count ? 0 : rc;
}
