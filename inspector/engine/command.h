/* The commands both front ends run: parsing a command line into options, and running a command
 * on an open session, writing to a stream. The CLI and the gdb plugin differ only in where the
 * session comes from and where the output goes. */
#ifndef CULEAK_ENGINE_COMMAND_H
#define CULEAK_ENGINE_COMMAND_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/session.h"
#include "report/blocks.h"
#include "report/tensors.h"

#define CL_MAX_LIB_DIRS 32
#define CL_MAX_ADDRS 256

struct cl_command_line {
    const char *command;
    struct cl_session_options session;   /* target options: the CLI's only */
    const char *lib_dirs[CL_MAX_LIB_DIRS];
    bool json;
    size_t top;
    uint64_t addrs[CL_MAX_ADDRS];
    size_t naddrs;
    const char *type;
    const char *allocator_layout;   /* --allocator-layout, or NULL */
    size_t max_paths;
    bool full;                      /* --full: text lines are never cut */
    const char *output;             /* snapshot -o FILE */
    const char *files[2];           /* diff A [B]: snapshot files */
    size_t nfiles;
    double interval;                /* watch --interval seconds */
    size_t count;                   /* watch --count: inspections, 0 until the process ends */
    struct cl_tensor_filter tensor_filter;
    struct cl_block_filter block_filter;
    struct py_walk_options walk;
};

/* The usage text: commands, then target options when with_target, then the others. */
const char *cl_command_usage(bool with_target);

/* Parses argv[first..argc): options and (when want_command) the command name. Target options
 * are refused unless allow_target. Returns 0, CL_E_USAGE, or -1 for --help (usage printed) and
 * -2 for --version. */
int cl_command_parse(int argc, char **argv, int first, bool want_command, bool allow_target,
                     struct cl_command_line *cl, struct cl_error *err);

/* Runs cl->command on s, writing its report to out. 0, or a status with err set. */
int cl_command_run(const struct cl_command_line *cl, struct cl_session *s, FILE *out,
                   struct cl_error *err);

/* Whether name is a command, and whether it needs the Python heap walked. */
bool cl_command_known(const char *name);

/* Whether the parsed command runs without a target (diff of two snapshot files), and runs it. */
bool cl_command_offline(const struct cl_command_line *cl);
int cl_command_run_offline(const struct cl_command_line *cl, FILE *out, struct cl_error *err);

/* watch: inspects the target every cl->interval seconds (cl->count times, or until it ends),
 * printing what grew since the last inspection; the target runs in between. */
int cl_command_watch(const struct cl_command_line *cl, FILE *out, struct cl_error *err);

#endif
