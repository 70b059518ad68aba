/* One command over several targets (repeatable --pid and --core, --children PID): each target
 * read by a worker process of its own, as many at a time as there are CPUs, then every report
 * under a heading that names its rank, in rank order, and for summary and snapshot the ranks
 * side by side (engine/ranks.h). A worker per target keeps each target's stop, copy and walk
 * apart: one that fails or goes away costs only its own report. */
#ifndef CULEAK_ENGINE_MULTI_H
#define CULEAK_ENGINE_MULTI_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/cmdline.h"

/* 0 when every target's command succeeded, else the first failure's status in rank order
 * (err says which target). *written tells whether the reports were written (those of the targets
 * that failed say why): false when nothing could start (no such children, no temporary
 * folder), and then the error is the whole answer. */
int cl_command_run_targets(const struct cl_command_line *cli, FILE *out, bool *written,
                           struct cl_error *err);

#endif
