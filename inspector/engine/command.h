/* Running a command of the table (engine/table.h) on an open session: its models built first
 * (those it needs, and those it uses where they can be read), then its run function, writing to
 * a stream. The CLI, the gdb plugin and the Python package differ only in where the session
 * comes from and where the output goes. */
#ifndef CULEAK_ENGINE_COMMAND_H
#define CULEAK_ENGINE_COMMAND_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/cmdline.h"
#include "engine/session.h"
#include "engine/table.h"

/* Opens cli's target and runs cli->command on it (engine/inspect.h: scouted and redone where
 * that shortens a live process's stop), writing its report to out. */
int cl_command_inspect(const struct cl_command_line *cli, FILE *out, struct cl_error *err);
/* cli as a scout runs it: the files it names (-o, --html, --torch-snapshot) not written. */
struct cl_command_line cl_command_quiet(const struct cl_command_line *cli);
/* Runs cli->command on s, writing its report to out. 0, or a status with err set. */
int cl_command_run(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                   struct cl_error *err);

/* Whether the parsed command runs on its snapshot files alone (diff A B, merge), and runs it. */
bool cl_command_offline(const struct cl_command_line *cli);
int cl_command_run_offline(const struct cl_command_line *cli, FILE *out, struct cl_error *err);

#endif
