/* culeak: who holds this memory? The command-line front end. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpython/layout_check.h"
#include "engine/session.h"
#include "report/info.h"
#include "report/objects.h"
#include "report/tensors.h"
#include "report/json.h"

#ifndef CULEAK_VERSION
#define CULEAK_VERSION "0.1.0"
#endif

#define MAX_LIB_DIRS 32
#define MAX_ADDRS 256

struct cli {
    const char *command;
    struct cl_session_options session;
    const char *lib_dirs[MAX_LIB_DIRS];
    bool json;
    size_t top;
    uint64_t addrs[MAX_ADDRS];
    size_t naddrs;
    const char *type;
    size_t max_paths;
    struct cl_tensor_filter tensor_filter;
    struct py_walk_options walk;
};

static const char usage_text[] =
    "usage: culeak COMMAND (--pid PID | --core FILE [--exe PATH]) [options]\n"
    "\n"
    "Reads a stopped Python + PyTorch process, or its core dump, from the outside.\n"
    "\n"
    "commands:\n"
    "  info          the target, its Python runtime and its PyTorch build\n"
    "  objects       Python objects by type: count, bytes, how many the GC tracks\n"
    "  refs          objects (--addr ADDR | --type NAME) and the shortest chain from a root\n"
    "  tensors       tensors grouped by storage, biggest first, each with what holds it\n"
    "  summary       tensor bytes by device and by the root that holds them\n"
    "  check-layout  compare culeak's CPython layout table with the runtime's DWARF\n"
    "\n"
    "target:\n"
    "  --pid PID        a live process (stopped while culeak reads it, then resumed)\n"
    "  --core FILE      a core file (kernel core or gdb's gcore)\n"
    "  --exe PATH       the executable the core was made from, if it has moved\n"
    "  --sysroot DIR    look up the core's files under DIR (a core from another machine)\n"
    "  --lib-path DIR   look up the core's libraries by name in DIR (repeatable)\n"
    "selection:\n"
    "  --top N          objects: only the N most common types\n"
    "  --addr ADDR      refs: this object (hex; repeatable)\n"
    "  --type NAME      refs: every object of this type (e.g. Tensor, collections.deque)\n"
    "  --max-paths N    refs: up to N paths per object, each through another referrer (max 64)\n"
    "  --device D       tensors: cpu, cuda or all (default all)\n"
    "  --min-bytes N    tensors: only storages of at least N bytes\n"
    "  --max-objects N  stop walking after N objects (default 50 million)\n"
    "output:\n"
    "  --json           one JSON object instead of text\n"
    "\n"
    "exit status: 0 ok, 2 usage, 3 no such process, 4 permission denied, 5 not a core,\n"
    "  6 truncated core, 7 executable does not match the core, 8 not a Python process,\n"
    "  9 unsupported runtime, 10 unreadable memory, 11 I/O error, 1 internal error\n";

static int fail(const struct cli *cli, const struct cl_error *err)
{
    fprintf(stderr, "culeak: error: %s\n", err->msg);
    if (cli->json) {
        struct cl_json j;
        cl_json_init(&j, stdout);
        cl_json_begin_object(&j);
        cl_json_key(&j, "error");
        cl_json_begin_object(&j);
        cl_json_key(&j, "code");
        cl_json_string(&j, cl_status_name(err->code));
        cl_json_key(&j, "message");
        cl_json_string(&j, err->msg);
        cl_json_end_object(&j);
        cl_json_end_object(&j);
        cl_json_finish(&j);
    }
    return err->code;
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

static int parse_args(int argc, char **argv, struct cli *cli, struct cl_error *err)
{
    enum { O_PID = 256, O_CORE, O_EXE, O_SYSROOT, O_LIBPATH, O_JSON, O_HELP, O_VERSION, O_TOP,
           O_ADDR, O_TYPE, O_MAX_OBJECTS, O_MAX_PATHS, O_DEVICE, O_MIN_BYTES };
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
        {0, 0, 0, 0}};
    struct cl_file_locator *loc = &cli->session.open.locator;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1;) {
        switch (c) {
        case O_PID:
            if (parse_pid(optarg, &cli->session.pid))
                return cl_error_set(err, CL_E_USAGE, "--pid wants a process id, not '%s'", optarg);
            break;
        case O_CORE: cli->session.core = optarg; break;
        case O_EXE: loc->exe = optarg; break;
        case O_SYSROOT: loc->sysroot = optarg; break;
        case O_LIBPATH:
            if (loc->nlib_dirs == MAX_LIB_DIRS)
                return cl_error_set(err, CL_E_USAGE, "at most %d --lib-path", MAX_LIB_DIRS);
            cli->lib_dirs[loc->nlib_dirs++] = optarg;
            break;
        case O_JSON: cli->json = true; break;
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
            if (cli->naddrs == MAX_ADDRS)
                return cl_error_set(err, CL_E_USAGE, "at most %d --addr", MAX_ADDRS);
            cli->addrs[cli->naddrs++] = v;
            break;
        }
        case O_TYPE: cli->type = optarg; break;
        case O_DEVICE:
            if (strcmp(optarg, "all") == 0)
                cli->tensor_filter.device = -1;
            else if (strcmp(optarg, "cpu") == 0 || strcmp(optarg, "cuda") == 0)
                cli->tensor_filter.device = optarg[1] == 'p' ? 0 : 1;
            else
                return cl_error_set(err, CL_E_USAGE, "--device wants cpu, cuda or all, not '%s'", optarg);
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
        case O_HELP: fputs(usage_text, stdout); exit(0);
        case O_VERSION: printf("culeak %s\n", CULEAK_VERSION); exit(0);
        default:
            return cl_error_set(err, CL_E_USAGE, "unknown or incomplete option '%s' (see --help)",
                                argv[optind - 1]);
        }
    }
    loc->lib_dirs = cli->lib_dirs;
    if (optind >= argc)
        return cl_error_set(err, CL_E_USAGE, "no command given (see --help)");
    cli->command = argv[optind++];
    if (optind < argc)
        return cl_error_set(err, CL_E_USAGE, "unexpected argument '%s'", argv[optind]);
    if (!cli->session.pid == !cli->session.core)
        return cl_error_set(err, CL_E_USAGE, "give exactly one of --pid PID or --core FILE");
    if (cli->session.pid && (loc->exe || loc->sysroot || loc->nlib_dirs))
        return cl_error_set(err, CL_E_USAGE, "--exe, --sysroot and --lib-path apply to cores only");
    return 0;
}

static int cmd_info(const struct cli *cli, struct cl_session *s)
{
    if (cli->json)
        cl_report_info_json(stdout, s);
    else
        cl_report_info_text(stdout, s);
    return 0;
}

static int cmd_objects(const struct cli *cli, struct cl_session *s)
{
    struct cl_error err = {0};
    struct py_heap *h;
    if (cl_session_heap(s, &cli->walk, &h, &err))
        return fail(cli, &err);
    cl_report_objects(stdout, h, cli->top ? cli->top : (cli->json ? 0 : 30), cli->json);
    return 0;
}

static int cmd_refs(const struct cli *cli, struct cl_session *s)
{
    struct cl_error err = {0};
    if (!cli->naddrs == !cli->type) {
        cl_error_set(&err, CL_E_USAGE, "refs wants --addr ADDR or --type NAME");
        return fail(cli, &err);
    }
    struct py_heap *h;
    struct py_walk_options walk = cli->walk;
    walk.keep_refs = cli->max_paths > 1;
    if (cl_session_heap(s, &walk, &h, &err))
        return fail(cli, &err);
    struct cl_refs_query q = {cli->addrs, cli->naddrs, cli->type, cli->max_paths};
    cl_report_refs(stdout, h, &q, cli->json);
    return 0;
}

static int cmd_tensors(const struct cli *cli, struct cl_session *s)
{
    struct cl_error err = {0};
    struct torch_tensors *tt;
    if (!s->torch.loaded) {
        cl_error_set(&err, CL_E_UNSUPPORTED, "PyTorch is not loaded in this process");
        return fail(cli, &err);
    }
    if (cl_session_tensors(s, &cli->walk, &tt, &err))
        return fail(cli, &err);
    if (strcmp(cli->command, "summary") == 0)
        cl_report_summary(stdout, &s->heap, tt, cli->json);
    else
        cl_report_tensors(stdout, &s->heap, tt, &cli->tensor_filter, cli->json);
    return 0;
}

static int cmd_check_layout(const struct cli *cli, struct cl_session *s)
{
    struct cl_error err = {0};
    const struct cl_python_info *py = &s->python;
    const struct py_layout *l = py_layout_for(py->version_hex >> 24, (py->version_hex >> 16) & 0xff);
    if (!l) {
        cl_error_set(&err, CL_E_UNSUPPORTED, "culeak has no layout table for Python %s", py->version);
        return fail(cli, &err);
    }
    unsigned checked;
    int debug_bad = py_layout_check_debug_offsets(l, s->target, py->runtime_addr, stdout, &checked);
    if (debug_bad >= 0)
        printf("layout %s vs _Py_DebugOffsets: %u fields checked, %d mismatched\n", l->name,
               checked, debug_bad);
    struct py_layout_check r;
    if (!py_layout_check_dwarf(l, py->module, stdout, !cli->json, &r)) {
        if (debug_bad >= 0)
            return debug_bad ? CL_E_UNSUPPORTED : 0;
        cl_error_set(&err, CL_E_UNSUPPORTED, "%s has no DWARF to check against", py->module->path);
        return fail(cli, &err);
    }
    printf("layout %s vs DWARF of %s: %u fields checked, %u mismatched, %u missing\n", l->name,
           py->module->path, r.checked, r.mismatched, r.missing);
    return r.mismatched || r.missing || debug_bad > 0 ? CL_E_UNSUPPORTED : 0;
}

static const struct command {
    const char *name;
    int (*run)(const struct cli *cli, struct cl_session *s);
} commands[] = {
    {"info", cmd_info},
    {"objects", cmd_objects},
    {"refs", cmd_refs},
    {"tensors", cmd_tensors},
    {"summary", cmd_tensors},
    {"check-layout", cmd_check_layout},
};

int main(int argc, char **argv)
{
    struct cli cli = {.tensor_filter = {.device = -1}};
    struct cl_error err = {0};
    /* The command may come first (culeak info --pid 1) or last (culeak --pid 1 info): getopt
     * permutes, so both parse. */
    int rc = parse_args(argc, argv, &cli, &err);
    if (rc)
        return fail(&cli, &err);
    const struct command *cmd = NULL;
    for (size_t i = 0; i < sizeof commands / sizeof *commands && !cmd; i++)
        if (strcmp(cli.command, commands[i].name) == 0)
            cmd = &commands[i];
    if (!cmd) {
        cl_error_set(&err, CL_E_USAGE, "unknown command '%s' (see --help)", cli.command);
        return fail(&cli, &err);
    }
    if (isatty(2))
        cli.walk.progress = stderr;
    struct cl_session *s;
    if ((rc = cl_session_open(&cli.session, &s, &err)))
        return fail(&cli, &err);
    rc = cmd->run(&cli, s);
    cl_session_close(s);
    return rc;
}
