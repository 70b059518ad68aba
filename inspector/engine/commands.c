/* The commands: what each one does with the models it is given, and its row of the command table
 * (engine/table.h), which says everything else about it. */
#include "engine/table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cpython/layout_check.h"
#include "cpython/runtime.h"
#include "cudacache/stacks.h"
#include "engine/cmdline.h"
#include "engine/dump.h"
#include "engine/ranks.h"
#include "engine/session.h"
#include "engine/snapshot.h"
#include "report/html.h"
#include "report/info.h"
#include "report/balance.h"
#include "report/objects.h"
#include "report/tensors.h"
#include "report/torch_snapshot.h"
#include "target/children.h"
#include "util/notes.h"
#include "util/output.h"
#include "util/text.h"
#include "report/text.h"

struct cl_report_notes cl_models_notes(const struct cl_models *m)
{
    struct cl_report_notes w = {{0}};
    for (size_t i = 0; i < CL_REPORT_NOTE_LISTS; i++)
        w.lists[i] = m->note_lists[i] ? *m->note_lists[i] : NULL;
    return w;
}

/* ---- what each command does ---- */

static int cmd_info(const struct cl_command_line *cli, const struct cl_models *m, FILE *out,
                    struct cl_error *err)
{
    (void)err;
    struct cl_report_notes w = cl_models_notes(m);
    if (cli->json)
        cl_report_info_json(out, m->target, m->python, m->torch, m->rank, &w);
    else
        cl_report_info_text(out, m->target, m->python, m->torch, m->rank, &w);
    return 0;
}

static int cmd_objects(const struct cl_command_line *cli, const struct cl_models *m, FILE *out,
                       struct cl_error *err)
{
    struct cl_report_notes w = cl_models_notes(m);
    return cl_report_objects(out, m->heap, cli->top ? cli->top : (cli->json ? 0 : 30), cli->json,
                             &w, err);
}

static int cmd_balance(const struct cl_command_line *cli, const struct cl_models *m, FILE *out,
                       struct cl_error *err)
{
    struct cl_report_notes w = cl_models_notes(m);
    return cl_report_balance(out, m->heap, cli->top ? cli->top : (cli->json ? 0 : 20), cli->json,
                             &w, err);
}

static int cmd_refs(const struct cl_command_line *cli, const struct cl_models *m, FILE *out,
                    struct cl_error *err)
{
    struct cl_refs_query q = {cli->addrs, cli->naddrs, cli->type, cli->max_paths, cli->referents};
    struct cl_report_notes w = cl_models_notes(m);
    return cl_report_refs(out, m->heap, m->tensors, m->holders, &q, cli->json, &w, err);
}

/* --html FILE: the page of the holders and, where the allocator was read, the segments. */
static int write_html(const struct cl_command_line *cli, const struct cl_models *m,
                      struct cl_error *err)
{
    struct cl_output o;
    int rc = cl_output_open(cli->html, &o, err);
    if (rc)
        return rc;
    struct cl_report_notes w = cl_models_notes(m);
    char target[96];
    struct cl_html_header header = {cl_target_words(m->target, target, sizeof target),
                                    m->python->version, m->torch->version};
    rc = cl_report_html(o.f, &header, m->heap, m->tensors, m->holders, m->allocator, m->driver,
                        &cli->block_filter, &w, err);
    if (rc)
        cl_output_abort(&o);
    return rc ? rc : cl_output_commit(&o, err);
}

/* A live process without tensors whose children are Python processes is likely a launcher
 * (torchrun's agent): say where the tensors are. */
static void note_children(const struct cl_models *m)
{
    int pids[8];
    size_t n = m->target->kind == CL_TARGET_LIVE && m->tensors->n == 0
                   ? cl_proc_children(m->target->pid, pids, 8)
                   : 0;
    if (!n)
        return;
    char list[96] = "";
    size_t len = 0;
    for (size_t i = 0; i < n && i < 8; i++)
        cl_appendf(list, sizeof list, &len, "%s%d", i ? ", " : "", pids[i]);
    cl_note_add(m->notes,
                "no tensors here, but %zu child process%s (%s%s): a "
                "launcher's workers? --children %d reads them all",
                n, n > 1 ? "es" : "", list, n > 8 ? ", ..." : "", m->target->pid);
}

static int cmd_tensors(const struct cl_command_line *cli, const struct cl_models *m, FILE *out,
                       struct cl_error *err)
{
    (void)err;
    note_children(m);
    struct cl_text_options text = {cli->full ? 0 : CL_TEXT_WIDTH, cli->top};
    struct cl_report_notes w = cl_models_notes(m);
    cl_report_tensors(out, m->heap, m->tensors, m->holders, &cli->tensor_filter, &text, cli->json,
                      &w);
    return 0;
}

static int cmd_summary(const struct cl_command_line *cli, const struct cl_models *m, FILE *out,
                       struct cl_error *err)
{
    note_children(m);
    struct cl_text_options text = {cli->full ? 0 : CL_TEXT_WIDTH, cli->top};
    struct cl_report_notes w = cl_models_notes(m);
    int rc = cl_report_summary(out, m->heap, m->tensors, m->holders, m->allocator, m->driver, &text,
                               cli->since, cli->json, &w, err);
    return rc || !cli->html ? rc : write_html(cli, m, err);
}

/* The trace _record_memory_history() recorded, for --torch-snapshot: NULL with a note when it
 * cannot be read; what of it is not read is noted too. */
static struct cc_trace *alloc_trace(const struct cl_models *m)
{
    struct cc_trace *tr = malloc(sizeof *tr);
    if (!tr || !cc_trace_read(m->target, m->allocator, tr)) {
        cl_note_add(m->notes, "the allocator's trace is not exported (out of memory)");
        free(tr);
        return NULL;
    }
    if (tr->notes)
        cl_note_add(m->notes, "%s", tr->notes);
    return tr;
}

/* What _record_memory_history() recorded of each block and trace entry, for --torch-snapshot;
 * NULL with a note when the objects cannot be read. Whatever is not read is noted too: those
 * blocks' frames are then their holders only. */
static struct cc_stacks *alloc_stacks(const struct cl_models *m, const struct cc_trace *tr)
{
    struct cc_stacks *st = m->heap ? malloc(sizeof *st) : NULL;
    if (!st) {
        cl_note_add(m->notes, "recorded allocation stacks not read (%s)",
                    m->heap ? "out of memory" : "the Python objects could not be read");
        return NULL;
    }
    cc_stacks_read(&m->heap->objects, m->allocator, tr, st);
    if (st->unreadable)
        cl_note_add(m->notes,
                    "%llu recorded allocation stacks could not be read "
                    "(no torch::CapturedTraceback where the block's context points): those "
                    "blocks' frames are their holders",
                    (unsigned long long)st->unreadable);
    if (st->oom)
        cl_note_add(m->notes, "out of memory reading allocation stacks: some blocks' "
                              "frames are their holders");
    if (st->cpp_frames)
        cl_note_add(m->notes,
                    "--torch-snapshot: the recorded stacks' %llu C++ frames "
                    "are left out (their Python frames are kept)",
                    (unsigned long long)st->cpp_frames);
    return st;
}

static int write_torch_snapshot(const char *path, const struct cl_torch_snapshot_models *tm,
                                struct cl_error *err)
{
    struct cl_output o;
    int rc = cl_output_open(path, &o, err);
    if (rc)
        return rc;
    rc = cl_torch_snapshot_write(o.f, tm, err);
    if (rc)
        cl_output_abort(&o);
    return rc ? rc : cl_output_commit(&o, err);
}

static int cmd_blocks(const struct cl_command_line *cli, const struct cl_models *m, FILE *out,
                      struct cl_error *err)
{
    struct cc_trace *trace = cli->torch_snapshot ? alloc_trace(m) : NULL;
    struct cc_stacks *stacks = cli->torch_snapshot ? alloc_stacks(m, trace) : NULL;
    struct cl_torch_snapshot_models tm = {m->allocator, m->tensors, m->holders, stacks, trace};
    struct cl_report_notes w = cl_models_notes(m);
    int rc = cl_report_blocks(out, m->allocator, m->tensors, m->holders, &cli->block_filter,
                              cli->json, &w, err);
    if (!rc && cli->torch_snapshot)
        rc = write_torch_snapshot(cli->torch_snapshot, &tm, err);
    if (stacks)
        cc_stacks_free(stacks);
    free(stacks);
    if (trace)
        cc_trace_free(trace);
    free(trace);
    if (rc)
        return rc;
    if (cli->html && !m->holders)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "--html needs the tensors, which could not be read (%s)", m->unread);
    return cli->html ? write_html(cli, m, err) : 0;
}

/* Checks what the walkers would read: the variant py_runtime_open chooses, with the runtime's
 * _Py_DebugOffsets filled in. When no variant fits, the minor's first table is checked so that
 * the mismatches show. */
static int cmd_check_layout(const struct cl_command_line *cli, const struct cl_models *m, FILE *out,
                            struct cl_error *err)
{
    (void)cli;
    const struct cl_python_info *py = m->python;
    struct py_runtime_site site = {py->module, py->runtime_addr, py->version_hex, py->version,
                                   py->free_threaded};
    struct py_runtime *rt = malloc(sizeof *rt);
    if (!rt)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    struct cl_error open_err;
    int open_rc = py_runtime_open(m->target, &site, rt, &open_err);
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
    bool dwarf = l && py_layout_check_dwarf(l, py->module, out, true, &r);
    if (dwarf)
        fprintf(out, "layout %s vs DWARF of %s: %u fields checked, %u mismatched, %u missing%s\n",
                l->name, py->module->path, r.checked, r.mismatched, r.missing,
                r.unasked ? " (the rest not in this dump: an older culeak wrote it)" : "");
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

static int snapshot_of(const struct cl_models *m, struct cl_snapshot *out, struct cl_error *err)
{
    return cl_snapshot_from(m->heap, m->tensors, m->holders, m->target->pid, m->rank,
                            m->python->version, m->torch->version, out, err);
}

static int cmd_snapshot(const struct cl_command_line *cli, const struct cl_models *m, FILE *out,
                        struct cl_error *err)
{
    struct cl_snapshot snap;
    int rc = snapshot_of(m, &snap, err);
    if (rc)
        return rc;
    struct cl_output o;
    if (!cli->output) {
        cl_snapshot_write(out, &snap);
    } else if (!(rc = cl_output_open(cli->output, &o, err))) {
        cl_snapshot_write(o.f, &snap);
        rc = cl_output_commit(&o, err);
    }
    char size[CL_BYTES_TEXT];
    cl_bytes_text(size, sizeof size, snap.bytes);
    if (!rc && cli->output && !cli->json)
        fprintf(out, "%llu storages, %s in %zu holder patterns, saved to %s\n",
                (unsigned long long)snap.storages, size, snap.n, cli->output);
    cl_snapshot_free(&snap);
    return rc;
}

/* diff A --pid P: the file against the target now. */
static int cmd_diff(const struct cl_command_line *cli, const struct cl_models *m, FILE *out,
                    struct cl_error *err)
{
    struct cl_snapshot before, now;
    int rc = cl_snapshot_read(cli->files[0], &before, err);
    if (rc)
        return rc;
    if (!(rc = snapshot_of(m, &now, err))) {
        rc = cl_snapshot_diff(out, &before, &now, cli->json, err);
        cl_snapshot_free(&now);
    }
    cl_snapshot_free(&before);
    return rc;
}

/* diff A B: two files. */
static int diff_files(const struct cl_command_line *cli, FILE *out, struct cl_error *err)
{
    struct cl_snapshot a, b;
    int rc = cl_snapshot_read(cli->files[0], &a, err);
    if (rc)
        return rc;
    if (!(rc = cl_snapshot_read(cli->files[1], &b, err))) {
        rc = cl_snapshot_diff(out, &a, &b, cli->json, err);
        cl_snapshot_free(&b);
    }
    cl_snapshot_free(&a);
    return rc;
}

static int by_rank(const void *a, const void *b, void *snaps)
{
    const struct cl_snapshot *x = &((const struct cl_snapshot *)snaps)[*(const size_t *)a];
    const struct cl_snapshot *y = &((const struct cl_snapshot *)snaps)[*(const size_t *)b];
    return cl_rank_order(&x->rank, x->pid, &y->rank, y->pid);
}

/* merge A B...: the snapshot files of a job's ranks side by side, in rank order. */
static int merge_files(const struct cl_command_line *cli, FILE *out, struct cl_error *err)
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
        struct cl_ranks ranks;
        rc = cl_ranks_build(sorted, sources, n, &ranks, err);
        if (!rc && cli->json) {
            struct cl_json j;
            cl_json_begin_document(&j, out);
            cl_json_key(&j, "across_ranks");
            cl_ranks_write_json(&j, &ranks);
            cl_json_end_object(&j);
            cl_json_finish(&j);
        } else if (!rc) {
            cl_ranks_write_text(out, &ranks);
        }
        cl_ranks_free(&ranks);
    }
    for (size_t i = 0; snaps && i < read; i++)
        cl_snapshot_free(&snaps[i]); /* the one that failed freed itself */
    free(snaps);
    free(sorted);
    free(sources);
    free(order);
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

/* --dump-on-growth: the job has grown by the threshold since the watch began (first); a dump of
 * it now, and the diff that triggered it, into the -o folder. */
static int dump_growth(const struct cl_command_line *cli, const struct cl_snapshot *first,
                       const struct cl_snapshot *now, const char *device, int64_t grown, FILE *out,
                       FILE *log, struct cl_error *err)
{
    char dump[4096], diff[4096], size[CL_BYTES_TEXT];
    snprintf(dump, sizeof dump, "%s/growth-%d.cldump", cli->output, now->pid);
    snprintf(diff, sizeof diff, "%s/growth-%d.diff", cli->output, now->pid);
    struct cl_output o;
    int rc = cl_output_open(diff, &o, err);
    if (rc)
        return rc;
    if ((rc = cl_snapshot_diff(o.f, first, now, false, err))) {
        cl_output_abort(&o);
        return rc;
    }
    if ((rc = cl_output_commit(&o, err)))
        return rc;
    struct cl_command_line d = *cli;
    d.command = "dump";
    d.output = dump;
    if ((rc = cl_command_dump(&d, log, err)))
        return rc;
    cl_bytes_text(size, sizeof size, (uint64_t)grown);
    fprintf(out, "%s pid %d: %s grew by %s since the watch began: wrote %s and %s\n", now->time,
            now->pid, device, size, dump, diff);
    fflush(out);
    return 0;
}

/* watch: inspects the target every cli->interval seconds (cli->count times, or until it ends),
 * printing what grew since the last inspection; the target runs in between. With
 * --dump-on-growth, the first inspection at which a device holds that many more tensor bytes
 * than at the first also writes a dump and the diff from the first, once. */
static int watch(const struct cl_command_line *cli, FILE *out, FILE *log, struct cl_error *err)
{
    struct stat st;
    if (!cli->dump_on_growth != !cli->output)
        return cl_error_set(err, CL_E_USAGE,
                            "watch: --dump-on-growth N and -o DIR (where it writes) go together");
    if (cli->output && (stat(cli->output, &st) != 0 || !S_ISDIR(st.st_mode)))
        return cl_error_set(err, CL_E_USAGE, "watch -o %s: not a folder", cli->output);
    struct cl_snapshot first, last, now;
    double interval = cli->interval > 0 ? cli->interval : 10;
    int rc = watch_once(cli, &first, err);
    if (rc)
        return rc;
    char size[CL_BYTES_TEXT];
    cl_bytes_text(size, sizeof size, first.bytes);
    fprintf(out, "%s pid %d: %llu storages, %s\n", first.time, first.pid,
            (unsigned long long)first.storages, size);
    fflush(out);
    bool have_last = false, dumped = false;
    for (size_t i = 1; !rc && (!cli->count || i < cli->count); i++) {
        struct timespec pause = {(time_t)interval,
                                 (long)((interval - (double)(time_t)interval) * 1e9)};
        nanosleep(&pause, NULL);
        if ((rc = watch_once(cli, &now, err)))
            break;
        char line[2048], device[32];
        cl_snapshot_delta(have_last ? &last : &first, &now, line, sizeof line);
        fprintf(out, "%s pid %d: %s\n", now.time, now.pid, line);
        fflush(out);
        int64_t grown =
            cli->dump_on_growth && !dumped ? cl_snapshot_device_growth(&first, &now, device) : 0;
        if (grown > 0 && (uint64_t)grown >= cli->dump_on_growth) {
            rc = dump_growth(cli, &first, &now, device, grown, out, log, err);
            dumped = true;
        }
        if (have_last)
            cl_snapshot_free(&last);
        last = now;
        have_last = true;
    }
    if (have_last)
        cl_snapshot_free(&last);
    cl_snapshot_free(&first);
    /* a process that ended is how a watch without --count stops */
    return rc == CL_E_NO_PROCESS && !cli->count ? 0 : rc;
}

static int dump(const struct cl_command_line *cli, FILE *out, FILE *log, struct cl_error *err)
{
    (void)out;
    return cl_command_dump(cli, log, err);
}

/* ---- the table ---- */

#define OPT(id) CL_OPTION_BIT(CL_O_##id)

/* clang-format off */
static const struct cl_command_spec commands[] = {
    {.name = "info",
     .help = "the target, its Python runtime and its PyTorch build",
     .flags = CL_CMD_DUMPED | CL_CMD_MANY | CL_CMD_READS_LITTLE | CL_CMD_GDB,
     .schema = "info", .python = "culeak.Target.info",
     .run = cmd_info},
    {.name = "objects",
     .help = "Python objects by type: count, bytes, how many the GC tracks",
     .options = OPT(TOP),
     .needs = CL_MODEL_HEAP,
     .flags = CL_CMD_DUMPED | CL_CMD_MANY | CL_CMD_GDB,
     .schema = "objects", .python = "culeak.Target.objects",
     .run = cmd_objects},
    {.name = "balance",
     .help = "reference counts against the references found: what is not explained, by\n"
             "type; what no root reaches, split into garbage and what C holds",
     .options = OPT(TOP),
     .needs = CL_MODEL_HEAP, .uses = CL_MODEL_HOLDERS,
     .without = "references C++ holds to tensors' Python objects are not counted",
     .flags = CL_CMD_DUMPED | CL_CMD_MANY | CL_CMD_GDB,
     .schema = "balance", .python = "culeak.Target.balance",
     .run = cmd_balance},
    {.name = "refs",
     .help = "objects (--addr ADDR | --type NAME) and the shortest chain from a root",
     .options = OPT(ADDR) | OPT(TYPE) | OPT(MAX_PATHS) | OPT(REFERENTS) | OPT(ALLOCATOR_LAYOUT),
     .one_of = OPT(ADDR) | OPT(TYPE),
     .needs = CL_MODEL_HEAP, .uses = CL_MODEL_HOLDERS,
     .without = "objects held only from C++ are not named",
     .flags = CL_CMD_MANY | CL_CMD_GDB,
     .schema = "refs", .python = "culeak.Target.refs",
     .run = cmd_refs},
    {.name = "tensors",
     .help = "tensors grouped by storage, biggest first, each with what holds it",
     .options = OPT(DEVICE) | OPT(MIN_BYTES) | OPT(ALLOCATOR_LAYOUT) | OPT(FULL),
     .needs = CL_MODEL_HOLDERS,
     .flags = CL_CMD_TORCH | CL_CMD_DUMPED | CL_CMD_MANY | CL_CMD_GDB,
     .schema = "tensors", .python = "culeak.Target.tensors",
     .run = cmd_tensors},
    {.name = "summary",
     .help = "the leak report: every holder by the bytes dropping it would free",
     .options = OPT(TOP) | OPT(ALLOCATOR_LAYOUT) | OPT(FULL) | OPT(HTML) | OPT(DEPTH) |
                OPT(DOMINANT) | OPT(SPREAD),
     .needs = CL_MODEL_HOLDERS, .uses = CL_MODEL_ALLOCATOR,
     .without = "no CUDA allocator figures",
     .flags = CL_CMD_TORCH | CL_CMD_DUMPED | CL_CMD_MANY | CL_CMD_RANKS | CL_CMD_GDB |
              CL_CMD_DRIVER,
     .schema = "summary", .python = "culeak.Target.summary",
     .run = cmd_summary},
    {.name = "blocks",
     .help = "the CUDA caching allocator: segments, blocks, the tensors in them",
     .options = OPT(DEVICE) | OPT(STATE) | OPT(ALLOCATOR_LAYOUT) | OPT(TORCH_SNAPSHOT) | OPT(HTML),
     .needs = CL_MODEL_ALLOCATOR, .uses = CL_MODEL_HOLDERS,
     .without = "blocks are listed without their holders",
     .flags = CL_CMD_DUMPED | CL_CMD_MANY | CL_CMD_GDB,
     .schema = "blocks", .python = "culeak.Target.blocks",
     .run = cmd_blocks},
    {.name = "snapshot",
     .help = "what holds tensor memory, by holder pattern, saved (-o FILE) or printed",
     .needs = CL_MODEL_HOLDERS,
     .flags = CL_CMD_DUMPED | CL_CMD_MANY | CL_CMD_RANKS | CL_CMD_GDB_OWN | CL_CMD_OWN_OUTPUT,
     .schema = "snapshot", .python = "culeak.Target.snapshot",
     .gdb_doc = "Remember what holds tensor memory now, under NAME.\n"
                "--save FILE also writes it in the CLI's snapshot format, --load FILE NAME\n"
                "reads one (culeak snapshot -o).\n"
                "Usage: culeak-snapshot NAME [--save FILE] | culeak-snapshot --load FILE NAME",
     .run = cmd_snapshot},
    {.name = "diff", .operands = "A [B]",
     .help = "growth per holder pattern between snapshot files A and B, or A and the\n"
             "target now (--pid/--core)",
     .needs = CL_MODEL_HOLDERS,
     .flags = CL_CMD_GDB_OWN,
     .min_files = 1, .max_files = 2,
     .fewer_files = "diff wants a snapshot file: diff A B, or diff A --pid PID | --core FILE",
     .schema = "diff", .python = "culeak.diff, culeak.Target.diff",
     .gdb_doc = "What changed between two snapshots, by holder pattern (indices collapsed).\n"
                "Usage: culeak-diff A B [--json] [--output FILE]",
     .run = cmd_diff, .run_files = diff_files, .run_files_at = 2},
    {.name = "merge", .operands = "A B...",
     .help = "the ranks of a job side by side, from a snapshot file of each: where a\n"
             "rank holds more than the median of the ranks, by holder pattern",
     .min_files = 2, .max_files = CL_MAX_TARGETS,
     .fewer_files = "merge wants two or more snapshot files (culeak snapshot -o FILE of each "
                    "rank)",
     .schema = "merge", .python = "culeak.merge",
     .run_files = merge_files, .run_files_at = 2},
    {.name = "watch",
     .help = "inspect every --interval S seconds (--count N times) and log what grew;\n"
             "with --dump-on-growth N -o DIR, dump the job once it has grown by N",
     .options = OPT(INTERVAL) | OPT(COUNT) | OPT(DUMP_ON_GROWTH) | OPT(OUTPUT),
     .needs = CL_MODEL_HOLDERS,
     .flags = CL_CMD_LIVE | CL_CMD_OWN_OUTPUT, /* -o DIR: --dump-on-growth's folder */
     .no_python = "a loop: culeak.Target.snapshot() and culeak.diff() at the caller's pace",
     .drive = watch},
    {.name = "check-layout",
     .help = "compare culeak's CPython layout table with the runtime's DWARF",
     .flags = CL_CMD_DUMPED | CL_CMD_MANY | CL_CMD_GDB,
     .no_python = "a check of culeak's own tables, printed as text for its developers",
     .run = cmd_check_layout},
    {.name = "dump",
     .help = "save what every command reads of the target (-o FILE), to run them on\n"
             "the file (--dump FILE) anywhere, with none of the target's files",
     .options = OPT(OUTPUT) | OPT(NOTE) | OPT(REDACT) | OPT(ALLOCATOR_ONLY),
     .needs = CL_MODEL_HOLDERS,
     .flags = CL_CMD_RECORDS,
     .no_python = "it writes a file: the CLI's culeak dump, whose file culeak.open(dump=) reads",
     .drive = dump},
    {.name = "break-step",
     .help = "report what grew at every training step, stopping only on real growth",
     .options = OPT(SYMBOL) | OPT(EVERY) | OPT(STOP_ON_GROWTH) | OPT(WARMUP) | OPT(OFF),
     .flags = CL_CMD_GDB_OWN | CL_CMD_GDB_ONLY,
     .gdb_doc = "Report what grew at every training step, stopping only on real growth.\n"
                "Usage: culeak-break-step [--symbol SYM] [--every N] [--stop-on-growth BYTES]\n"
                "                         [--warmup N]\n"
                "       culeak-break-step --off\n"
                "Default SYM: the autograd engine's execute in libtorch_cpu (once per "
                "backward()). Each hit prints one line: storages and bytes added since the "
                "last one, and the paths that grew (indices collapsed). Growth counts once the "
                "job has warmed up: by default once every torch.optim.Optimizer has state "
                "(its first step), at most 10 steps; --warmup N after N steps, --warmup 0 from "
                "the first."},
    {.name = "step-report",
     .help = "used by culeak-break-step's breakpoint: report this step",
     .flags = CL_CMD_GDB_OWN | CL_CMD_GDB_ONLY,
     .gdb_doc = "Used by culeak-break-step's breakpoint: report this step.\n"
                "Usage: culeak-step-report (in the breakpoint's commands)"},
    {.name = "catch-oom",
     .help = "stop the job at each CUDA out-of-memory error, before anything unwinds, and\n"
             "write a dump or the leak report of that instant",
     .flags = CL_CMD_GDB_OWN | CL_CMD_GDB_ONLY,
     .python = "culeak.dump_on_oom",
     .gdb_doc = "Stop the job at each CUDA out-of-memory error, before anything unwinds.\n"
                "Usage: culeak-catch-oom [--dump FILE] [--report FILE] [--json] [--once]\n"
                "       culeak-catch-oom --off\n"
                "Where torch's caching allocator throws c10::OutOfMemoryError (a breakpoint on "
                "__cxa_throw that compares the exception's type), write a culeak dump of that "
                "instant (--dump FILE) and the leak report (--report FILE; --json: as JSON), "
                "then let the job go on: its own except, or its death, happens as it would have. "
                "In FILE, {pid} is the job's pid and {n} the error's number. With neither, the "
                "job stays stopped at each error. Each error is followed until it reaches Python "
                "as torch.OutOfMemoryError, or is caught inside torch; --once ends after the "
                "first that reaches Python, the job stopped there (gdb -p PID -batch -x FILE "
                "waits for it, then detaches as it ends: the job runs on to its own except)."},
    {.name = "oom-report",
     .help = "used by culeak-catch-oom's breakpoint: write what the error asked for",
     .flags = CL_CMD_GDB_OWN | CL_CMD_GDB_ONLY,
     .gdb_doc = "Used by culeak-catch-oom's breakpoint: write what it asked for.\n"
                "Usage: culeak-oom-report (in the breakpoint's commands)"},
    {.name = "oom-reached",
     .help = "used by culeak-catch-oom's breakpoint: the error reached Python",
     .flags = CL_CMD_GDB_OWN | CL_CMD_GDB_ONLY,
     .gdb_doc = "Used by culeak-catch-oom's breakpoint: the error reached Python.\n"
                "Usage: culeak-oom-reached (in the breakpoint's commands)"},
};
/* clang-format on */

const struct cl_command_spec *cl_commands(size_t *n)
{
    *n = sizeof commands / sizeof *commands;
    return commands;
}

const struct cl_command_spec *cl_command_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof commands / sizeof *commands; i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

uint64_t cl_command_option_set(const struct cl_command_spec *c)
{
    uint64_t set = c->options | CL_OPTIONS_ALWAYS;
    if (!(c->flags & CL_CMD_GDB_ONLY))
        set |= CL_OPTIONS_TARGET | OPT(QUIET);
    if (c->schema)
        set |= OPT(JSON);
    if (c->flags & CL_CMD_MANY)
        set |= OPT(CHILDREN);
    if ((c->needs | c->uses) & (CL_MODEL_HEAP | CL_MODEL_HOLDERS))
        set |= OPT(MAX_OBJECTS);
    if ((c->run || c->run_files) && !(c->flags & CL_CMD_GDB_ONLY))
        set |= OPT(OUTPUT);
    return set;
}
