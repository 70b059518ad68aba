#include "engine/inspect.h"

#include <stdlib.h>

#include "target/freeze.h"
#include "util/notes.h"

/* Runs how with its output dropped, on a scout (s->target->scouting), and what its walk read
 * into out: false where that is not known (then the copy leaves nothing out). */
static bool scout(struct cl_session *s, const struct cl_inspection *how, struct cl_scouted *out)
{
    FILE *sink = fopen("/dev/null", "w");
    if (!sink)
        return false;
    struct cl_error ignored; /* the run after the stop meets it again, and reports it */
    (void)how->run(how->arg, s, sink, true, &ignored);
    fclose(sink);
    return !s->target->gone && cl_target_scouted(s->target, out) == 0;
}

/* For tests only: a shell command run between the scout and the stop, which changes the process
 * where the scout saw it (tests/integration/test_scout.py). */
static void after_scout(void)
{
    const char *cmd = getenv("CULEAK_AFTER_SCOUT");
    if (cmd && *cmd)
        (void)system(cmd);
}

int cl_inspect(const struct cl_session_options *opt, const struct cl_inspection *how, FILE *out,
               struct cl_error *err)
{
    struct cl_session_options o = *opt;
    struct cl_scouted scouted = {0};
    struct cl_session *s = NULL;
    o.open.may_scout = true;
    int rc = cl_session_open(&o, &s, err);
    if (!rc && s->target->scouting) {
        if (how->progress)
            fprintf(how->progress,
                    "culeak: walking process %d as it runs first, to copy only what the walk "
                    "needs when it stops it\n",
                    s->target->pid);
        bool learned = scout(s, how, &scouted);
        cl_session_close(s);
        s = NULL;
        after_scout();
        o.open.may_scout = false;
        o.open.scouted = learned ? &scouted : NULL;
        rc = cl_session_open(&o, &s, err);
    }
    if (!rc)
        rc = how->run(how->arg, s, out, false, err);
    if (s && s->target->missed) {
        struct cl_error why = s->target->gone_why;
        cl_session_close(s);
        s = NULL;
        o.open.scouted = NULL;
        if (!(rc = cl_session_open(&o, &s, err))) {
            s->target->redone = true;
            cl_note_add(&s->target->warnings,
                        "inspected a second time, without leaving memory out of the copy: %s",
                        why.msg);
            rc = how->run(how->arg, s, out, false, err);
        }
    }
    cl_session_close(s);
    cl_scouted_free(&scouted);
    return rc;
}
