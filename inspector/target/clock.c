#include "target/clock.h"

#include <stdlib.h>

const struct cl_clock_pair *cl_target_clock(struct cl_target *t, enum cl_clock_source *source)
{
    if (!t->clock) {   /* a dump's own reading is set when it is opened */
        t->clock = malloc(CL_CLOCK_PAIRS * sizeof *t->clock);
        if (t->clock && !cl_clock_measure(t->clock)) {
            free(t->clock);
            t->clock = NULL;
        }
        /* a dump without a reading of its own is read like its core */
        bool elsewhere = t->source_kind == CL_TARGET_CORE || t->kind == CL_TARGET_DUMP;
        t->clock_source = !t->clock ? CL_CLOCK_NONE : elsewhere ? CL_CLOCK_READER : CL_CLOCK_TARGET;
    }
    *source = t->clock_source;
    return t->clock;
}
