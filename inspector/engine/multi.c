#include "engine/multi.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/command.h"
#include "engine/inspect.h"
#include "engine/ranks.h"
#include "engine/snapshot.h"
#include "report/info.h"
#include "report/json.h"
#include "target/children.h"
#include "util/meminfo.h"
#include "util/spill.h"
#include "util/vec.h"

struct target {
    int pid;                  /* a live process, or 0 */
    bool child;               /* found by --children, not named: skipped when it is no job */
    bool skipped;             /* ... and so it was, the reason in error */
    const char *core;         /* or a core */
    char dir[64];             /* the worker's files: meta, report, snapshot */
    uint64_t copy_need, graph_need;   /* what its copy and its graph may take (estimate) */
    uint64_t budget;          /* what it was given of the memory limit: need, or all of it */
    uint64_t copy_limit;      /* the copy its budget allows (live) */
    uint64_t max_objects;     /* the objects its budget allows */
    unsigned copy_threads;    /* its share of the CPUs */
    pid_t worker;
    int status;               /* the command's status in the worker */
    char error[512];
    struct cl_rank rank;
    struct cl_snapshot snap;
    bool has_snap;
};

static int collect(const struct cl_command_line *cli, struct target **v, size_t *n,
                   struct cl_error *err)
{
    size_t cap = 0;
    *v = NULL;
    *n = 0;
    for (size_t i = 0; i < cli->npids + cli->ncores; i++) {
        if (!CL_VEC_RESERVE(*v, *n, cap))
            return cl_error_set(err, CL_E_INTERNAL, "out of memory");
        struct target t = {0};
        if (i < cli->npids)
            t.pid = cli->pids[i];
        else
            t.core = cli->cores[i - cli->npids];
        (*v)[(*n)++] = t;
    }
    if (!cli->children_of)
        return 0;
    int *pids = malloc(CL_MAX_TARGETS * sizeof *pids);
    size_t found = pids ? cl_proc_children(cli->children_of, pids, CL_MAX_TARGETS) : 0;
    for (size_t i = 0; i < found && i < CL_MAX_TARGETS && *n < CL_MAX_TARGETS; i++) {
        if (!CL_VEC_RESERVE(*v, *n, cap))
            break;
        (*v)[(*n)++] = (struct target){.pid = pids[i], .child = true};
    }
    free(pids);
    if (!found)
        return cl_error_set(err, CL_E_NO_PROCESS,
                            "--children: process %d has no child "
                            "processes (or is not there)",
                            cli->children_of);
    return 0;
}

static bool wants_ranks(const struct cl_command_line *cli)
{
    const struct cl_command_spec *c = cl_command_find(cli->command);
    return c && (c->flags & CL_CMD_RANKS);
}

static FILE *file_in(const struct target *t, const char *name, const char *mode)
{
    char path[96];
    snprintf(path, sizeof path, "%s/%s", t->dir, name);
    return fopen(path, mode);
}

/* Why a child --children found is no rank to read for this command (a launcher's helper: the
 * resource tracker, a shell), into why; false when it is one. */
static bool not_a_rank(const struct cl_command_line *cli, const struct cl_session *s, int rc,
                       char *why, size_t cap)
{
    const struct cl_command_spec *c = cl_command_find(cli->command);
    bool torch = (c->flags & CL_CMD_TORCH) || (c->needs & (CL_MODEL_HOLDERS | CL_MODEL_ALLOCATOR));
    if (rc == CL_E_NOT_PYTHON)
        snprintf(why, cap, "not a Python process");
    else if (!rc && torch && !s->torch.loaded)
        snprintf(why, cap, "PyTorch is not loaded in it");
    else
        return false;
    return true;
}

/* Marks a skipped target in its meta: its worker exits 0. */
#define SKIPPED_CODE (-2)

/* A worker's inspection of its target (engine/inspect.h): the command, then for the comparison
 * a snapshot, and what the meta file says of them. */
struct worker {
    const struct cl_command_line *c;
    const struct target *t;
    bool opened;         /* a session was opened: its rank is known */
    struct cl_rank rank;
    bool skipped;        /* no rank to read for this command (not_a_rank) */
    char why[128];
};

static int inspect_target(void *arg, struct cl_session *s, FILE *out, bool scout,
                          struct cl_error *err)
{
    struct worker *w = arg;
    if (w->t->child && not_a_rank(w->c, s, 0, w->why, sizeof w->why)) {
        w->skipped = true;
        return 0;
    }
    w->opened = true;
    w->rank = s->rank;
    struct cl_command_line quiet = cl_command_quiet(w->c);
    int rc = cl_command_run(scout ? &quiet : w->c, s, out, err);
    struct cl_snapshot snap;
    struct cl_error ignored;
    if (!rc && wants_ranks(w->c) && !cl_snapshot_take(s, &w->c->walk, &snap, &ignored)) {
        FILE *f = scout ? NULL : file_in(w->t, "snapshot", "w");
        if (f) {
            cl_snapshot_write(f, &snap);
            fclose(f);
        }
        cl_snapshot_free(&snap);
    }
    return rc;
}

/* The worker: t's report into its report file, its rank and any error into meta, and for the
 * comparison a snapshot. Returns the exit status. */
static int work(const struct cl_command_line *cli, const struct target *t)
{
    struct cl_command_line c = *cli;
    c.session.pid = t->pid;
    c.session.core = t->core;
    c.walk.progress = NULL;   /* one terminal, many workers */
    c.session.open.copy_limit = t->copy_limit;
    c.session.open.copy_threads = t->copy_threads;
    if (!c.walk.max_objects)
        c.walk.max_objects = t->max_objects;
    struct cl_error err = {0};
    FILE *meta = file_in(t, "meta", "w"), *report = file_in(t, "report", "w");
    if (!meta || !report)
        return CL_E_IO;
    struct worker w = {.c = &c, .t = t};
    struct cl_inspection how = {inspect_target, &w, NULL};
    int rc = cl_inspect(&c.session, &how, report, &err);
    if (t->child && (w.skipped || (rc && not_a_rank(cli, NULL, rc, w.why, sizeof w.why)))) {
        fprintf(meta, "-1 -1 -1\n%d %s\n", SKIPPED_CODE, w.why);
        rc = 0;
    } else {
        if (w.opened)
            fprintf(meta, "%d %d %d\n", w.rank.rank, w.rank.local_rank, w.rank.world_size);
        if (rc) {
            fprintf(meta, "%s%d %s\n", w.opened ? "" : "-1 -1 -1\n", (int)err.code, err.msg);
            if (cli->json)
                cl_json_error_document(report, err.code, err.msg);
        }
    }
    fclose(meta);
    fclose(report);
    return rc;
}

/* Starts t's worker; false when fork fails. */
static bool start(const struct cl_command_line *cli, struct target *t)
{
    fflush(NULL);
    t->worker = fork();
    if (t->worker == 0)
        _exit(work(cli, t));
    return t->worker > 0;
}

/* Waits for any one worker and records its status; the memory its target was given. */
static uint64_t reap(struct target *v, size_t n)
{
    int status;
    pid_t done = wait(&status);
    for (size_t i = 0; done > 0 && i < n; i++)
        if (v[i].worker == done) {
            v[i].status = WIFEXITED(status) ? WEXITSTATUS(status) : CL_E_INTERNAL;
            v[i].worker = 0;
            return v[i].budget;
        }
    return 0;
}

/* What culeak takes reading any target beside the copy and the graph: the libraries' symbols
 * (torch's), the allocator's and the tensors' tables (about 100 MiB measured for a torch job). */
#define WORKER_BASE (128ull << 20)
#define FALLBACK_MEMORY_LIMIT (4ull << 30) /* where MemAvailable cannot be read */
/* The walk's graph takes 59 bytes an object (measured, docs/design.md); the smallest objects a
 * heap holds many of, floats and small ints, 24 to 32 bytes each. */
#define GRAPH_BYTES_PER_OBJECT 64
#define MIN_OBJECT_BYTES 24
/* A copy takes the memory no file backs, and the libraries' writable data besides */
#define COPY_SLACK (16ull << 20)

/* What reading t may take at most, known before it starts: a live process's copy (its memory no
 * file backs, a quarter more for what it writes before the stop, and the libraries' data) and
 * the graph of the objects that memory can hold, or a core's graph alone (a core is read through
 * the page cache, never copied; its size bounds its objects), beside culeak's own. */
static void estimate(struct target *t)
{
    struct stat st;
    uint64_t memory = t->pid                    ? cl_proc_anon_bytes(t->pid)
                      : stat(t->core, &st) == 0 ? (uint64_t)st.st_size
                                                : 0;
    t->copy_need = t->pid ? memory + memory / 4 + COPY_SLACK : 0;
    t->graph_need = memory / MIN_OBJECT_BYTES * GRAPH_BYTES_PER_OBJECT;
}

/* The memory reading t may take at most: its copy, its graph and culeak's own. */
static uint64_t need(const struct target *t)
{
    return WORKER_BASE + t->copy_need + t->graph_need;
}

/* t's share of the limit (all it needs, or the whole limit where it needs more) and what that
 * allows: past the base, the copy and the graph in the proportion it needs them (the copy at
 * most copy_cap, where --copy-limit is given), and as many objects as the graph's share holds. */
static void give(struct target *t, uint64_t budget, uint64_t copy_cap)
{
    uint64_t own = budget > WORKER_BASE ? budget - WORKER_BASE : budget / 2;
    uint64_t want = t->copy_need + t->graph_need;
    uint64_t copy = want ? (uint64_t)((double)own * (double)t->copy_need / (double)want) : 0;
    if (copy_cap && copy > copy_cap)
        copy = copy_cap;
    t->budget = budget;
    t->copy_limit = t->pid && !copy ? 1 : copy; /* 0 would mean: copy nothing */
    t->max_objects = (own - copy) / GRAPH_BYTES_PER_OBJECT;
    if (!t->max_objects)
        t->max_objects = 1;
}

/* What the worker left: its rank, its error, its snapshot. */
static void gather(struct target *t, struct cl_error *ignored)
{
    FILE *meta = file_in(t, "meta", "r");
    t->rank = (struct cl_rank){-1, -1, -1};
    int code = 0;
    if (meta &&
        fscanf(meta, "%d %d %d\n", &t->rank.rank, &t->rank.local_rank, &t->rank.world_size) == 3 &&
        fscanf(meta, "%d ", &code) == 1 && fgets(t->error, sizeof t->error, meta))
        t->error[strcspn(t->error, "\n")] = '\0';
    t->skipped = code == SKIPPED_CODE && !t->status;
    if (meta)
        fclose(meta);
    if (t->status && !t->error[0])
        snprintf(t->error, sizeof t->error, "its worker ended with status %d", t->status);
    char path[96];
    snprintf(path, sizeof path, "%s/snapshot", t->dir);
    t->has_snap = access(path, R_OK) == 0 && cl_snapshot_read(path, &t->snap, ignored) == 0;
}

static int by_rank(const void *a, const void *b)
{
    const struct target *x = a, *y = b;
    int order = cl_rank_order(&x->rank, x->pid, &y->rank, y->pid);
    return order ? order : strcmp(x->core ? x->core : "", y->core ? y->core : "");
}

static void heading(FILE *out, const struct target *t)
{
    fprintf(out, "== ");
    if (t->rank.rank >= 0)
        fprintf(out, "rank %d of %d, local rank %d: ", t->rank.rank, t->rank.world_size,
                t->rank.local_rank);
    if (t->core)
        fprintf(out, "core %s ==\n", t->core);
    else
        fprintf(out, "pid %d ==\n", t->pid);
}

static void copy_report(FILE *out, const struct target *t, struct cl_json *j)
{
    FILE *f = file_in(t, "report", "r");
    char *text = NULL;
    size_t len = 0;
    if (f) {
        FILE *m = open_memstream(&text, &len);
        char buf[65536];
        for (size_t got; m && (got = fread(buf, 1, sizeof buf, f)) > 0;)
            fwrite(buf, 1, got, m);
        if (m)
            fclose(m);
        fclose(f);
    }
    if (j) {
        if (text && len)
            cl_json_raw(j, text);
        else
            cl_json_null(j);
    } else if (text) {
        fwrite(text, 1, len, out);
    }
    free(text);
}

/* The ranks side by side, from the snapshots the workers left (two or more): built before any
 * report is written. */
struct across {
    struct cl_snapshot *snaps;   /* shallow: the targets own them */
    const char **sources;
    size_t n;
    struct cl_ranks ranks;
};

static int across_build(const struct target *v, size_t n, struct across *a, struct cl_error *err)
{
    *a = (struct across){.snaps = calloc(n + 1, sizeof *a->snaps),
                         .sources = calloc(n + 1, sizeof *a->sources)};
    int rc = a->snaps && a->sources ? 0 : cl_error_set(err, CL_E_INTERNAL, "out of memory");
    for (size_t i = 0; !rc && i < n; i++)
        if (v[i].has_snap) {
            a->sources[a->n] = v[i].core;
            a->snaps[a->n++] = v[i].snap;
        }
    if (!rc && a->n > 1)
        rc = cl_ranks_build(a->snaps, a->sources, a->n, &a->ranks, err);
    return rc;
}

static void across_free(struct across *a)
{
    cl_ranks_free(&a->ranks);
    free(a->snaps);
    free(a->sources);
}

/* How the targets were read: the memory limit, and the most read at once under it. */
struct reading {
    uint64_t limit;
    size_t at_once;
};

static void write_json(FILE *out, const struct target *v, size_t n, const struct across *a,
                       const struct reading *r)
{
    struct cl_json j;
    cl_json_begin_document(&j, out);
    cl_json_key(&j, "memory_limit");
    cl_json_int(&j, (long long)r->limit);
    cl_json_key(&j, "at_once");
    cl_json_int(&j, (long long)r->at_once);
    cl_json_key(&j, "targets");
    cl_json_begin_array(&j);
    for (size_t i = 0; i < n; i++) {
        cl_json_begin_object(&j);
        cl_json_key(&j, "pid");
        cl_json_count_or_null(&j, v[i].pid ? v[i].pid : -1);
        cl_json_key(&j, "core");
        cl_json_string(&j, v[i].core);
        cl_json_rank(&j, &v[i].rank);
        cl_json_key(&j, "exit_status");
        cl_json_int(&j, v[i].status);
        cl_json_key(&j, "memory_budget");
        cl_json_int(&j, (long long)v[i].budget);
        cl_json_key(&j, "skipped");   /* a child of --children that is no rank, and why */
        cl_json_string(&j, v[i].skipped ? v[i].error : NULL);
        cl_json_key(&j, "report");
        if (v[i].skipped)
            cl_json_null(&j);
        else
            copy_report(out, &v[i], &j);
        cl_json_end_object(&j);
    }
    cl_json_end_array(&j);
    cl_json_key(&j, "across_ranks");
    if (a->n > 1)
        cl_ranks_write_json(&j, &a->ranks);
    else
        cl_json_null(&j);
    cl_json_end_object(&j);
    cl_json_finish(&j);
}

static void write_text(FILE *out, const struct target *v, size_t n, const struct across *a,
                       const struct reading *r)
{
    char limit[CL_BYTES_TEXT];
    cl_bytes_text(limit, sizeof limit, r->limit);
    fprintf(out, "%zu targets, read at most %zu at once under a memory limit of %s\n\n", n,
            r->at_once, limit);
    for (size_t i = 0; i < n; i++) {
        heading(out, &v[i]);
        if (v[i].skipped)
            fprintf(out, "not read: %s (a child of --children, not one of the job's ranks)\n",
                    v[i].error);
        else
            copy_report(out, &v[i], NULL);
        if (v[i].status)
            fprintf(out, "culeak: error: %s\n", v[i].error);
        fputc('\n', out);
    }
    if (a->n > 1) {
        fprintf(out, "== across ranks ==\n");
        cl_ranks_write_text(out, &a->ranks);
    }
}

static void clean(struct target *t)
{
    static const char *const files[] = {"meta", "report", "snapshot"};
    char path[96];
    for (size_t k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", t->dir, files[k]);
        unlink(path);
    }
    rmdir(t->dir);
    if (t->has_snap)
        cl_snapshot_free(&t->snap);
}

int cl_command_run_targets(const struct cl_command_line *cli, FILE *out, bool *written,
                           struct cl_error *err)
{
    *written = false;
    struct target *v;
    size_t n;
    int rc = collect(cli, &v, &n, err);
    size_t bound = cl_cpus(), running = 0, started = 0, most = 0;
    size_t at_once = n && n < bound ? n : bound;
    /* The targets read at once share this machine's memory (--memory-limit) and its CPUs: a
     * copy in more threads than CPUs only stops each process longer. An explicit --copy-limit
     * is shared as it always was. */
    uint64_t limit = cli->memory_limit ? cli->memory_limit : cl_mem_available() / 2, used = 0;
    limit = limit ? limit : FALLBACK_MEMORY_LIMIT;
    uint64_t copy_cap = cli->session.open.copy_limit / at_once;
    const char *tmp = cl_tmp_dir();
    for (size_t i = 0; !rc && i < n; i++) {
        estimate(&v[i]);
        v[i].copy_threads = (unsigned)(bound / at_once);
        snprintf(v[i].dir, sizeof v[i].dir, "%.40s/culeak-XXXXXX", tmp);
        if (!mkdtemp(v[i].dir))
            rc = cl_error_set(err, CL_E_IO, "cannot make a folder in %s for the workers", tmp);
    }
    /* in order, each once the memory its reading needs is free (one needing more than the
     * limit is read alone, with all of it) */
    while (!rc && started < n) {
        uint64_t want = need(&v[started]) < limit ? need(&v[started]) : limit;
        if (running == bound || (running && used + want > limit)) {
            used -= reap(v, n);
            running--;
            continue;
        }
        give(&v[started], want, copy_cap);
        if (!start(cli, &v[started++])) {
            rc = cl_error_set(err, CL_E_INTERNAL, "cannot start a worker (fork)");
            break;
        }
        used += want;
        most = ++running > most ? running : most;
    }
    for (; running; running--)
        reap(v, n);
    if (!rc) {
        struct cl_error ignored;
        for (size_t i = 0; i < n; i++)
            gather(&v[i], &ignored);
        qsort(v, n, sizeof *v, by_rank);
        struct across a;
        rc = across_build(v, n, &a, err);
        struct reading r = {limit, most};
        if (!rc && cli->json)
            write_json(out, v, n, &a, &r);
        else if (!rc)
            write_text(out, v, n, &a, &r);
        *written = !rc;
        across_free(&a);
        for (size_t i = 0; i < n && !rc; i++) {
            char name[64];
            if (v[i].core)
                snprintf(name, sizeof name, "core %.50s", v[i].core);
            else
                snprintf(name, sizeof name, "pid %d", v[i].pid);
            if (v[i].status)
                rc = cl_error_set(err, (enum cl_status)v[i].status, "%s: %s", name, v[i].error);
        }
    }
    for (size_t i = 0; i < n; i++)
        if (v[i].dir[0] && strstr(v[i].dir, "XXXXXX") == NULL)
            clean(&v[i]);
    free(v);
    return rc;
}
