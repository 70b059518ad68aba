#include "engine/cmdline.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cudacache/layout.h"
#include "engine/command.h"
#include "engine/values.h"
#include "torch/tensors.h"

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
    "  merge A B...  the ranks of a job side by side, from a snapshot file of each: where a\n"
    "                rank holds more than the median of the ranks, by holder pattern\n"
    "  watch         inspect every --interval S seconds (--count N times) and log what grew\n"
    "  check-layout  compare culeak's CPython layout table with the runtime's DWARF\n"
    "  dump          save what every command reads of the target (-o FILE), to run them on\n"
    "                the file (--dump FILE) anywhere, with none of the target's files\n"
    "\n";

static const char usage_target[] =
    "target:\n"
    "  --pid PID        a live process: stopped while what can change in it is copied,\n"
    "                   then resumed while culeak walks the copy (repeatable: several\n"
    "                   processes, read in parallel, each report under its rank)\n"
    "  --children PID   every child process of PID: the workers of a torchrun agent\n"
    "  --copy-limit N   copy at most N bytes (K, M, G: powers of 1024; default 4G, or half\n"
    "                   the memory available if less; shared by the processes read at\n"
    "                   once); a process with more stays stopped until culeak is done,\n"
    "                   copied as read up to N (default: half the memory available),\n"
    "                   and so does any with --copy-limit 0, copied not at all (info,\n"
    "                   which reads a few pages, copies nothing unless it is given)\n"
    "  --core FILE      a core file (kernel core or gdb's gcore; repeatable, as --pid)\n"
    "  --dump FILE      a file culeak dump wrote\n"
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
    "  --device D       tensors: cpu, cuda, cuda:N or all (default all); blocks: cuda:N or N\n"
    "  --state S        blocks: allocated, free or all (default all)\n"
    "  --allocator-layout NAME  blocks, summary, tensors, refs: read the CUDA allocator\n"
    "                   with this layout table (e.g. 2.14) instead of the torch version's;\n"
    "                   it must still fit\n"
    "  --min-bytes N    tensors: only storages of at least N bytes (K, M, G: powers of 1024)\n"
    "  --max-objects N  stop walking after N objects (default 50 million)\n"
    "  -o, --output FILE  snapshot, dump: write it to FILE\n"
    "  --allocator-only  dump: the runtimes and the CUDA allocator, no Python objects: a\n"
    "                   small file on which blocks lists the segments without holders\n"
    "  --torch-snapshot FILE  blocks: also write the allocator as torch.cuda.memory._snapshot()\n"
    "                   returns it, pickled, for torch's memory viewers (holders as frames,\n"
    "                   or beside the allocation stacks _record_memory_history recorded)\n"
    "  --interval S     watch: seconds between inspections (default 10)\n"
    "  --count N        watch: inspections before stopping (default: until the process ends)\n"
    "output:\n"
    "  --json           one JSON object instead of text\n"
    "  --full           tensors, summary: text lines whole (by default cut to 160 columns)\n"
    "  --html FILE      summary, blocks: also write a self-contained HTML page: the holders\n"
    "                   and the CUDA segments, each block coloured by what holds it\n"
    "  --quiet          no progress lines (on a terminal, a walk past a second shows them)\n"
    "\n";

static const char usage_exit[] =
    "exit status: 0 ok, 2 usage, 3 no such process, 4 permission denied, 5 not a core or\n"
    "  dump, 6 truncated core or dump, 7 executable does not match the core, 8 not a Python\n"
    "  process, 9 unsupported runtime, 10 unreadable memory (or not in the dump), 11 I/O error,\n"
    "  1 internal error\n";

static const char usage_environment[] =
    "environment:\n"
    "  CULEAK_PROGRESS_AFTER S  seconds of work before progress lines start (default 1)\n"
    "  CULEAK_NO_PROCESS_VM_READV=1  read a live process through /proc/PID/mem only\n";

size_t cl_command_usage(bool with_target, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s%s%s%s\n%s", usage_commands, with_target ? usage_target : "",
                     usage_options, usage_exit, usage_environment);
    return n < 0 ? 0 : (size_t)n;
}


/* clang-format off */
enum option_id {
    O_PID, O_CORE, O_EXE, O_SYSROOT, O_LIBPATH, O_JSON, O_TOP, O_ADDR, O_TYPE, O_MAX_OBJECTS,
    O_MAX_PATHS, O_DEVICE, O_MIN_BYTES, O_STATE, O_ALLOCATOR_LAYOUT, O_FULL, O_OUTPUT, O_INTERVAL,
    O_COUNT, O_HELP, O_VERSION, O_DUMP, O_COPY_LIMIT, O_QUIET, O_TORCH_SNAPSHOT,
    O_HTML, O_CHILDREN, O_ALLOCATOR_ONLY, O_NUMBER_OF_OPTIONS
};
/* clang-format on */

#define EVERY_COMMAND NULL
#define WALKS " objects refs tensors summary blocks snapshot diff watch dump "
#define MANY \
    " info objects refs tensors summary blocks snapshot check-layout "   /* several targets */

/* Each option: its name, whether it may be given more than once, and the commands it applies to
 * (space-separated, or EVERY_COMMAND); anything else is a usage error, never silently ignored. */
static const struct option_rule {
    const char *name;
    bool repeatable;
    const char *commands;
} rules[O_NUMBER_OF_OPTIONS] = {
    [O_PID] = {"pid", true, EVERY_COMMAND},
    [O_CORE] = {"core", true, EVERY_COMMAND},
    [O_EXE] = {"exe", false, EVERY_COMMAND},
    [O_SYSROOT] = {"sysroot", false, EVERY_COMMAND},
    [O_LIBPATH] = {"lib-path", true, EVERY_COMMAND},
    [O_JSON] = {"json", false, EVERY_COMMAND},
    [O_TOP] = {"top", false, " objects summary "},
    [O_ADDR] = {"addr", true, " refs "},
    [O_TYPE] = {"type", false, " refs "},
    [O_MAX_OBJECTS] = {"max-objects", false, WALKS},
    [O_MAX_PATHS] = {"max-paths", false, " refs "},
    [O_DEVICE] = {"device", false, " tensors blocks "},
    [O_MIN_BYTES] = {"min-bytes", false, " tensors "},
    [O_STATE] = {"state", false, " blocks "},
    [O_ALLOCATOR_LAYOUT] = {"allocator-layout", false, " refs tensors summary blocks "},
    [O_FULL] = {"full", false, " tensors summary "},
    [O_OUTPUT] = {"output", false, " snapshot dump "},
    [O_INTERVAL] = {"interval", false, " watch "},
    [O_COUNT] = {"count", false, " watch "},
    [O_HELP] = {"help", true, EVERY_COMMAND},
    [O_VERSION] = {"version", true, EVERY_COMMAND},
    [O_DUMP] = {"dump", false, EVERY_COMMAND},
    [O_COPY_LIMIT] = {"copy-limit", false, EVERY_COMMAND},
    [O_QUIET] = {"quiet", false, EVERY_COMMAND},
    [O_TORCH_SNAPSHOT] = {"torch-snapshot", false, " blocks "},
    [O_HTML] = {"html", false, " summary blocks "},
    [O_CHILDREN] = {"children", false, MANY},
    [O_ALLOCATOR_ONLY] = {"allocator-only", false, " dump "},
};

#define MAX_PATHS 64
#define MAX_WATCH_COUNT 1000000
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

/* --state's values, in block_filter.state's order. */
static const char *const state_names[] = {"all", "allocated", "free", NULL};

static int set_state(const char *arg, struct cl_command_line *cli, struct cl_error *err)
{
    const char *const *names = state_names;
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

/* Stores one option's value; 0 or CL_E_USAGE. One option a line, as the rules above have them. */
/* clang-format off */
static int set_option(enum option_id id, const char *arg, struct cl_command_line *cli,
                      struct cl_error *err)
{
    struct cl_file_locator *loc = &cli->session.open.locator;
    size_t pid;
    switch (id) {
    case O_PID: {
        int rc = set_count("--pid", arg, MAX_PID, &pid, err);
        if (rc || cli->npids == CL_MAX_TARGETS)
            return rc ? rc : cl_error_set(err, CL_E_USAGE, "at most %d --pid", CL_MAX_TARGETS);
        cli->pids[cli->npids++] = (int)pid;
        cli->session.pid = cli->pids[0];
        return 0;
    }
    case O_CORE:
        if (cli->ncores == CL_MAX_TARGETS)
            return cl_error_set(err, CL_E_USAGE, "at most %d --core", CL_MAX_TARGETS);
        cli->cores[cli->ncores++] = arg;
        cli->session.core = cli->cores[0];
        return 0;
    case O_CHILDREN: {
        int rc = set_count("--children", arg, MAX_PID, &pid, err);
        cli->children_of = rc ? 0 : (int)pid;
        return rc;
    }
    case O_DUMP: cli->session.dump = arg; return 0;
    case O_EXE: loc->exe = arg; return 0;
    case O_SYSROOT: loc->sysroot = arg; return 0;
    case O_LIBPATH:
        if (loc->nlib_dirs == CL_MAX_LIB_DIRS)
            return cl_error_set(err, CL_E_USAGE, "at most %d --lib-path", CL_MAX_LIB_DIRS);
        cli->lib_dirs[loc->nlib_dirs++] = arg;
        return 0;
    case O_JSON: cli->json = true; return 0;
    case O_FULL: cli->full = true; return 0;
    case O_QUIET: cli->quiet = true; return 0;
    case O_ALLOCATOR_ONLY: cli->allocator_only = true; return 0;
    case O_OUTPUT: cli->output = arg; return 0;
    case O_TORCH_SNAPSHOT: cli->torch_snapshot = arg; return 0;
    case O_HTML: cli->html = arg; return 0;
    case O_TYPE: cli->type = arg; return 0;
    case O_INTERVAL: return cl_value_seconds("--interval", arg, 0.1, 86400, &cli->interval, err);
    case O_COUNT: return set_count("--count", arg, MAX_WATCH_COUNT, &cli->count, err);
    case O_TOP: return set_count("--top", arg, UINT32_MAX, &cli->top, err);
    case O_MAX_PATHS: return set_count("--max-paths", arg, MAX_PATHS, &cli->max_paths, err);
    case O_MAX_OBJECTS:
        return cl_value_count("--max-objects", arg, 1, MAX_OBJECTS, &cli->walk.max_objects, err);
    case O_ADDR:
        if (cli->naddrs == CL_MAX_ADDRS)
            return cl_error_set(err, CL_E_USAGE, "at most %d --addr", CL_MAX_ADDRS);
        if (cl_value_addr("--addr", arg, &cli->addrs[cli->naddrs], err))
            return CL_E_USAGE;
        cli->naddrs++;
        return 0;
    case O_MIN_BYTES: return cl_value_size("--min-bytes", arg, &cli->tensor_filter.min_bytes, err);
    case O_COPY_LIMIT: {
        struct cl_open_options *o = &cli->session.open;
        int rc = cl_value_size("--copy-limit", arg, &o->copy_limit, err);
        o->keep_stopped = !rc && o->copy_limit == 0;
        return rc;
    }
    case O_DEVICE: return set_device(arg, cli, err);
    case O_STATE: return set_state(arg, cli, err);
    case O_ALLOCATOR_LAYOUT: return set_allocator_layout(arg, cli, err);
    default: return 0;
    }
}
/* clang-format on */

/* " objects summary " as "objects, summary". */
static const char *listed(const char *commands, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = commands + 1; *p && n + 3 < cap; p++) {
        if (*p != ' ')
            out[n++] = *p;
        else if (p[1]) {
            out[n++] = ',';
            out[n++] = ' ';
        }
    }
    out[n] = '\0';
    return out;
}

static bool targets(int id)
{
    return id == O_PID || id == O_CORE || id == O_EXE || id == O_SYSROOT || id == O_LIBPATH ||
           id == O_DUMP || id == O_COPY_LIMIT || id == O_CHILDREN;
}

bool cl_command_many(const struct cl_command_line *cli)
{
    return cli->npids + cli->ncores > 1 || cli->children_of;
}

size_t cl_command_options(const char *command, bool with_target, const char **out, size_t cap)
{
    char word[32];
    size_t n = 0;
    snprintf(word, sizeof word, " %s ", command);
    for (int id = 0; id < O_NUMBER_OF_OPTIONS && n < cap; id++)
        if (id != O_HELP && id != O_VERSION && (with_target || !targets(id)) &&
            (!rules[id].commands || strstr(rules[id].commands, word)))
            out[n++] = rules[id].name;
    return n;
}

const char *const *cl_option_values(const char *option)
{
    static const char *const devices[] = {"cpu", "cuda", "all", NULL};
    return strcmp(option, "device") == 0  ? devices
           : strcmp(option, "state") == 0 ? state_names
                                          : NULL;
}

int cl_command_applicable(const struct cl_command_line *cli, struct cl_error *err)
{
    if (!cli->command)
        return 0;
    char word[32], commands[128];
    snprintf(word, sizeof word, " %s ", cli->command);
    for (int id = 0; id < O_NUMBER_OF_OPTIONS; id++)
        if ((cli->given >> id & 1) && rules[id].commands && !strstr(rules[id].commands, word))
            return cl_error_set(err, CL_E_USAGE, "--%s does not apply to %s (only to %s)",
                                rules[id].name, cli->command,
                                listed(rules[id].commands, commands, sizeof commands));
    if (strcmp(cli->command, "blocks") == 0 && cli->block_filter.cpu)
        return cl_error_set(err, CL_E_USAGE,
                            "--device cpu does not apply to blocks: the CUDA "
                            "allocator's devices are cuda:N");
    return 0;
}

/* info reads a few pages of the target: a copy made so that the process could resume before
 * them would stop it longer than the reads do (under 0.01 s against 0.06 s, and 11 MB of memory
 * against 271, on a 2M-object heap). check-layout reads as little, but then compares DWARF for
 * longer than a copy takes, which the process would wait out stopped. */
static bool reads_little(const char *command)
{
    return command && strcmp(command, "info") == 0;
}

/* The command, diff's files, and no stray arguments. */
static int parse_operands(int argc, char **argv, bool want_command, struct cl_command_line *cli,
                          struct cl_error *err)
{
    if (want_command) {
        if (optind >= argc)
            return cl_error_set(err, CL_E_USAGE, "no command given (see --help)");
        cli->command = argv[optind++];
        if (!cl_command_known(cli->command))
            return cl_error_set(err, CL_E_USAGE, "unknown command '%s' (see --help)", cli->command);
    }
    /* diff and merge take the snapshot files they compare */
    bool merge = cli->command && strcmp(cli->command, "merge") == 0;
    size_t max_files = merge ? CL_MAX_TARGETS : 2;
    while (cli->command && (merge || strcmp(cli->command, "diff") == 0) && optind < argc &&
           cli->nfiles < max_files)
        cli->files[cli->nfiles++] = argv[optind++];
    if (optind < argc)
        return cl_error_set(err, CL_E_USAGE, "unexpected argument '%s'", argv[optind]);
    if (cli->command && strcmp(cli->command, "diff") == 0 && !cli->nfiles)
        return cl_error_set(err, CL_E_USAGE,
                            "diff wants a snapshot file: diff A B, or diff A "
                            "--pid PID | --core FILE");
    if (merge && cli->nfiles < 2)
        return cl_error_set(err, CL_E_USAGE,
                            "merge wants two or more snapshot files (culeak "
                            "snapshot -o FILE of each rank)");
    return 0;
}

/* `culeak dump`: a live process or a core in, a file out. */
static int check_dump_command(const struct cl_command_line *cli, struct cl_error *err)
{
    if (cli->session.dump)
        return cl_error_set(err, CL_E_USAGE,
                            "dump reads a live process or a core (--pid or "
                            "--core), not another dump");
    if (!cli->output)
        return cl_error_set(err, CL_E_USAGE, "dump wants the file to write: -o FILE");
    return 0;
}

/* Several targets: a command that reads each (MANY) and writes no file. */
static int check_many(const struct cl_command_line *cli, struct cl_error *err)
{
    char word[32];
    snprintf(word, sizeof word, " %s ", cli->command ? cli->command : "");
    if (!strstr(MANY, word))
        return cl_error_set(err, CL_E_USAGE,
                            "%s reads one target; several (--pid, --core, "
                            "--children) go to info, objects, refs, tensors, summary, blocks, "
                            "snapshot and check-layout",
                            cli->command ? cli->command : "");
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
    const struct cl_file_locator *loc = &cli->session.open.locator;
    const struct cl_session_options *so = &cli->session;
    if (cli->command && strcmp(cli->command, "watch") == 0 && !so->pid && allow_target)
        return cl_error_set(err, CL_E_USAGE, "watch wants a live process: --pid PID");
    bool target = so->pid || so->core || so->dump || loc->exe || loc->sysroot || loc->nlib_dirs;
    if (!so->pid && !cli->children_of && cli->given >> O_COPY_LIMIT & 1)
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
        return check_many(cli, err);
    if ((so->pid != 0) + (so->core != NULL) + (so->dump != NULL) > 1)
        return cl_error_set(err, CL_E_USAGE,
                            "give exactly one of --pid PID, --core FILE or "
                            "--dump FILE");
    if (cli->command && strcmp(cli->command, "dump") == 0) {
        int rc = check_dump_command(cli, err);
        if (rc)
            return rc;
    }
    if (!so->pid && !so->core && !so->dump && !cl_command_offline(cli))
        return cl_error_set(
            err, CL_E_USAGE,
            cli->nfiles == 1 ? "diff A wants the target to "
                               "compare with: --pid PID, --core FILE or --dump FILE (or a second "
                               "file)"
                             : "give exactly one of --pid PID, --core FILE or --dump FILE");
    if (cl_command_offline(cli) && target)
        return cl_error_set(err, CL_E_USAGE,
                            "diff A B compares two files: no --pid, --core or "
                            "--dump");
    if ((so->pid || so->dump) && (loc->exe || loc->sysroot || loc->nlib_dirs))
        return cl_error_set(err, CL_E_USAGE,
                            "--exe, --sysroot and --lib-path apply to cores "
                            "only%s",
                            so->dump ? " (a dump holds what it needs)" : "");
    return 0;
}

int cl_command_parse(int argc, char **argv, int first, bool want_command, bool allow_target,
                     struct cl_command_line *cli, struct cl_error *err)
{
    struct option longopts[O_NUMBER_OF_OPTIONS + 1] = {{0}};
    for (int id = 0; id < O_NUMBER_OF_OPTIONS; id++) {
        bool flag = id == O_JSON || id == O_FULL || id == O_QUIET || id == O_HELP ||
                    id == O_VERSION || id == O_ALLOCATOR_ONLY;
        longopts[id] =
            (struct option){rules[id].name, flag ? no_argument : required_argument, NULL, 256 + id};
    }
    opterr = 0;
    optind = 0;   /* glibc: 0 restarts the scan, so a plugin can parse many command lines */
    argc -= first - 1;
    argv += first - 1;
    for (int c; (c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1;) {
        int id = c == 'h' ? O_HELP : c == 'o' ? O_OUTPUT : c - 256;
        if (id < 0 || id >= O_NUMBER_OF_OPTIONS)
            return cl_error_set(err, CL_E_USAGE, "unknown or incomplete option '%s' (see --help)",
                                argv[optind - 1]);
        if (id == O_HELP)
            return CL_PARSE_HELP;
        if (id == O_VERSION)
            return CL_PARSE_VERSION;
        if ((cli->given >> id & 1) && !rules[id].repeatable)
            return cl_error_set(err, CL_E_USAGE, "--%s given twice: give it once", rules[id].name);
        cli->given |= 1u << id;
        int rc = set_option((enum option_id)id, optarg, cli, err);
        if (rc)
            return rc;
    }
    cli->session.open.locator.lib_dirs = cli->lib_dirs;
    int rc = parse_operands(argc, argv, want_command, cli, err);
    if (!rc && reads_little(cli->command) && !(cli->given >> O_COPY_LIMIT & 1))
        cli->session.open.keep_stopped = true;
    if (!rc)
        rc = check_target(allow_target, cli, err);
    if (!rc)
        rc = cl_command_applicable(cli, err);
    return rc;
}
