/* The commands both front ends run: a parsed command line (engine/cmdline.h) run on an open
 * session, writing to a stream. The CLI and the gdb plugin differ only in where the session
 * comes from and where the output goes. */
#ifndef CULEAK_ENGINE_COMMAND_H
#define CULEAK_ENGINE_COMMAND_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/cmdline.h"
#include "engine/session.h"

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
