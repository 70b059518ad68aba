/* `culeak dump`: reads a live process or core the way every command does, keeping each page read
 * and each symbol answer, and writes them to one file (target/dumpfile.h) that every command
 * reads with --dump FILE, anywhere, without the target's libraries. */
#ifndef CULEAK_ENGINE_DUMP_H
#define CULEAK_ENGINE_DUMP_H

#include <stdio.h>

#include "engine/cmdline.h"

/* Dumps the target of cli (--pid or --core) to cli->output; what it wrote goes to log. */
int cl_command_dump(const struct cl_command_line *cli, FILE *log, struct cl_error *err);

#endif
