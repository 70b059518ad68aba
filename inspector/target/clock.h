/* The clock reading a target's trace times are converted with (util/clock.h): where the process
 * runs, the rate its TSC ticks at. A live process (or gdb's) is read on its own machine, so the
 * reading is measured here, once; `culeak dump` keeps that reading, so a dump read anywhere
 * converts as on that machine; a core carries none, so it is measured here too, right only when
 * the core was written on this machine since it last booted (the caller says so). */
#ifndef CULEAK_TARGET_CLOCK_H
#define CULEAK_TARGET_CLOCK_H

#include "target/target.h"
#include "util/clock.h"

enum cl_clock_source {
    CL_CLOCK_NONE,      /* no TSC here (not x86-64) */
    CL_CLOCK_TARGET,    /* measured on the target's machine: live, gdb's, a dump of either */
    CL_CLOCK_READER,    /* measured here for a core, or a dump of one */
};

/* The reading for t (CL_CLOCK_PAIRS pairs, owned by t), measured on the first call; NULL when
 * there is none. */
const struct cl_clock_pair *cl_target_clock(struct cl_target *t, enum cl_clock_source *source);

#endif
