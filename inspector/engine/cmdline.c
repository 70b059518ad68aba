#include "engine/cmdline.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cudacache/layout.h"
#include "engine/command.h"
#include "engine/values.h"
#include "torch/tensors.h"
#include "util/text.h"

static const char usage_exit[] =
    "exit status: 0 ok, 2 usage, 3 no such process, 4 permission denied, 5 not a core or\n"
    "  dump, 6 truncated core or dump, 7 executable does not match the core, 8 not a Python\n"
    "  process, 9 unsupported runtime, 10 unreadable memory (or not in the dump), 11 I/O error,\n"
    "  1 internal error\n";

static const char usage_environment[] =
    "environment:\n"
    "  CULEAK_PROGRESS_AFTER S  seconds of work before progress lines start (default 1)\n"
    "  CULEAK_NO_PROCESS_VM_READV=1  read a live process through /proc/PID/mem only\n";

/* Whether the front end has the command: the CLI all but gdb's own; gdb those it registers. */
static bool in_front(const struct cl_command_spec *c, enum cl_front front)
{
    return front == CL_FRONT_CLI ? !(c->flags & CL_CMD_GDB_ONLY)
                                 : (c->flags & (CL_CMD_GDB | CL_CMD_GDB_OWN)) != 0;
}

/* The options the front end's form of c takes: gdb's own forms (named snapshots) parse theirs
 * themselves, and gdb names the target. */
static uint64_t front_options(const struct cl_command_spec *c, enum cl_front front)
{
    if (front == CL_FRONT_CLI)
        return cl_command_option_set(c);
    if (!(c->flags & (CL_CMD_GDB | CL_CMD_GDB_ONLY)))
        return 0;
    return cl_command_option_set(c) & ~(CL_OPTIONS_TARGET | CL_OPTION_BIT(CL_O_CHILDREN));
}

/* A command's line of --help: its name and operands, then its help from column 16. */
#define COMMAND_COLUMN 16

static void command_usage(const struct cl_command_spec *c, char *out, size_t cap, size_t *len)
{
    char left[64];
    snprintf(left, sizeof left, "%s%s%s", c->name, c->operands ? " " : "",
             c->operands ? c->operands : "");
    cl_appendf(out, cap, len, "  %-*s", COMMAND_COLUMN - 2, left);
    for (const char *line = c->help; line;) {
        const char *eol = strchr(line, '\n');
        int width = eol ? (int)(eol - line) : (int)strlen(line);
        cl_appendf(out, cap, len, "%.*s\n", width, line);
        line = eol ? eol + 1 : NULL;
        if (line)
            cl_appendf(out, cap, len, "%*s", COMMAND_COLUMN, "");
    }
}

/* The options of one group that some command of the front end takes, under its heading. */
static void group_usage(enum cl_option_group g, enum cl_front front, char *out, size_t cap,
                        size_t *len)
{
    static const char *const headings[] = {
        "target:", "selection:", "output:", "step tracking (culeak-break-step):"};
    size_t n;
    const struct cl_command_spec *c = cl_commands(&n);
    uint64_t taken = 0;
    for (size_t i = 0; i < n; i++)
        if (in_front(&c[i], front))
            taken |= front_options(&c[i], front);
    bool heading = false;
    for (int id = 0; id < CL_O_NUMBER_OF_OPTIONS; id++) {
        if (cl_option(id)->group != g || !(taken & CL_OPTION_BIT(id)))
            continue;
        if (!heading)
            cl_appendf(out, cap, len, "%s\n", headings[g]);
        heading = true;
        cl_option_usage(id, out, cap, len);
    }
}

size_t cl_command_usage(enum cl_front front, char *out, size_t cap)
{
    size_t len = 0, n;
    const struct cl_command_spec *c = cl_commands(&n);
    out[0] = '\0';
    cl_appendf(out, cap, &len, "commands:\n");
    for (size_t i = 0; i < n; i++)
        if (in_front(&c[i], front))
            command_usage(&c[i], out, cap, &len);
    cl_appendf(out, cap, &len, "\n");
    for (enum cl_option_group g = CL_OPT_TARGET; g < CL_OPT_META; g++)
        group_usage(g, front, out, cap, &len);
    cl_appendf(out, cap, &len, "\n%s\n%s", usage_exit, usage_environment);
    return len;
}

#define MAX_PATHS 64
#define MAX_WATCH_COUNT 1000000
#define MAX_EVERY 1000000
#define MAX_DRILL_DEPTH 6
#define MAX_GROWTH (UINT64_C(1) << 50)   /* a PiB: anything larger is a typo */
#define MAX_PID 0x7fffffff
#define MAX_OBJECTS UINT32_MAX   /* the walk numbers its nodes with 32 bits */

/* --device: tensors filter by kind and index; the allocator's devices are CUDA devices only. */
static int set_device(const char *arg, struct cl_command_line *cli, struct cl_error *err)
{
    struct cl_device_choice d;
    int rc = cl_value_device("--device", arg, &d, err);
    if (rc)
        return rc;
    cli->tensor_filter.device = d.kind == CL_DEVICE_ALL   ? -1
                                : d.kind == CL_DEVICE_CPU ? TORCH_DEVICE_CPU
                                                          : TORCH_DEVICE_CUDA;
    cli->tensor_filter.by_index = d.index >= 0;
    cli->tensor_filter.index = d.index;
    cli->block_filter.device = d.index;
    cli->block_filter.cpu = d.kind == CL_DEVICE_CPU;
    return 0;
}

/* --state: one of cl_option_values("state"), in block_filter.state's order. */
static int set_state(const char *arg, struct cl_command_line *cli, struct cl_error *err)
{
    const char *const *names = cl_option_values("state");
    for (int i = 0; names[i]; i++)
        if (strcmp(arg, names[i]) == 0) {
            cli->block_filter.state = i;
            return 0;
        }
    return cl_error_set(err, CL_E_USAGE, "--state wants allocated, free or all, not '%s'", arg);
}

static int set_allocator_layout(const char *arg, struct cl_command_line *cli, struct cl_error *err)
{
    char names[256];
    if (!cc_layout_named(arg))
        return cl_error_set(err, CL_E_USAGE,
                            "--allocator-layout: no layout called '%s' "
                            "(known: %s)",
                            arg, cc_layout_names(names, sizeof names));
    cli->allocator_layout = arg;
    return 0;
}

/* A whole-number option into a size_t. */
static int set_count(const char *opt, const char *arg, uint64_t max, size_t *out,
                     struct cl_error *err)
{
    uint64_t v;
    int rc = cl_value_count(opt, arg, 1, max, &v, err);
    if (!rc)
        *out = (size_t)v;
    return rc;
}

static int set_u32(const char *opt, const char *arg, uint64_t min, uint64_t max, uint32_t *out,
                   struct cl_error *err)
{
    uint64_t v;
    int rc = cl_value_count(opt, arg, min, max, &v, err);
    if (!rc)
        *out = (uint32_t)v;
    return rc;
}

/* --stop-on-growth: a size from a byte to a PiB. */
static int set_growth(const char *arg, struct cl_command_line *cli, struct cl_error *err)
{
    uint64_t n;
    int rc = cl_value_size("--stop-on-growth", arg, &n, err);
    if (rc)
        return rc;
    if (n == 0 || n > MAX_GROWTH)
        return cl_error_set(err, CL_E_USAGE,
                            "--stop-on-growth wants from 1 byte to %lluT, not '%s'",
                            (unsigned long long)(MAX_GROWTH >> 40), arg);
    cli->steps.stop_on_growth = n;
    return 0;
}

static int add_pid(const char *arg, struct cl_command_line *cli, struct cl_error *err)
{
    size_t pid;
    int rc = set_count("--pid", arg, MAX_PID, &pid, err);
    if (rc || cli->npids == CL_MAX_TARGETS)
        return rc ? rc : cl_error_set(err, CL_E_USAGE, "at most %d --pid", CL_MAX_TARGETS);
    for (size_t i = 0; i < cli->npids; i++)
        if (cli->pids[i] == (int)pid)
            return 0;   /* one process, read once */
    cli->pids[cli->npids++] = (int)pid;
    cli->session.pid = cli->pids[0];
    return 0;
}

static int add_addr(const char *arg, struct cl_command_line *cli, struct cl_error *err)
{
    if (cli->naddrs == CL_MAX_ADDRS)
        return cl_error_set(err, CL_E_USAGE, "at most %d --addr", CL_MAX_ADDRS);
    if (cl_value_addr("--addr", arg, &cli->addrs[cli->naddrs], err))
        return CL_E_USAGE;
    cli->naddrs++;
    return 0;
}

/* Stores one option's value; 0 or CL_E_USAGE. One option a line, in engine/options.h's order. */
/* clang-format off */
static int set_option(enum cl_option_id id, const char *arg, struct cl_command_line *cli,
                      struct cl_error *err)
{
    struct cl_file_locator *loc = &cli->session.open.locator;
    struct cl_open_options *open = &cli->session.open;
    size_t pid;
    switch (id) {
    case CL_O_PID: return add_pid(arg, cli, err);
    case CL_O_CHILDREN: {
        int rc = set_count("--children", arg, MAX_PID, &pid, err);
        cli->children_of = rc ? 0 : (int)pid;
        return rc;
    }
    case CL_O_COPY_LIMIT: {
        int rc = cl_value_size("--copy-limit", arg, &open->copy_limit, err);
        open->keep_stopped = !rc && open->copy_limit == 0;
        return rc;
    }
    case CL_O_MEMORY_LIMIT: {
        int rc = cl_value_size("--memory-limit", arg, &cli->memory_limit, err);
        if (!rc && cli->memory_limit == 0)
            return cl_error_set(err, CL_E_USAGE, "--memory-limit wants more than 0 bytes");
        return rc;
    }
    case CL_O_CORE:
        if (cli->ncores == CL_MAX_TARGETS)
            return cl_error_set(err, CL_E_USAGE, "at most %d --core", CL_MAX_TARGETS);
        for (size_t i = 0; i < cli->ncores; i++)
            if (strcmp(cli->cores[i], arg) == 0)
                return 0;   /* one core, read once */
        cli->cores[cli->ncores++] = arg;
        cli->session.core = cli->cores[0];
        return 0;
    case CL_O_DUMP: cli->session.dump = arg; return 0;
    case CL_O_EXE: loc->exe = arg; return 0;
    case CL_O_SYSROOT: loc->sysroot = arg; return 0;
    case CL_O_LIB_PATH:
        if (loc->nlib_dirs == CL_MAX_LIB_DIRS)
            return cl_error_set(err, CL_E_USAGE, "at most %d --lib-path", CL_MAX_LIB_DIRS);
        cli->lib_dirs[loc->nlib_dirs++] = arg;
        return 0;
    case CL_O_TOP: return set_count("--top", arg, UINT32_MAX, &cli->top, err);
    case CL_O_ADDR: return add_addr(arg, cli, err);
    case CL_O_TYPE: cli->type = arg; return 0;
    case CL_O_MAX_PATHS: return set_count("--max-paths", arg, MAX_PATHS, &cli->max_paths, err);
    case CL_O_REFERENTS: cli->referents = true; return 0;
    case CL_O_DEVICE: return set_device(arg, cli, err);
    case CL_O_STATE: return set_state(arg, cli, err);
    case CL_O_ALLOCATOR_LAYOUT: return set_allocator_layout(arg, cli, err);
    case CL_O_MIN_BYTES: return cl_value_size("--min-bytes", arg, &cli->tensor_filter.min_bytes, err);
    case CL_O_MAX_OBJECTS:
        return cl_value_count("--max-objects", arg, 1, MAX_OBJECTS, &cli->walk.max_objects, err);
    case CL_O_OUTPUT: cli->output = arg; return 0;
    case CL_O_REDACT: cli->redact = true; return 0;
    case CL_O_NOTE:
        if (!*arg || strlen(arg) > CL_MAX_NOTE || strchr(arg, '\n'))
            return cl_error_set(err, CL_E_USAGE, "--note wants one line of at most %d characters",
                                CL_MAX_NOTE);
        open->note = arg;
        return 0;
    case CL_O_ALLOCATOR_ONLY: cli->allocator_only = true; return 0;
    case CL_O_TORCH_SNAPSHOT: cli->torch_snapshot = arg; return 0;
    case CL_O_INTERVAL: return cl_value_seconds("--interval", arg, 0.1, 86400, &cli->interval, err);
    case CL_O_COUNT: return set_count("--count", arg, MAX_WATCH_COUNT, &cli->count, err);
    case CL_O_DUMP_ON_GROWTH:
        if (cl_value_size("--dump-on-growth", arg, &cli->dump_on_growth, err))
            return CL_E_USAGE;
        return cli->dump_on_growth ? 0 : cl_error_set(err, CL_E_USAGE, "--dump-on-growth wants N above 0");
    case CL_O_DEPTH: return set_u32("--depth", arg, 0, MAX_DRILL_DEPTH, &cli->drill.depth, err);
    case CL_O_DOMINANT: return set_u32("--dominant", arg, 51, 100, &cli->drill.dominant_pct, err);
    case CL_O_SPREAD: return set_u32("--spread", arg, 2, UINT32_MAX, &cli->drill.spread, err);
    case CL_O_JSON: cli->json = true; return 0;
    case CL_O_FULL: cli->full = true; return 0;
    case CL_O_HTML: cli->html = arg; return 0;
    case CL_O_QUIET: cli->quiet = true; return 0;
    case CL_O_SYMBOL: cli->steps.symbol = arg; return 0;
    case CL_O_EVERY: return set_count("--every", arg, MAX_EVERY, &cli->steps.every, err);
    case CL_O_STOP_ON_GROWTH: return set_growth(arg, cli, err);
    case CL_O_WARMUP:
        cli->steps.warmup_given = true;
        return cl_value_count("--warmup", arg, 0, MAX_EVERY, &cli->steps.warmup, err);
    case CL_O_OFF: cli->steps.off = true; return 0;
    default: return 0;
    }
}
/* clang-format on */

static bool takes(const struct cl_command_spec *c, uint64_t bit, unsigned flag)
{
    return (!bit || (cl_command_option_set(c) & bit)) && (c->flags & flag) == flag;
}

/* The commands of the table whose option set has bit (0: any), as "objects, summary" (or, with last,
 * "info, objects and check-layout"); flag limits them to the rows with that flag. */
static const char *commands_with(uint64_t bit, unsigned flag, const char *last, char *out,
                                 size_t cap)
{
    size_t n, len = 0, found = 0, total = 0;
    const struct cl_command_spec *c = cl_commands(&n);
    for (size_t i = 0; i < n; i++)
        total += takes(&c[i], bit, flag);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (!takes(&c[i], bit, flag))
            continue;
        found++;
        cl_appendf(out, cap, &len, "%s%s",
                   found == 1               ? ""
                   : found == total && last ? last
                                            : ", ",
                   c[i].name);
    }
    return out;
}

/* --core -: a core on standard input, which dump reads; a --pid beside it names the process that
 * is dumping it (core_pattern's %P), for its files and its user, not a second target. */
static bool core_stream(const struct cl_command_line *cli)
{
    return cli->session.core && strcmp(cli->session.core, "-") == 0;
}

bool cl_command_many(const struct cl_command_line *cli)
{
    if (core_stream(cli) && cli->ncores == 1 && cli->npids <= 1 && !cli->children_of)
        return false;
    return cli->npids + cli->ncores > 1 || cli->children_of;
}

size_t cl_command_options(const char *command, enum cl_front front, const char **out, size_t cap)
{
    const struct cl_command_spec *c = cl_command_find(command);
    uint64_t set = c ? front_options(c, front) : 0;
    size_t n = 0;
    for (int id = 0; id < CL_O_NUMBER_OF_OPTIONS && n < cap; id++)
        if (id != CL_O_HELP && id != CL_O_VERSION && (set & CL_OPTION_BIT(id)))
            out[n++] = cl_option(id)->name;
    return n;
}

/* Whether exactly one of the options in set was given. */
static bool cli_one_of(const struct cl_command_line *cli, uint64_t set)
{
    uint64_t given = cli->given & set;
    return given && !(given & (given - 1));
}

/* "refs wants one of --addr ADDR or --type NAME". */
static int one_of_refusal(const struct cl_command_spec *c, struct cl_error *err)
{
    char names[256] = "";
    size_t len = 0, found = 0, total = (size_t)__builtin_popcountll(c->one_of);
    for (int id = 0; id < CL_O_NUMBER_OF_OPTIONS; id++)
        if (c->one_of & CL_OPTION_BIT(id))
            cl_appendf(names, sizeof names, &len, "%s--%s %s",
                       !found++         ? ""
                       : found == total ? " or "
                                        : ", ",
                       cl_option(id)->name, cl_option(id)->value);
    return cl_error_set(err, CL_E_USAGE, "%s wants one of %s", c->name, names);
}

int cl_command_applicable(const struct cl_command_line *cli, struct cl_error *err)
{
    const struct cl_command_spec *c = cl_command_find(cli->command);
    if (!c)
        return 0;
    char commands[256];
    uint64_t stray = cli->given & ~cl_command_option_set(c);
    for (int id = 0; id < CL_O_NUMBER_OF_OPTIONS; id++)
        if (stray & CL_OPTION_BIT(id))
            return cl_error_set(
                err, CL_E_USAGE, "--%s does not apply to %s (only to %s)", cl_option(id)->name,
                c->name, commands_with(CL_OPTION_BIT(id), 0, NULL, commands, sizeof commands));
    if (c->one_of && !cli_one_of(cli, c->one_of))
        return one_of_refusal(c, err);
    if ((c->needs & CL_MODEL_ALLOCATOR) && cli->block_filter.cpu)
        return cl_error_set(err, CL_E_USAGE,
                            "--device cpu does not apply to %s: the CUDA "
                            "allocator's devices are cuda:N",
                            c->name);
    return 0;
}

/* The command, the snapshot files it takes, and no stray arguments. */
static int parse_operands(int argc, char **argv, bool want_command, struct cl_command_line *cli,
                          struct cl_error *err)
{
    if (want_command) {
        if (optind >= argc)
            return cl_error_set(err, CL_E_USAGE, "no command given (see --help)");
        cli->command = argv[optind++];
        const struct cl_command_spec *known = cl_command_find(cli->command);
        if (!known || (known->flags & CL_CMD_GDB_ONLY))
            return cl_error_set(err, CL_E_USAGE, "unknown command '%s' (see --help)", cli->command);
    }
    const struct cl_command_spec *c = cl_command_find(cli->command);
    cli->session.driver_memory = c && (c->flags & CL_CMD_DRIVER);
    while (c && optind < argc && cli->nfiles < c->max_files)
        cli->files[cli->nfiles++] = argv[optind++];
    if (optind < argc)
        return cl_error_set(err, CL_E_USAGE, "unexpected argument '%s'", argv[optind]);
    if (c && cli->nfiles < c->min_files)
        return cl_error_set(err, CL_E_USAGE, "%s", c->fewer_files);
    return 0;
}

/* A command that records (dump): a live process or a core in, a file out. */
static int check_records(const struct cl_command_line *cli, struct cl_error *err)
{
    if (cli->session.dump)
        return cl_error_set(err, CL_E_USAGE,
                            "%s reads a live process or a core (--pid or "
                            "--core), not another dump",
                            cli->command);
    if (!cli->output)
        return cl_error_set(err, CL_E_USAGE, "%s wants the file to write: -o FILE", cli->command);
    return 0;
}

/* Several targets: a command that reads each (CL_CMD_MANY) and writes no file. */
static int check_many(const struct cl_command_spec *c, const struct cl_command_line *cli,
                      struct cl_error *err)
{
    char many[256];
    if (!c || !(c->flags & CL_CMD_MANY))
        return cl_error_set(err, CL_E_USAGE,
                            "%s reads one target; several (--pid, --core, --children) go to %s",
                            cli->command ? cli->command : "",
                            commands_with(0, CL_CMD_MANY, " and ", many, sizeof many));
    if (cli->session.dump)
        return cl_error_set(err, CL_E_USAGE, "several targets are --pid and --core, not --dump");
    if (cli->output || cli->html || cli->torch_snapshot)
        return cl_error_set(err, CL_E_USAGE,
                            "-o, --html and --torch-snapshot write one "
                            "target's file: give one target (or snapshot -o per rank, then "
                            "merge)");
    const struct cl_file_locator *loc = &cli->session.open.locator;
    if (!cli->ncores && (loc->exe || loc->sysroot || loc->nlib_dirs))
        return cl_error_set(err, CL_E_USAGE,
                            "--exe, --sysroot and --lib-path apply to cores "
                            "only");
    return 0;
}

/* Which target: exactly one where the command needs one, and core options for cores only. */
static int check_target(bool allow_target, const struct cl_command_line *cli, struct cl_error *err)
{
    const struct cl_command_spec *c = cl_command_find(cli->command);
    const struct cl_file_locator *loc = &cli->session.open.locator;
    const struct cl_session_options *so = &cli->session;
    if (c && (c->flags & CL_CMD_LIVE) && !so->pid && allow_target)
        return cl_error_set(err, CL_E_USAGE, "%s wants a live process: --pid PID", c->name);
    bool target = so->pid || so->core || so->dump || loc->exe || loc->sysroot || loc->nlib_dirs;
    if (core_stream(cli) && (!c || !(c->flags & CL_CMD_RECORDS)))
        return cl_error_set(err, CL_E_USAGE,
                            "--core - (a core on standard input) is read by dump only: "
                            "dump it, then read the dump");
    if (!so->pid && !cli->children_of && !core_stream(cli) &&
        (cli->given & CL_OPTION_BIT(CL_O_COPY_LIMIT)))
        return cl_error_set(err, CL_E_USAGE,
                            "--copy-limit applies to live processes (--pid, "
                            "--children) only");
    if (!allow_target && target)
        return cl_error_set(err, CL_E_USAGE,
                            "the target is the debugger's; --pid, --core, --dump, "
                            "--exe, --sysroot and --lib-path do not apply here");
    if (!allow_target)
        return 0;
    if (cl_command_many(cli))
        return check_many(c, cli, err);
    if (cli->given & CL_OPTION_BIT(CL_O_MEMORY_LIMIT))
        return cl_error_set(err, CL_E_USAGE,
                            "--memory-limit shares memory between several targets (--pid or "
                            "--core repeated, --children); one is bounded by --copy-limit and "
                            "--max-objects");
    if ((so->pid != 0 && !core_stream(cli)) + (so->core != NULL) + (so->dump != NULL) > 1)
        return cl_error_set(err, CL_E_USAGE,
                            "give exactly one of --pid PID, --core FILE or "
                            "--dump FILE");
    if (c && (c->flags & CL_CMD_RECORDS)) {
        int rc = check_records(cli, err);
        if (rc)
            return rc;
    }
    bool offline = cl_command_offline(cli);
    if (!so->pid && !so->core && !so->dump && !offline)
        return cl_error_set(
            err, CL_E_USAGE,
            cli->nfiles ? "%s A wants the target to compare with: --pid PID, --core FILE or "
                          "--dump FILE (or a second file)"
                        : "give exactly one of --pid PID, --core FILE or --dump FILE",
            c ? c->name : "");
    if (offline && target)
        return cl_error_set(err, CL_E_USAGE,
                            "%s A B compares two files: no --pid, --core or --dump",
                            c ? c->name : "");
    if (((so->pid && !core_stream(cli)) || so->dump) &&
        (loc->exe || loc->sysroot || loc->nlib_dirs))
        return cl_error_set(err, CL_E_USAGE,
                            "--exe, --sysroot and --lib-path apply to cores "
                            "only%s",
                            so->dump ? " (a dump holds what it needs)" : "");
    return 0;
}

int cl_command_parse(int argc, char **argv, int first, bool want_command, bool allow_target,
                     struct cl_command_line *cli, struct cl_error *err)
{
    struct option longopts[CL_O_NUMBER_OF_OPTIONS + 1] = {{0}};
    char shorts[2 * CL_O_NUMBER_OF_OPTIONS + 1] = "";
    size_t nshort = 0;
    for (int id = 0; id < CL_O_NUMBER_OF_OPTIONS; id++) {
        const struct cl_option_spec *o = cl_option(id);
        longopts[id] =
            (struct option){o->name, o->value ? required_argument : no_argument, NULL, 256 + id};
        if (o->short_name) {
            shorts[nshort++] = o->short_name;
            if (o->value)
                shorts[nshort++] = ':';
        }
    }
    opterr = 0;
    optind = 0; /* glibc: 0 restarts the scan, so a plugin can parse many command lines */
    argc -= first - 1;
    argv += first - 1;
    for (int ch; (ch = getopt_long(argc, argv, shorts, longopts, NULL)) != -1;) {
        int id = ch - 256;
        for (int k = 0; ch < 256 && k < CL_O_NUMBER_OF_OPTIONS; k++)
            if (ch != '?' && cl_option(k)->short_name == ch)
                id = k;
        if (id < 0 || id >= CL_O_NUMBER_OF_OPTIONS)
            return cl_error_set(err, CL_E_USAGE, "unknown or incomplete option '%s' (see --help)",
                                argv[optind - 1]);
        if (id == CL_O_HELP)
            return CL_PARSE_HELP;
        if (id == CL_O_VERSION)
            return CL_PARSE_VERSION;
        if ((cli->given & CL_OPTION_BIT(id)) && !cl_option(id)->repeatable)
            return cl_error_set(err, CL_E_USAGE, "--%s given twice: give it once",
                                cl_option(id)->name);
        if (cl_option(id)->value && !*optarg) /* --sysroot "" is a mistake, never a value */
            return cl_error_set(err, CL_E_USAGE, "--%s wants %s, not an empty string",
                                cl_option(id)->name, cl_option(id)->value);
        cli->given |= CL_OPTION_BIT(id);
        int rc = set_option((enum cl_option_id)id, optarg, cli, err);
        if (rc)
            return rc;
    }
    cli->session.open.locator.lib_dirs = cli->lib_dirs;
    int rc = parse_operands(argc, argv, want_command, cli, err);
    const struct cl_command_spec *c = rc ? NULL : cl_command_find(cli->command);
    /* A command that reads a few pages keeps the process stopped: a copy made so that the
     * process could resume before them would stop it longer than the reads do (info: under
     * 0.01 s against 0.06 s, and 11 MB of memory against 271, on a 2M-object heap). */
    if (c && (c->flags & CL_CMD_READS_LITTLE) && !(cli->given & CL_OPTION_BIT(CL_O_COPY_LIMIT)))
        cli->session.open.keep_stopped = true;
    if (!rc)
        rc = check_target(allow_target, cli, err);
    if (!rc)
        rc = cl_command_applicable(cli, err);
    return rc;
}
