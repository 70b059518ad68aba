#include "engine/dump.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cpython/redact.h"
#include "cpython/statics.h"
#include "engine/command.h"
#include "engine/table.h"
#include "target/dump.h"
#include "target/pagerec.h"
#include "target/spool.h"
#include "util/output.h"

#define MAX_PATHS 64   /* refs --max-paths' maximum (cmdline.c): every path refs may print */

/* The commands whose reads the dump must hold (CL_CMD_DUMPED in the command table) are run as
 * they would be, their output dropped. Each model is built once (the session caches it; the
 * walk's progress, on a terminal, shows once); the reports then read what they print lazily
 * (names, dict keys), which is why they are run too, in each output form they have; blocks also
 * with --torch-snapshot, which reads the allocation stacks. refs is exercised apart (below): no
 * one command line prints every path it can. */
static int run_quietly(const struct cl_command_line *cli, struct cl_session *s, const char *name,
                       bool json)
{
    struct cl_command_line c = {.command = name,
                                .json = json,
                                .walk = cli->walk,
                                .tensor_filter = {.device = -1},
                                .block_filter = {.device = -1},
                                .torch_snapshot = strcmp(name, "blocks") ? NULL : "/dev/null"};
    FILE *sink = fopen("/dev/null", "w");
    if (!sink)
        return CL_E_INTERNAL;
    struct cl_error ignored;   /* a command that fails here fails the same way on the dump */
    (void)cl_command_run(&c, s, sink, &ignored);
    fclose(sink);
    return 0;
}

/* References into each node, saturating at 2: a node with at most one (its own tree edge) has
 * only the path py_heap_path gives, so py_heap_paths' search for other referrers, which costs
 * a pass over the root edges, is spent only where another path can exist. NULL on failure. */
static uint8_t *in_degrees(const struct py_heap *h)
{
    uint8_t *in = calloc(h->n ? h->n : 1, 1);
    for (uint32_t e = 0, ids = py_edge_ids(h); in && e < ids; e++) {
        uint32_t dst = py_edge_dst(h, e);
        if (dst < h->n && in[dst] < 2)
            in[dst]++;
    }
    for (size_t k = 0; in && k < h->nroot_edges; k++)
        if (h->root_edges[k].dst < h->n && in[h->root_edges[k].dst] < 2)
            in[h->root_edges[k].dst]++;
    return in;
}

/* What refs can print beyond the models: up to MAX_PATHS paths of any object, and the
 * qualified name of any type (a bare --type that names several). */
static int exercise_refs(const struct cl_command_line *cli, struct cl_session *s,
                         struct cl_error *err)
{
    struct py_heap *h;
    if (cl_session_heap(s, &cli->walk, &h, err))
        return s->target->gone ? cl_target_went_away(s->target, err) : 0;
    char(*paths)[4096] = malloc(MAX_PATHS * sizeof *paths);
    uint8_t *in = in_degrees(h);
    bool *named = calloc(h->objects.ntypes + 1, sizeof *named);   /* by type index */
    int rc = paths && in && named ? 0 : CL_E_INTERNAL;
    for (uint32_t i = 0; !rc && i < h->n && !s->target->gone; i++) {
        /* read for the dump, not printed */
        if (in[i] > 1)
            (void)py_heap_paths(h, i, MAX_PATHS, paths);
        else
            (void)py_heap_path(h, i, paths[0], sizeof paths[0]);
        if (!named[h->nodes[i].type]) {
            named[h->nodes[i].type] = true;
            py_type_qualified_name(h, py_node_type(h, i), paths[0], sizeof paths[0]);
        }
    }
    for (size_t k = 0; !rc && k < h->nstatics_left; k++) /* the static words refs names */
        py_static_name(h, h->statics_left[k].at, paths[0], sizeof paths[0]);
    free(paths);
    free(in);
    free(named);
    if (rc)
        return cl_error_set(err, rc, "out of memory");
    return cl_target_went_away(s->target, err);
}

static int exercise(const struct cl_command_line *cli, struct cl_session *s, struct cl_error *err)
{
    size_t n;
    const struct cl_command_spec *c = cl_commands(&n);
    for (size_t i = 0; i < n; i++)
        for (int json = 0; json < 2 && (c[i].flags & CL_CMD_DUMPED); json++) {
            if (json && !c[i].schema)
                continue;
            if (run_quietly(cli, s, c[i].name, json))
                return cl_error_set(err, CL_E_INTERNAL, "cannot open /dev/null: %s",
                                    strerror(errno));
            if (s->target->gone)
                return cl_target_went_away(s->target, err);
        }
    return exercise_refs(cli, s, err);
}

/* A dump holds what the job held (its strings, tokens, file names): root writes it for the job's
 * user, the owner of the core or of the live process (/proc/PID), so that it is theirs as their
 * core would be. Anyone else owns what they write, as the job's user or root already could. */
struct job_owner {
    bool known;
    uid_t uid;
    gid_t gid;
};

static struct job_owner owner_of(const char *core, int pid)
{
    char proc[32];
    struct stat st;
    snprintf(proc, sizeof proc, "/proc/%d", pid);
    if ((!core && pid <= 0) || stat(core ? core : proc, &st) != 0)
        return (struct job_owner){0};
    return (struct job_owner){true, st.st_uid, st.st_gid};
}

static int write_file(struct cl_session *s, const char *path, struct job_owner owner,
                      const char *open_notes, FILE *log, struct cl_error *err)
{
    struct cl_bytes_out sym = {0};
    cl_symbols_write(s->symbols, &sym);
    if (sym.oom) {
        cl_out_free(&sym);
        return cl_error_set(err, CL_E_INTERNAL,
                            "out of memory: the symbol answers could not all "
                            "be kept for the dump");
    }
    struct cl_output o;
    int rc = cl_output_open(path, &o, err);
    if (rc) {
        cl_out_free(&sym);
        return rc;
    }
    if (owner.known && geteuid() == 0)
        (void)!fchown(fileno(o.f), owner.uid, owner.gid);   /* root's file is no worse */
    uint64_t size = 0;
    rc = cl_dump_write(s->target, open_notes, sym.p, sym.len, o.f, &size, err);
    if (rc)
        cl_output_abort(&o);   /* half a dump would only be refused later */
    else
        rc = cl_output_commit(&o, err);
    if (!rc)
        fprintf(log,
                "culeak: dump: %zu pages read, %zu symbol answers; %s is %llu bytes "
                "(%.1f MiB)\n",
                s->target->record->n, s->symbols->rec.n, path, (unsigned long long)size,
                (double)size / (1024.0 * 1024.0));
    cl_out_free(&sym);
    return rc;
}

static void zero_kept(void *record, uint64_t addr, uint64_t len)
{
    cl_pagerec_zero(record, addr, len);
}

/* --redact: the text cpython/redact.h says must not leave the machine is zeros in the pages
 * kept; the dump says so, and its str reader prints `<redacted: N characters>` for it. */
static int redact(const struct cl_command_line *cli, struct cl_session *s, FILE *log,
                  struct cl_error *err)
{
    struct py_heap *h;
    int rc = cl_session_heap(s, &cli->walk, &h, err);
    if (rc)
        return rc;
    uint64_t bytes, objects = py_redact(h, zero_kept, s->target->record, &bytes);
    s->target->redacted = true;
    fprintf(log,
            "culeak: dump: --redact: the contents of %llu strs and bytes objects (%llu "
            "bytes) left out\n",
            (unsigned long long)objects, (unsigned long long)bytes);
    return 0;
}

/* The dump of an open target t (closed here). */
static int dump_target(const struct cl_command_line *cli, struct cl_target *t,
                       struct job_owner owner, FILE *log, struct cl_error *err)
{
    int rc;
    /* The target's own warnings, before symbols and the runtimes add theirs: a dump repeats
     * those by answering the same questions. */
    char *open_notes = t->warnings ? strdup(t->warnings) : NULL;
    if (t->warnings && !open_notes) {
        cl_target_close(t);
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    }
    t->allocator_only = cli->allocator_only;   /* the session then refuses the heap */
    struct cl_session *s;
    if (!(rc = cl_session_open_target(t, &s, err))) {
        if (!(rc = exercise(cli, s, err)) &&
            (!cli->redact || t->allocator_only || !(rc = redact(cli, s, log, err))))
            rc = write_file(s, cli->output, owner, open_notes, log, err);
        cl_session_close(s);
    }
    free(open_notes);
    return rc;
}

/* --core -: the core on standard input (core_pattern's pipe, or coredumpctl dump), spooled
 * beside the dump (target/spool.h), at most --copy-limit bytes, else half the free space there.
 * With --pid (core_pattern's %P), the crashing process's files are found through its root
 * (/proc/PID/root, held open while the stream lasts: the process is gone once it ends), unless
 * --sysroot says where. */
static int spool_stdin(const struct cl_command_line *cli, struct cl_spool *spool, int *rootfd,
                       char root[32], struct cl_open_options *o, FILE *log, struct cl_error *err)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", cli->output);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        slash[slash == dir] = '\0';   /* "/x" is in "/" */
    if (cli->session.pid > 0 && !o->locator.sysroot) {
        snprintf(root, 32, "/proc/%d/root", cli->session.pid);
        if ((*rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
            return cl_error_set(err, errno == EACCES ? CL_E_PERMISSION : CL_E_NO_PROCESS,
                                "cannot open %s, where the crashing process's files are: %s", root,
                                strerror(errno));
        snprintf(root, 32, "/proc/self/fd/%d", *rootfd);
        o->locator.sysroot = root;
    }
    struct statvfs fs;
    uint64_t limit = o->copy_limit            ? o->copy_limit
                     : statvfs(dir, &fs) == 0 ? (uint64_t)fs.f_bavail * fs.f_frsize / 2
                                              : 0;
    int rc = cl_spool_stream(STDIN_FILENO, dir, limit, spool, err);
    if (!rc)
        fprintf(log, "culeak: dump: a core of %.1f MiB on standard input, %.1f MiB of it data\n",
                (double)spool->size / (1024.0 * 1024.0), (double)spool->stored / (1024.0 * 1024.0));
    return rc;
}

int cl_command_dump(const struct cl_command_line *cli, FILE *log, struct cl_error *err)
{
    struct cl_open_options o = cli->session.open;
    o.record = true;
    const char *core = cli->session.core;
    bool stream = core && strcmp(core, "-") == 0;
    /* the crashing process's user, before its stream ends and it is gone */
    struct job_owner owner = stream ? owner_of(NULL, cli->session.pid) : (struct job_owner){0};
    struct cl_spool spool = {.fd = -1};
    int rootfd = -1, rc = 0;
    char root[32];
    if (stream && !(rc = spool_stdin(cli, &spool, &rootfd, root, &o, log, err)))
        core = spool.path;
    struct cl_target *t = NULL;
    if (!rc)
        rc = core ? cl_target_open_core(core, &o, &t, err)
                  : cl_target_open_live(cli->session.pid, &o, &t, err);
    if (!rc && !stream)
        owner = owner_of(core, t->pid);
    rc = rc ? rc : dump_target(cli, t, owner, log, err);
    cl_spool_close(&spool);
    if (rootfd >= 0)
        close(rootfd);
    return rc;
}
