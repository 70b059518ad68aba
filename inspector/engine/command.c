#include "engine/command.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/inspect.h"
#include "util/notes.h"
#include "util/output.h"
#include "util/spill.h"

/* What a model is called in the note that says a report goes without it. */
static const char *model_name(unsigned model)
{
    return model == CL_MODEL_HEAP      ? "the Python objects"
           : model == CL_MODEL_HOLDERS ? "tensors"
                                       : "the CUDA allocator";
}

/* Whether the process can have the model at all: no tensors without torch, no allocator without
 * libc10_cuda. A report says it goes without a model only where one could have been read. */
static bool could_have(const struct cl_session *s, unsigned model)
{
    if (model == CL_MODEL_HOLDERS)
        return s->torch.loaded;
    if (model == CL_MODEL_ALLOCATOR)
        return cl_symbols_module_named(s->symbols, "libc10_cuda") != NULL;
    return true;
}

/* Builds one model into m; 0 or the session's status. */
static int build(const struct cl_command_line *cli, struct cl_session *s, unsigned model,
                 struct cl_models *m, struct cl_error *err)
{
    if (model == CL_MODEL_HEAP)
        return cl_session_heap(s, &cli->walk, &m->heap, err);
    if (model == CL_MODEL_ALLOCATOR)
        return cl_session_allocator(s, cli->allocator_layout, &m->allocator, err);
    bool given[] = {cli->given & CL_OPTION_BIT(CL_O_DOMINANT),
                    cli->given & CL_OPTION_BIT(CL_O_SPREAD),
                    cli->given & CL_OPTION_BIT(CL_O_DEPTH)};
    struct cl_drill_options drill = {given[0] ? cli->drill.dominant_pct : CL_DRILL_DOMINANT_PCT,
                                     given[1] ? cli->drill.spread : CL_DRILL_SPREAD,
                                     given[2] ? cli->drill.depth : CL_DRILL_DEPTH};
    int rc = cl_session_holders(s, &cli->walk, cli->allocator_layout, &drill, &m->holders, err);
    if (!rc)
        m->tensors = &s->tensors;
    return rc;
}

/* The models of c's row into m: each one it needs (or the status of the first that fails), then
 * the one it uses, where it can be read (else a note of what the report lacks). */
static int models(const struct cl_command_line *cli, const struct cl_command_spec *c,
                  struct cl_session *s, char **notes, struct cl_models *m,
                  struct cl_error *uses_err, struct cl_error *err)
{
    *m = (struct cl_models){.target = s->target,
                            .symbols = s->symbols,
                            .python = &s->python,
                            .torch = &s->torch,
                            .rank = &s->rank,
                            .driver = &s->driver,
                            .notes = notes};
    if ((c->flags & CL_CMD_TORCH) && !s->torch.loaded)
        return cl_error_set(err, CL_E_UNSUPPORTED, "PyTorch is not loaded in this process");
    for (unsigned model = 1; model <= CL_MODEL_ALLOCATOR; model <<= 1) {
        int rc = c->needs & model ? build(cli, s, model, m, err) : 0;
        if (rc)
            return rc;
    }
    if (c->uses && could_have(s, c->uses) && build(cli, s, c->uses, m, uses_err)) {
        if (s->target->gone)
            return cl_target_went_away(s->target, err);
        m->unread = uses_err->msg;
        cl_note_add(m->notes, "%s could not be read (%s): %s", model_name(c->uses), uses_err->msg,
                    c->without);
    }
    /* Models built along the way are the report's too (the heap under the holders, the
     * allocator that sizes their CUDA storages). */
    if (s->heap_built)
        m->heap = &s->heap;
    if (s->allocator_built)
        m->allocator = &s->allocator;
    return 0;
}

/* Every model's notes, as the session holds them, and this run's own. */
static void note_lists(struct cl_session *s, char **notes, struct cl_models *m)
{
    char **lists[CL_REPORT_NOTE_LISTS] = {
        &s->target->warnings,
        notes,
        s->heap_built ? &s->heap.warnings : NULL,
        s->tensors_built ? &s->tensors.warnings : NULL,
        s->allocator_built ? &s->allocator.warnings : NULL,
        s->holders_built ? &s->holders.warnings : NULL,
    };
    memcpy(m->note_lists, lists, sizeof lists);
}

/* Builds c's models and runs it on them, writing to out. */
static int run(const struct cl_command_line *cli, const struct cl_command_spec *c,
               struct cl_session *s, FILE *out, struct cl_error *err)
{
    char *notes = NULL;
    struct cl_models m;
    struct cl_error uses_err;
    int rc = models(cli, c, s, &notes, &m, &uses_err, err);
    if (!rc) {
        note_lists(s, &notes, &m);
        rc = c->run(cli, &m, out, err);
    }
    free(notes);
    return rc;
}

/* Runs c on s: the report to out, held back while the process may still go away. */
static int run_held(const struct cl_command_line *cli, const struct cl_command_spec *c,
                    struct cl_session *s, FILE *out, struct cl_error *err)
{
    /* Nothing is printed from a process that went away during the reads, also by commands that
     * print as they read (check-layout): the report is held back until the reads are done, in a
     * spill file (a JSON report of every tensor of a leaking job runs to hundreds of megabytes),
     * in memory where none can be made. A core or a dump cannot go away: its report goes out as
     * it is made, not written, read and written again. */
    if (s->target->kind == CL_TARGET_CORE || s->target->kind == CL_TARGET_DUMP)
        return run(cli, c, s, out, err);
    char *report = NULL;
    size_t len = 0;
    FILE *spill = cl_spill_open();
    FILE *held = spill ? spill : open_memstream(&report, &len);
    if (!held)
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    int rc = run(cli, c, s, held, err);
    if (s->target->gone)
        rc = cl_target_went_away(s->target, err);
    else if (spill && (ferror(spill) || (!cl_spill_copy(spill, out) && ferror(spill))) && !rc)
        rc = cl_error_set(err, CL_E_IO, "cannot hold the report in a file of %s: %s", cl_tmp_dir(),
                          strerror(errno));
    if (fclose(held) && !rc)
        rc = cl_error_set(err, CL_E_INTERNAL, "out of memory");
    if (!spill && report && !s->target->gone)
        fwrite(report, 1, len, out);
    free(report);
    return rc;
}

/* -o FILE: the report goes to FILE, made whole, instead of out; a row that writes the file
 * itself (snapshot) is left to it. */
static bool to_file(const struct cl_command_line *cli, const struct cl_command_spec *c)
{
    return cli->output && !(c->flags & CL_CMD_OWN_OUTPUT);
}

int cl_command_run(const struct cl_command_line *cli, struct cl_session *s, FILE *out,
                   struct cl_error *err)
{
    const struct cl_command_spec *c = cl_command_find(cli->command);
    if (!c || !c->run)
        return cl_error_set(err, CL_E_USAGE, "%s '%s' does not run on a target here",
                            c ? "the command" : "unknown command",
                            cli->command ? cli->command : "");
    if (cl_command_applicable(cli, err))
        return CL_E_USAGE;
    if (!to_file(cli, c))
        return run_held(cli, c, s, out, err);
    struct cl_output o;
    int rc = cl_output_open(cli->output, &o, err);
    if (rc)
        return rc;
    if ((rc = run_held(cli, c, s, o.f, err)))
        cl_output_abort(&o);
    return rc ? rc : cl_output_commit(&o, err);
}

struct cl_command_line cl_command_quiet(const struct cl_command_line *cli)
{
    struct cl_command_line quiet = *cli;
    quiet.output = NULL;
    quiet.torch_snapshot = cli->torch_snapshot ? "/dev/null" : NULL;
    quiet.html = cli->html ? "/dev/null" : NULL;
    return quiet;
}

static int run_inspected(void *arg, struct cl_session *s, FILE *out, bool scout,
                         struct cl_error *err)
{
    struct cl_command_line quiet = cl_command_quiet(arg);
    return cl_command_run(scout ? &quiet : arg, s, out, err);
}

int cl_command_inspect(const struct cl_command_line *cli, FILE *out, struct cl_error *err)
{
    struct cl_inspection how = {run_inspected, (void *)cli, cli->walk.progress};
    return cl_inspect(&cli->session, &how, out, err);
}

bool cl_command_offline(const struct cl_command_line *cli)
{
    const struct cl_command_spec *c = cl_command_find(cli->command);
    return c && c->run_files && cli->nfiles >= c->run_files_at;
}

int cl_command_run_offline(const struct cl_command_line *cli, FILE *out, struct cl_error *err)
{
    const struct cl_command_spec *c = cl_command_find(cli->command);
    if (!to_file(cli, c))
        return c->run_files(cli, out, err);
    struct cl_output o;
    int rc = cl_output_open(cli->output, &o, err);
    if (rc)
        return rc;
    if ((rc = c->run_files(cli, o.f, err)))
        cl_output_abort(&o);
    return rc ? rc : cl_output_commit(&o, err);
}
