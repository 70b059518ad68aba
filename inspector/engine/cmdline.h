/* The command line both front ends parse: options and their values into a struct
 * cl_command_line, with the checks that an option applies to the command and is given once. */
#ifndef CULEAK_ENGINE_CMDLINE_H
#define CULEAK_ENGINE_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/heap.h"
#include "engine/session.h"
#include "report/blocks.h"
#include "report/tensors.h"

#define CL_MAX_LIB_DIRS 32
#define CL_MAX_ADDRS 256
#define CL_MAX_TARGETS 1024         /* --pid and --core each; the snapshot files merge reads */

struct cl_command_line {
    const char *command;
    uint32_t given;                 /* the options given, a bit per option (cmdline.c) */
    struct cl_session_options session;   /* target options: the CLI's only; the first target */
    /* Several targets (engine/multi.h): every --pid and --core given, and --children PID. */
    int pids[CL_MAX_TARGETS];
    size_t npids;
    const char *cores[CL_MAX_TARGETS];
    size_t ncores;
    int children_of;
    const char *lib_dirs[CL_MAX_LIB_DIRS];
    bool json;
    size_t top;
    uint64_t addrs[CL_MAX_ADDRS];
    size_t naddrs;
    const char *type;
    const char *allocator_layout;   /* --allocator-layout, or NULL */
    size_t max_paths;
    bool full;                      /* --full: text lines are never cut */
    bool quiet;                     /* --quiet: no progress lines */
    bool allocator_only;            /* dump --allocator-only */
    const char *output;             /* snapshot -o FILE */
    const char *torch_snapshot;     /* blocks --torch-snapshot FILE */
    const char *html;               /* summary, blocks --html FILE */
    const char *files[CL_MAX_TARGETS];   /* diff A [B], merge A B...: snapshot files */
    size_t nfiles;
    double interval;                /* watch --interval seconds */
    size_t count;                   /* watch --count: inspections, 0 until the process ends */
    struct cl_tensor_filter tensor_filter;
    struct cl_block_filter block_filter;
    struct py_walk_options walk;
};

/* The usage text: commands, then target options when with_target, then the others, into out
 * (cap bytes, CL_USAGE_CAP is enough). Returns its length, as snprintf does. */
#define CL_USAGE_CAP 8192
size_t cl_command_usage(bool with_target, char *out, size_t cap);

/* What cl_command_parse returns besides 0 and CL_E_USAGE. */
enum { CL_PARSE_HELP = -1, CL_PARSE_VERSION = -2 };

/* Parses argv[first..argc): options and (when want_command) the command name. Target options
 * are refused unless allow_target. Returns 0, CL_E_USAGE, CL_PARSE_HELP or CL_PARSE_VERSION. */
int cl_command_parse(int argc, char **argv, int first, bool want_command, bool allow_target,
                     struct cl_command_line *cl, struct cl_error *err);

/* The names (without --) of the options that apply to command, target options only when
 * with_target, help and version left out: at most cap of them into out; returns how many. For
 * completion in the gdb plugin. */
size_t cl_command_options(const char *command, bool with_target, const char **out, size_t cap);
/* The values an option takes from a fixed set (device: cpu, cuda, all; state: all, allocated,
 * free), NULL-terminated; NULL for an option whose values are open (numbers, names, files). */
const char *const *cl_option_values(const char *option);

/* Whether the command line names several targets (several --pid or --core, or --children). */
bool cl_command_many(const struct cl_command_line *cl);

/* CL_E_USAGE when an option given does not apply to cl->command (--top on tensors), else 0. The
 * gdb plugin sets the command after parsing; cl_command_run asks again. */
int cl_command_applicable(const struct cl_command_line *cl, struct cl_error *err);

#endif
