#include "engine/command.h"

#include <errno.h>
#include <getopt.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/layout_check.h"
#include "engine/snapshot.h"
#include "report/info.h"
#include "report/objects.h"
#include "report/tensors.h"
#include "util/notes.h"

static const char usage_commands[] =
    "commands:\n"
    "  info          the target, its Python runtime and its PyTorch build\n"
    "  objects       Python objects by type: count, bytes, how many the GC tracks\n"
    "  refs          objects (--addr ADDR | --type NAME) and the shortest chain from a root\n"
    "  tensors       tensors grouped by storage, biggest first, each with what holds it\n"
    "  summary       the leak report: every holder by the bytes dropping it would free\n"
    "  blocks        the CUDA caching allocator: segments, blocks, the tensors in them\n"
    "  snapshot      what holds tensor memory, by holder pattern, saved (-o FILE) or printed\n"
    "  diff A [B]    growth per holder pattern between snapshot files A and B, or A and the\n"
    "                target now (--pid/--core)\n"
    "  watch         inspect every --interval S seconds (--count N times) and log what grew\n"
    "  check-layout  compare culeak's CPython layout table with the runtime's DWARF\n"
    "\n";

static const char usage_target[] =
    "target:\n"
    "  --pid PID        a live process (stopped while culeak reads it, then resumed)\n"
    "  --core FILE      a core file (kernel core or gdb's gcore)\n"
    "  --exe PATH       the executable the core was made from, if it has moved\n"
    "  --sysroot DIR    look up the core's files under DIR (a core from another machine)\n"
    "  --lib-path DIR   look up the core's libraries by name in DIR (repeatable)\n";

static const char usage_options[] =
    "selection:\n"
    "  --top N          objects: only the N most common types; summary: the N biggest holders\n"
    "  --addr ADDR      refs: this object (hex; repeatable)\n"
    "  --type NAME      refs: every object of this type: qualified (torch.nn.parameter.Parameter)\n"
    "                   or bare (Parameter, which says so when it names several types)\n"
    "  --max-paths N    refs: up to N paths per object, each through another referrer (max 64)\n"
    "  --device D       tensors: cpu, cuda or all (default all); blocks: a device number\n"
    "  --state S        blocks: allocated, free or all (default all)\n"
    "  --allocator-layout NAME  blocks, summary: read the CUDA allocator with this layout table\n"
    "                   (e.g. 2.14) instead of the torch version's; it must still fit\n"
    "  --min-bytes N    tensors: only storages of at least N bytes\n"
    "  --max-objects N  stop walking after N objects (default 50 million)\n"
    "  -o, --output FILE  snapshot: write it to FILE\n"
    "  --interval S     watch: seconds between inspections (default 10)\n"
    "  --count N        watch: inspections before stopping (default: until the process ends)\n"
    "output:\n"
    "  --json           one JSON object instead of text\n"
    "  --full           text lines whole (by default cut to 160 columns in the middle)\n"
    "\n";

static const char usage_exit[] =
    "exit status: 0 ok, 2 usage, 3 no such process, 4 permission denied, 5 not a core,\n"
    "  6 truncated core, 7 executable does not match the core, 8 not a Python process,\n"
    "  9 unsupported runtime, 10 unreadable memory, 11 I/O error, 1 internal error\n";

const char *cl_command_usage(bool with_target)
{
    static char text[4096];
    snprintf(text, sizeof text, "%s\n%s%s\n%s", usage_commands, with_target ? usage_target : "",
             usage_options, usage_exit);
    return text;
}

static int parse_pid(const char *s, int *pid)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v <= 0 || v > 0x7fffffff)
        return -1;
    *pid = (int)v;
    return 0;
}

int cl_command_parse(int argc, char **argv, int first, bool want_command, bool allow_target,
                     struct cl_command_line *cli, struct cl_error *err)
{
    enum { O_PID = 256, O_CORE, O_EXE, O_SYSROOT, O_LIBPATH, O_JSON, O_HELP, O_VERSION, O_TOP,
           O_ADDR, O_TYPE, O_MAX_OBJECTS, O_MAX_PATHS, O_DEVICE, O_MIN_BYTES, O_STATE, O_ALLOCATOR_LAYOUT,
           O_FULL, O_OUTPUT, O_INTERVAL, O_COUNT };
    static const struct option longopts[] = {
        {"pid", required_argument, 0, O_PID},         {"core", required_argument, 0, O_CORE},
        {"exe", required_argument, 0, O_EXE},         {"sysroot", required_argument, 0, O_SYSROOT},
        {"lib-path", required_argument, 0, O_LIBPATH}, {"json", no_argument, 0, O_JSON},
        {"help", no_argument, 0, O_HELP},             {"version", no_argument, 0, O_VERSION},
        {"top", required_argument, 0, O_TOP},         {"addr", required_argument, 0, O_ADDR},
        {"type", required_argument, 0, O_TYPE},
        {"max-objects", required_argument, 0, O_MAX_OBJECTS},
        {"max-paths", required_argument, 0, O_MAX_PATHS},
        {"device", required_argument, 0, O_DEVICE},
        {"min-bytes", required_argument, 0, O_MIN_BYTES},
        {"state", required_argument, 0, O_STATE},
        {"allocator-layout", required_argument, 0, O_ALLOCATOR_LAYOUT},
        {"full", no_argument, 0, O_FULL},
        {"output", required_argument, 0, O_OUTPUT},
        {"interval", required_argument, 0, O_INTERVAL},
        {"count", required_argument, 0, O_COUNT},
        {0, 0, 0, 0}};
    struct cl_file_locator *loc = &cli->session.open.locator;
    opterr = 0;
    optind = 0;   /* glibc: 0 restarts the scan, so a plugin can parse many command lines */
    argc -= first - 1;
    argv += first - 1;
    for (int c; (c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1;) {
        switch (c) {
        case O_PID:
            if (parse_pid(optarg, &cli->session.pid))
                return cl_error_set(err, CL_E_USAGE, "--pid wants a process id, not '%s'", optarg);
            break;
        case O_CORE: cli->session.core = optarg; break;
        case O_EXE: loc->exe = optarg; break;
        case O_SYSROOT: loc->sysroot = optarg; break;
        case O_LIBPATH:
            if (loc->nlib_dirs == CL_MAX_LIB_DIRS)
                return cl_error_set(err, CL_E_USAGE, "at most %d --lib-path", CL_MAX_LIB_DIRS);
            cli->lib_dirs[loc->nlib_dirs++] = optarg;
            break;
        case O_JSON: cli->json = true; break;
        case O_FULL: cli->full = true; break;
        case 'o':
        case O_OUTPUT: cli->output = optarg; break;
        case O_INTERVAL: {
            char *end;
            double v = strtod(optarg, &end);
            if (!*optarg || *end || !(v >= 0.1 && v <= 86400))
                return cl_error_set(err, CL_E_USAGE, "--interval wants seconds from 0.1 to 86400, "
                                    "not '%s'", optarg);
            cli->interval = v;
            break;
        }
        case O_COUNT: {
            char *end;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!*optarg || *end || v == 0 || v > 1000000)
                return cl_error_set(err, CL_E_USAGE, "--count wants a number from 1 to 1000000, "
                                    "not '%s'", optarg);
            cli->count = (size_t)v;
            break;
        }
        case O_TOP:
        case O_MAX_OBJECTS:
        case O_MAX_PATHS: {
            char *end;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!*optarg || *end || v == 0 || (c == O_MAX_PATHS && v > 64))
                return cl_error_set(err, CL_E_USAGE, "%s wants a positive number%s, not '%s'",
                                    argv[optind - 2], c == O_MAX_PATHS ? " up to 64" : "", optarg);
            if (c == O_TOP)
                cli->top = (size_t)v;
            else if (c == O_MAX_OBJECTS)
                cli->walk.max_objects = v;
            else
                cli->max_paths = (size_t)v;
            break;
        }
        case O_ADDR: {
            char *end;
            unsigned long long v = strtoull(optarg, &end, 16);
            if (!*optarg || *end || v == 0)
                return cl_error_set(err, CL_E_USAGE, "--addr wants a hex address, not '%s'", optarg);
            if (cli->naddrs == CL_MAX_ADDRS)
                return cl_error_set(err, CL_E_USAGE, "at most %d --addr", CL_MAX_ADDRS);
            cli->addrs[cli->naddrs++] = v;
            break;
        }
        case O_TYPE: cli->type = optarg; break;
        case O_ALLOCATOR_LAYOUT: {
            char names[256];
            if (!cc_layout_named(optarg))
                return cl_error_set(err, CL_E_USAGE, "--allocator-layout: no layout called '%s' "
                                    "(known: %s)", optarg, cc_layout_names(names, sizeof names));
            cli->allocator_layout = optarg;
            break;
        }
        case O_DEVICE:
            if (*optarg >= '0' && *optarg <= '9') {   /* a CUDA device number */
                cli->block_filter.device = atoi(optarg);
                cli->tensor_filter.device = 1;
            } else if (strcmp(optarg, "all") == 0)
                cli->tensor_filter.device = -1;
            else if (strcmp(optarg, "cpu") == 0 || strcmp(optarg, "cuda") == 0)
                cli->tensor_filter.device = optarg[1] == 'p' ? 0 : 1;
            else
                return cl_error_set(err, CL_E_USAGE, "--device wants cpu, cuda or all, not '%s'", optarg);
            break;
        case O_STATE:
            if (strcmp(optarg, "all") == 0)
                cli->block_filter.state = 0;
            else if (strcmp(optarg, "allocated") == 0)
                cli->block_filter.state = 1;
            else if (strcmp(optarg, "free") == 0)
                cli->block_filter.state = 2;
            else
                return cl_error_set(err, CL_E_USAGE, "--state wants allocated, free or all, not '%s'",
                                    optarg);
            break;
        case O_MIN_BYTES: {
            char *end;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!*optarg || *end)
                return cl_error_set(err, CL_E_USAGE, "--min-bytes wants a number, not '%s'", optarg);
            cli->tensor_filter.min_bytes = v;
            break;
        }
        case 'h':
        case O_HELP: return -1;
        case O_VERSION: return -2;
        default:
            return cl_error_set(err, CL_E_USAGE, "unknown or incomplete option '%s' (see --help)",
                                argv[optind - 1]);
        }
    }
    loc->lib_dirs = cli->lib_dirs;
    if (want_command) {
        if (optind >= argc)
            return cl_error_set(err, CL_E_USAGE, "no command given (see --help)");
        cli->command = argv[optind++];
        if (!cl_command_known(cli->command))
            return cl_error_set(err, CL_E_USAGE, "unknown command '%s' (see --help)", cli->command);
    }
    /* diff takes the snapshot files it compares */
    while (cli->command && strcmp(cli->command, "diff") == 0 && optind < argc && cli->nfiles < 2)
        cli->files[cli->nfiles++] = argv[optind++];
    if (optind < argc)
        return cl_error_set(err, CL_E_USAGE, "unexpected argument '%s'", argv[optind]);
    if (cli->command && strcmp(cli->command, "diff") == 0 && !cli->nfiles)
        return cl_error_set(err, CL_E_USAGE, "diff wants a snapshot file: diff A B, or diff A "
                            "--pid PID | --core FILE");
    if (cli->command && strcmp(cli->command, "watch") == 0 && !cli->session.pid && allow_target)
        return cl_error_set(err, CL_E_USAGE, "watch wants a live process: --pid PID");
    bool target = cli->session.pid || cli->session.core || loc->exe || loc->sysroot || loc->nlib_dirs;
    if (!allow_target && target)
        return cl_error_set(err, CL_E_USAGE, "the target is the debugger's; --pid, --core, --exe, "
                            "--sysroot and --lib-path do not apply here");
    if (allow_target && cli->session.pid && cli->session.core)
        return cl_error_set(err, CL_E_USAGE, "give exactly one of --pid PID or --core FILE");
    if (allow_target && !cli->session.pid && !cli->session.core && !cl_command_offline(cli))
        return cl_error_set(err, CL_E_USAGE, cli->nfiles == 1 ? "diff A wants the target to compare "
                            "with: --pid PID or --core FILE (or a second file)"
                            : "give exactly one of --pid PID or --core FILE");
    if (cl_command_offline(cli) && target)
        return cl_error_set(err, CL_E_USAGE, "diff A B compares two files: no --pid or --core");
    if (cli->session.pid && (loc->exe || loc->sysroot || loc->nlib_dirs))
        return cl_error_set(err, CL_E_USAGE, "--exe, --sysroot and --lib-path apply to cores only");
    return 0;
}

/* ---- the commands ---- */

static int cmd_info(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                    struct cl_error *err)
{
    (void)err;
    struct cl_report_notes w = cl_session_notes(s);
    if (cli->json)
        cl_report_info_json(out, s->target, &s->python, &s->torch, &w);
    else
        cl_report_info_text(out, s->target, &s->python, &s->torch, &w);
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
        cl_note_add(&s->target->warnings, "tensors could not be read (%s): objects held only "
                    "from C++ are not named", no_holders.msg);
    struct cl_refs_query q = {cli->addrs, cli->naddrs, cli->type, cli->max_paths};
    struct cl_report_notes w = cl_session_notes(s);
    cl_report_refs(out, h, hs ? &s->tensors : NULL, hs, &q, cli->json, &w);
    return rc;
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
    struct cl_text_options text = {cli->full ? 0 : CL_TEXT_WIDTH, cli->top};
    if (strcmp(cli->command, "summary") == 0) {
        /* A CPU-only process's summary just has no CUDA part; a CUDA one says why it has none. */
        struct cl_error no_allocator;
        struct cc_allocator *a;
        if (cl_session_allocator(s, cli->allocator_layout, &a, &no_allocator) &&
            cl_symbols_module_named(s->symbols, "libc10_cuda"))
            cl_note_add(&s->target->warnings, "no CUDA allocator figures: %s", no_allocator.msg);
        struct cl_report_notes w = cl_session_notes(s);
        cl_report_summary(out, &s->heap, &s->tensors, hs, s->allocator_built ? &s->allocator : NULL,
                          &text, cli->json, &w);
    } else {
        struct cl_report_notes w = cl_session_notes(s);
        cl_report_tensors(out, &s->heap, &s->tensors, hs, &cli->tensor_filter, &text, cli->json, &w);
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
        cl_note_add(&s->target->warnings, "tensors could not be read (%s); blocks are listed "
                    "without their holders", ignored.msg);
    struct cl_report_notes w = cl_session_notes(s);
    cl_report_blocks(out, a, hs ? &s->tensors : NULL, hs, &cli->block_filter, cli->json, &w);
    return 0;
}

static int cmd_check_layout(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                            struct cl_error *err)
{
    const struct cl_python_info *py = &s->python;
    const struct py_layout *l = py_layout_for(py->version_hex >> 24, (py->version_hex >> 16) & 0xff);
    if (!l)
        return cl_error_set(err, CL_E_UNSUPPORTED, "culeak has no layout table for Python %s",
                            py->version);
    unsigned checked;
    int debug_bad = py_layout_check_debug_offsets(l, s->target, py->runtime_addr, out, &checked);
    if (debug_bad >= 0)
        fprintf(out, "layout %s vs _Py_DebugOffsets: %u fields checked, %d mismatched\n", l->name,
                checked, debug_bad);
    struct py_layout_check r;
    if (!py_layout_check_dwarf(l, py->module, out, !cli->json, &r)) {
        if (debug_bad >= 0)
            return debug_bad ? cl_error_set(err, CL_E_UNSUPPORTED, "the layout table disagrees "
                                            "with _Py_DebugOffsets") : 0;
        return cl_error_set(err, CL_E_UNSUPPORTED, "%s has no DWARF to check against",
                            py->module->path);
    }
    fprintf(out, "layout %s vs DWARF of %s: %u fields checked, %u mismatched, %u missing\n",
            l->name, py->module->path, r.checked, r.mismatched, r.missing);
    if (r.mismatched || r.missing || debug_bad > 0)
        return cl_error_set(err, CL_E_UNSUPPORTED, "the layout table disagrees with the runtime");
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
                (unsigned long long)snap.storages, (unsigned long long)snap.bytes, snap.n, cli->output);
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
    return cl_error_set(err, CL_E_USAGE, "watch runs from the command line; in gdb, "
                        "culeak-break-step reports what grows at every training step");
}

static const struct command {
    const char *name;
    int (*run)(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
               struct cl_error *err);
} commands[] = {
    {"info", cmd_info},       {"objects", cmd_objects}, {"refs", cmd_refs},
    {"tensors", cmd_tensors}, {"summary", cmd_tensors}, {"blocks", cmd_blocks},
    {"check-layout", cmd_check_layout}, {"snapshot", cmd_snapshot}, {"diff", cmd_diff},
    {"watch", cmd_watch},
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
        return cl_error_set(err, CL_E_USAGE, "unknown command '%s'", cli->command ? cli->command : "");
    /* Nothing is printed from a process that went away during the reads, also by commands that
     * print as they read (check-layout): the report is held back until the reads are done. */
    char *report = NULL;
    size_t len = 0;
    FILE *held = open_memstream(&report, &len);
    if (!held)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    int rc = c->run(cli, s, held, err);
    if (fclose(held) && !rc)
        rc = cl_error_set(err, CL_E_INTERNAL, "out of memory");
    if (s->target->gone)
        rc = cl_target_went_away(s->target, err);
    else if (report)
        fwrite(report, 1, len, out);
    free(report);
    return rc;
}

bool cl_command_offline(const struct cl_command_line *cli)
{
    return cli->command && strcmp(cli->command, "diff") == 0 && cli->nfiles == 2;
}

int cl_command_run_offline(const struct cl_command_line *cli, FILE *out, struct cl_error *err)
{
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
static int watch_once(const struct cl_command_line *cli, struct cl_snapshot *snap, struct cl_error *err)
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
        struct timespec pause = {(time_t)interval, (long)((interval - (double)(time_t)interval) * 1e9)};
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
