/* The command line both front ends parse: options (engine/options.h) and their values into a
 * struct cl_command_line, with the checks that each applies to the command (engine/table.h) and
 * is given once. */
#ifndef CULEAK_ENGINE_CMDLINE_H
#define CULEAK_ENGINE_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpython/heap.h"
#include "engine/options.h"
#include "engine/session.h"
#include "report/blocks.h"
#include "report/tensors.h"

#define CL_MAX_LIB_DIRS 32
#define CL_MAX_ADDRS 256
#define CL_MAX_NOTE 1000            /* dump --note's characters */
#define CL_MAX_TARGETS 1024         /* --pid and --core each; the snapshot files merge reads */

struct cl_command_line {
    const char *command;
    uint64_t given;                 /* the options given: CL_OPTION_BIT of each */
    struct cl_session_options session;   /* target options: the CLI's only; the first target */
    /* Several targets (engine/multi.h): every --pid and --core given, and --children PID. */
    int pids[CL_MAX_TARGETS];
    size_t npids;
    const char *cores[CL_MAX_TARGETS];
    size_t ncores;
    int children_of;
    uint64_t memory_limit;          /* --memory-limit: bytes; 0: half the memory available */
    const char *lib_dirs[CL_MAX_LIB_DIRS];
    bool json;
    size_t top;
    uint64_t addrs[CL_MAX_ADDRS];
    size_t naddrs;
    const char *type;
    const char *allocator_layout;   /* --allocator-layout, or NULL */
    size_t max_paths;
    bool referents;                 /* refs --referents */
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
    uint64_t dump_on_growth;        /* watch --dump-on-growth: bytes; 0: never */
    bool redact;                    /* dump --redact */
    const struct cl_since *since;   /* summary: what grew since a snapshot (catch-oom's report) */
    struct cl_drill_options drill;  /* summary --depth, --dominant, --spread */
    struct {                        /* culeak-break-step, in gdb */
        const char *symbol;         /* --symbol, or NULL: the autograd engine's execute */
        size_t every;               /* --every: report every Nth hit (0: each) */
        uint64_t stop_on_growth;    /* --stop-on-growth: bytes, 0: never stop */
        uint64_t warmup;            /* --warmup: steps before growth counts */
        bool warmup_given;          /* else: until every optimizer has state, at most 10 */
        bool off;                   /* --off */
    } steps;
    struct cl_tensor_filter tensor_filter;
    struct cl_block_filter block_filter;
    struct py_walk_options walk;
};

/* Which front end a usage text or an option list is for: the CLI names its target with
 * options, gdb's is gdb's own. */
enum cl_front { CL_FRONT_CLI, CL_FRONT_GDB };

/* The usage text: the front end's commands, then its options by group, into out (cap bytes,
 * CL_USAGE_CAP is enough). Returns its length, as snprintf does. */
#define CL_USAGE_CAP 12288
size_t cl_command_usage(enum cl_front front, char *out, size_t cap);

/* What cl_command_parse returns besides 0 and CL_E_USAGE. */
enum { CL_PARSE_HELP = -1, CL_PARSE_VERSION = -2 };

/* Parses argv[first..argc): options and (when want_command) the command name. Target options
 * are refused unless allow_target (in gdb, which sets cl->command itself and then asks
 * cl_command_applicable). Returns 0, CL_E_USAGE, CL_PARSE_HELP or CL_PARSE_VERSION. */
int cl_command_parse(int argc, char **argv, int first, bool want_command, bool allow_target,
                     struct cl_command_line *cl, struct cl_error *err);

/* The names (without --) of the options that apply to command in the front end, help and
 * version left out: at most cap of them into out; returns how many. For completion in gdb. */
size_t cl_command_options(const char *command, enum cl_front front, const char **out, size_t cap);

/* Whether the command line names several targets (several --pid or --core, or --children). */
bool cl_command_many(const struct cl_command_line *cl);

/* CL_E_USAGE when an option given does not apply to cl->command (--top on tensors), else 0. The
 * gdb plugin sets the command after parsing; cl_command_run asks again. */
int cl_command_applicable(const struct cl_command_line *cl, struct cl_error *err);

#endif
