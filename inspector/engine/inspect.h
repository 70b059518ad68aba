/* One inspection of a target from the command line, such that a live process is stopped about as
 * long whatever memory it holds that no walk reads (CPU tensors, pinned buffers, datasets): where
 * its copy would stop it long, a scout walks it first as it runs, and the copy made at the stop
 * leaves out what the scout did not read. The report is still that of the instant it stopped: a
 * page left out is never read from the running process, and where the walk needs one, the
 * inspection is done again with the process stopped throughout. */
#ifndef CULEAK_ENGINE_INSPECT_H
#define CULEAK_ENGINE_INSPECT_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/session.h"

/* What an inspection does with its session: its reports into out. A scout's run (scout true) has
 * its output dropped and must write nothing elsewhere either. */
struct cl_inspection {
    int (*run)(void *arg, struct cl_session *s, FILE *out, bool scout, struct cl_error *err);
    void *arg;
    FILE *progress; /* a terminal, told when a scout runs first (the walk's progress shows twice) */
};

/* Opens opt's target and runs how on it, scouted and redone as above: the status of the run (or
 * of the open). */
int cl_inspect(const struct cl_session_options *opt, const struct cl_inspection *how, FILE *out,
               struct cl_error *err);

#endif
