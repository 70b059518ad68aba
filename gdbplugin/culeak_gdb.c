/* culeak inside gdb and cuda-gdb: a C extension for gdb's embedded Python, built against the
 * stable ABI (3.8+), so one binary loads into any gdb whatever Python it embeds. It registers
 * culeak-* commands that run the same engine and reports as the CLI, on the process or core gdb
 * is debugging, and a step-boundary breakpoint that reports what grew at each training step. */
#define Py_LIMITED_API 0x03080000
#include <Python.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/snapshot.h"
#include "engine/warmup.h"
#include "plugin.h"
#include "report/text.h"
#include "util/output.h"
#include "util/text.h"

#define MAX_SNAPSHOTS 64

PyObject *gdb;   /* the gdb module */

/* `help culeak` and `culeak`: every culeak-* command with the first sentence of its help (filled
 * in by register_commands from the command table). */
static char overview[2048];

/* ---- talking to gdb ---- */

char *utf8_dup(PyObject *s)
{
    PyObject *b = s ? PyUnicode_AsUTF8String(s) : NULL;
    char *out = b ? strdup(PyBytes_AsString(b)) : NULL;
    Py_XDECREF(b);
    return out;
}

void gdb_write(const char *text)
{
    PyObject *r = PyObject_CallMethod(gdb, "write", "s", text);
    Py_XDECREF(r);
    PyErr_Clear();
}

PyObject *gdb_error(const char *msg)
{
    PyObject *cls = PyObject_GetAttrString(gdb, "GdbError");
    PyErr_SetString(cls ? cls : PyExc_RuntimeError, msg);
    Py_XDECREF(cls);
    return NULL;
}

/* gdb.execute(cmd, to_string=True), malloc'ed; NULL on error. */
char *gdb_capture(const char *cmd)
{
    PyObject *r = PyObject_CallMethod(gdb, "execute", "sOO", cmd, Py_False, Py_True);
    char *out = r ? utf8_dup(r) : NULL;
    Py_XDECREF(r);
    PyErr_Clear();
    return out;
}

static char *gdb_string_parameter(const char *name)
{
    PyObject *r = PyObject_CallMethod(gdb, "parameter", "s", name);
    char *out = r && PyUnicode_Check(r) ? utf8_dup(r) : NULL;
    Py_XDECREF(r);
    PyErr_Clear();
    return out;
}

/* ---- the target gdb has ---- */

void gdb_target_free(struct gdb_target *g)
{
    free(g->core);
    free(g->exe);
    free(g->sysroot);
    free(g->solib_path);
    memset(g, 0, sizeof *g);
}

/* The core file's path, from `info target` (gdb has no Python attribute for it before 17). */
static char *core_path(void)
{
    char *text = gdb_capture("info target");
    const char *at = text ? strstr(text, "Local core dump file:") : NULL;
    const char *open = at ? strchr(at, '`') : NULL;
    const char *close = open ? strstr(open, "', file type") : NULL;
    char *path = close ? strndup(open + 1, (size_t)(close - open - 1)) : NULL;
    free(text);
    return path;
}

/* The short name of the target under the inferior's memory: "native" (cuda-gdb: "native +
 * cuda"), "core", "remote", "extended-remote", ...; malloc'ed, NULL when there is none.
 * Inferior.connection (gdb 12+) says it; older gdbs (cuda-gdb 11.8 is gdb 10.2) print the same
 * short names in the target stack, one `  - NAME (LONG NAME)` line per layer, top first: thread
 * and record layers above the process layer, the executable's ("exec") and "None" below it. */
static char *target_kind(PyObject *inf)
{
    if (PyObject_HasAttrString(inf, "connection")) {
        PyObject *conn = PyObject_GetAttrString(inf, "connection");
        PyObject *type = conn && conn != Py_None ? PyObject_GetAttrString(conn, "type") : NULL;
        char *kind = type ? utf8_dup(type) : NULL;
        Py_XDECREF(type);
        Py_XDECREF(conn);
        PyErr_Clear();
        return kind;
    }
    char *text = gdb_capture("maint print target-stack"), *kind = NULL;
    for (char *save, *line = text ? strtok_r(text, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save)) {
        char *end = strstr(line, " (");
        if (strncmp(line, "  - ", 4) != 0 || !end)
            continue;
        *end = '\0';
        if (strcmp(line + 4, "exec") == 0 || strcmp(line + 4, "None") == 0)
            break;
        char *lower = strdup(line + 4);   /* the lowest layer so far */
        if (!lower)
            break;   /* out of memory: the layer above it is still a fair answer */
        free(kind);
        kind = lower;
    }
    free(text);
    return kind;
}

/* Session options for what gdb is debugging: a native live process (read directly; gdb holds it
 * stopped) or a core (read through culeak's core reader, with gdb's sysroot and
 * solib-search-path). */
int target_options(struct gdb_target *g, struct cl_session_options *so, struct cl_error *err)
{
    memset(so, 0, sizeof *so);
    PyObject *inf = PyObject_CallMethod(gdb, "selected_inferior", NULL);
    PyObject *pid = inf ? PyObject_GetAttrString(inf, "pid") : NULL;
    char *kind = inf ? target_kind(inf) : NULL;
    long p = pid ? PyLong_AsLong(pid) : 0;
    Py_XDECREF(pid);
    Py_XDECREF(inf);
    PyErr_Clear();
    int rc = 0;
    if (!kind || p <= 0) {
        rc = cl_error_set(err, CL_E_NO_PROCESS,
                          "gdb has no process: run or attach to one, or "
                          "load a core (core-file FILE)");
    } else if (strcmp(kind, "native") == 0 || strncmp(kind, "native ", 7) == 0) {
        so->pid = (int)p;
        so->open.assume_stopped = true;
    } else if (strcmp(kind, "core") == 0) {
        if (!(g->core = core_path())) {
            rc = cl_error_set(err, CL_E_IO, "cannot tell which core file gdb has loaded");
        } else {
            so->core = g->core;
            PyObject *ps = PyObject_CallMethod(gdb, "current_progspace", NULL);
            PyObject *fn = ps ? PyObject_GetAttrString(ps, "filename") : NULL;
            if (fn && fn != Py_None)
                so->open.locator.exe = g->exe = utf8_dup(fn);
            Py_XDECREF(fn);
            Py_XDECREF(ps);
            PyErr_Clear();
            g->sysroot = gdb_string_parameter("sysroot");
            if (g->sysroot && *g->sysroot && strncmp(g->sysroot, "target:", 7) != 0)
                so->open.locator.sysroot = g->sysroot;
            g->solib_path = gdb_string_parameter("solib-search-path");
            size_t n = 0;
            for (char *save, *d = g->solib_path ? strtok_r(g->solib_path, ":", &save) : NULL;
                 d && n < CL_MAX_LIB_DIRS; d = strtok_r(NULL, ":", &save))
                g->lib_dirs[n++] = d;
            so->open.locator.lib_dirs = g->lib_dirs;
            so->open.locator.nlib_dirs = n;
        }
    } else {
        g->through_gdb = true;   /* remote and others: every byte through gdb's read_memory */
        so->pid = (int)p;
    }
    free(kind);
    return rc;
}

/* ---- memory through gdb itself (remote targets, anything not native or a core) ---- */

static int read_page_through_gdb(struct cl_target *t, uint64_t addr, void *page)
{
    PyObject *inf = t->impl;
    PyObject *mv = PyObject_CallMethod(inf, "read_memory", "KK", (unsigned long long)addr,
                                       (unsigned long long)CL_PAGE_SIZE);
    PyObject *b = mv ? PyObject_CallMethod(mv, "tobytes", NULL) : NULL;
    int rc = 0;
    if (b && PyBytes_Size(b) == CL_PAGE_SIZE)
        memcpy(page, PyBytes_AsString(b), CL_PAGE_SIZE);
    else
        rc = cl_error_set(&t->err, CL_E_UNREADABLE, "gdb cannot read 0x%llx",
                          (unsigned long long)addr);
    Py_XDECREF(b);
    Py_XDECREF(mv);
    PyErr_Clear();
    return rc;
}

static void close_gdb_source(struct cl_target *t)
{
    Py_XDECREF((PyObject *)t->impl);
}

static const struct cl_target_ops through_gdb_ops = {.read_page = read_page_through_gdb,
                                                     .close = close_gdb_source};

/* The address-space map from `info proc mappings` (gdb reads /proc through the remote too). */
static int maps_from_gdb(struct cl_target *t)
{
    char *text = gdb_capture("info proc mappings");
    for (char *save, *line = text ? strtok_r(text, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save)) {
        unsigned long long start, end, size, offset;
        char perms[8] = "", path[4096] = "";
        int n = sscanf(line, " %llx %llx %llx %llx %7s %4095[^\n]", &start, &end, &size, &offset,
                       perms, path);
        if (n < 4 || end <= start)
            continue;
        if (n >= 5 && !strchr("r-", perms[0])) {   /* gdb before 12 prints no Perms column */
            snprintf(path, sizeof path, "%s", perms);
            snprintf(perms, sizeof perms, "r--p");
        }
        struct cl_mapping m = {.start = start,
                               .end = end,
                               .offset = offset,
                               .perms = (perms[0] == 'r' ? CL_MAP_R : 0) |
                                        (perms[1] == 'w' ? CL_MAP_W : 0) |
                                        (perms[2] == 'x' ? CL_MAP_X : 0),
                               .path = path[0] ? path : NULL};
        if (cl_mappings_add(&t->maps, &m)) {
            free(text);
            return CL_E_INTERNAL;
        }
    }
    free(text);
    cl_mappings_sort(&t->maps);
    return t->maps.n ? 0 : CL_E_UNSUPPORTED;
}

static int open_through_gdb(struct gdb_target *g, int pid, struct cl_session **s,
                            struct cl_error *err)
{
    PyObject *inf = PyObject_CallMethod(gdb, "selected_inferior", NULL);
    struct cl_target *t;
    if (!inf || cl_target_new(&through_gdb_ops, CL_TARGET_GDB, inf, NULL, &t)) {
        Py_XDECREF(inf);
        PyErr_Clear();
        return cl_error_set(err, CL_E_INTERNAL, "out of memory");
    }
    t->pid = pid;
    if (maps_from_gdb(t)) {
        cl_target_close(t);
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "gdb gives no memory map for this target "
                            "(info proc mappings); culeak cannot find the Python runtime");
    }
    PyObject *threads = PyObject_CallMethod(inf, "threads", NULL);
    Py_ssize_t n = threads ? PyTuple_Size(threads) : 0;
    t->threads = calloc((size_t)(n > 0 ? n : 1), sizeof *t->threads);
    for (Py_ssize_t i = 0; t->threads && i < n; i++) {
        PyObject *ptid = PyObject_GetAttrString(PyTuple_GetItem(threads, i), "ptid");
        PyObject *lwp = ptid ? PyTuple_GetItem(ptid, 1) : NULL;
        t->threads[t->nthreads++].tid = lwp ? (int)PyLong_AsLong(lwp) : 0;
        Py_XDECREF(ptid);
    }
    Py_XDECREF(threads);
    PyObject *ps = PyObject_CallMethod(gdb, "current_progspace", NULL);
    PyObject *fn = ps ? PyObject_GetAttrString(ps, "filename") : NULL;
    t->exe_path = fn && fn != Py_None ? utf8_dup(fn) : NULL;
    if (t->exe_path && strncmp(t->exe_path, "target:", 7) == 0)   /* fetched from the remote */
        memmove(t->exe_path, t->exe_path + 7, strlen(t->exe_path + 7) + 1);
    Py_XDECREF(fn);
    Py_XDECREF(ps);
    PyErr_Clear();
    (void)g;
    return cl_session_open_target(t, s, err);
}

int open_session(struct gdb_target *g, struct cl_session **s, struct cl_error *err)
{
    struct cl_session_options so;
    int rc = target_options(g, &so, err);
    if (rc)
        return rc;
    return g->through_gdb ? open_through_gdb(g, so.pid, s, err) : cl_session_open(&so, s, err);
}

/* ---- argument parsing ---- */

static void args_free(struct args *a)
{
    for (int i = 0; i < a->argc; i++)
        free(a->argv[i]);
    a->argc = 0;
}

/* argv[0] = the command's name, then gdb.string_to_argv(arg) (gdb's own quoting rules). */
static int args_split(const char *name, const char *arg, struct args *a)
{
    a->argc = 0;
    a->argv[a->argc++] = strdup(name);
    PyObject *list = PyObject_CallMethod(gdb, "string_to_argv", "s", arg);
    Py_ssize_t n = list ? PyList_Size(list) : -1;
    for (Py_ssize_t i = 0; i < n && a->argc < MAX_ARGS; i++)
        a->argv[a->argc++] = utf8_dup(PyList_GetItem(list, i));
    a->argv[a->argc] = NULL;
    Py_XDECREF(list);
    return n < 0 ? -1 : 0;
}

/* ---- snapshots kept between commands ---- */

static struct named_snapshot {
    char name[64];
    struct cl_snapshot snap;
} snapshots[MAX_SNAPSHOTS], *last_taken;

const struct cl_snapshot *last_snapshot(const char **name)
{
    if (!last_taken || !last_taken->name[0])
        return NULL;
    *name = last_taken->name;
    return &last_taken->snap;
}

static struct named_snapshot *snapshot_named(const char *name, bool create)
{
    struct named_snapshot *free_slot = NULL;
    for (int i = 0; i < MAX_SNAPSHOTS; i++) {
        if (snapshots[i].name[0] && strcmp(snapshots[i].name, name) == 0)
            return &snapshots[i];
        if (!snapshots[i].name[0] && !free_slot)
            free_slot = &snapshots[i];
    }
    if (create && free_slot)
        snprintf(free_slot->name, sizeof free_slot->name, "%s", name);
    return create ? free_slot : NULL;
}

/* ---- commands ---- */

static const char *command_of(PyObject *self)
{
    static char name[64];
    PyObject *v = PyObject_GetAttrString(self, "_culeak_command");
    char *s = utf8_dup(v);
    Py_XDECREF(v);
    snprintf(name, sizeof name, "%s", s ? s : "");
    free(s);
    return name;
}

/* The CUDA devices the last inspection met (bit N: cuda:N), which TAB offers after --device:
 * completion cannot afford a walk of the target of its own. */
static uint64_t devices_seen;

static void note_devices(const struct cl_session *s)
{
    uint64_t seen = 0;
    for (uint32_t d = 0; s->allocator_built && d < s->allocator.ndevices; d++) {
        int index = s->allocator.devices[d].index;
        if (index >= 0 && index < 64)
            seen |= 1ull << index;
    }
    for (uint32_t k = 0; s->tensors_built && k < s->tensors.n; k++) {
        const struct torch_tensor *tensor = &s->tensors.v[k];
        if (tensor->device_type == TORCH_DEVICE_CUDA && tensor->device_index >= 0 &&
            tensor->device_index < 64)
            seen |= 1ull << tensor->device_index;
    }
    if (s->allocator_built || s->tensors_built)
        devices_seen = seen;
}

/* Parses a culeak-* command's arguments as the engine does for cl->command; --help and --version
 * print the usage (CL_PARSE_HELP). */
static int parse(struct args *a, struct cl_command_line *cl, struct cl_error *err)
{
    int rc = cl_command_parse(a->argc, a->argv, 1, false, false, cl, err);
    if (rc == CL_PARSE_HELP || rc == CL_PARSE_VERSION) {
        char usage[CL_USAGE_CAP];
        cl_command_usage(CL_FRONT_GDB, usage, sizeof usage);
        gdb_write(usage);
        return CL_PARSE_HELP;
    }
    return rc;
}

/* Runs an engine command, its output captured and written through gdb (paging, logging). */
static PyObject *run_engine(const char *command, struct args *a)
{
    struct cl_command_line cl = {
        .command = command, .tensor_filter = {.device = -1}, .block_filter = {.device = -1}};
    struct cl_error err = {0};
    int rc = parse(a, &cl, &err);
    if (rc == CL_PARSE_HELP)
        Py_RETURN_NONE;
    if (rc)
        return gdb_error(err.msg);
    if (isatty(2) && !cl.quiet)   /* gdb's terminal: progress lines go beside its pager */
        cl.walk.progress = stderr;
    struct gdb_target g = {0};
    struct cl_session *s = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return gdb_error("out of memory");
    rc = open_session(&g, &s, &err);
    /* a live process gdb holds stopped: what NVML says it uses, as the CLI asks (summary) */
    const struct cl_command_spec *spec = cl_command_find(command);
    if (!rc && spec && (spec->flags & CL_CMD_DRIVER) && !g.core && !g.through_gdb)
        cl_driver_memory_read(s->target->pid, &s->driver);
    if (!rc)
        rc = cl_command_run(&cl, s, out, &err);
    if (s)
        note_devices(s);
    fclose(out);
    cl_session_close(s);
    gdb_target_free(&g);
    if (text && len)
        gdb_write(text);
    free(text);
    if (rc)
        return gdb_error(err.msg);
    Py_RETURN_NONE;
}

#define DIFF_USAGE \
    "usage: culeak-diff A B [--json] [--output FILE]  (snapshots culeak-snapshot took)"

/* culeak-diff A B [--json] [--output FILE]: two named snapshots compared, to gdb or to FILE. */
static PyObject *diff_command(struct args *a)
{
    const char *names[2], *output = NULL;
    int nnames = 0;
    bool json = false;
    for (int i = 1; i < a->argc; i++) {
        if (strcmp(a->argv[i], "--json") == 0)
            json = true;
        else if ((strcmp(a->argv[i], "--output") == 0 || strcmp(a->argv[i], "-o") == 0) &&
                 i + 1 < a->argc && !output)
            output = a->argv[++i];
        else if (a->argv[i][0] != '-' && nnames < 2)
            names[nnames++] = a->argv[i];
        else
            return gdb_error(DIFF_USAGE);
    }
    if (nnames != 2)
        return gdb_error(DIFF_USAGE);
    struct named_snapshot *x = snapshot_named(names[0], false);
    struct named_snapshot *y = snapshot_named(names[1], false);
    if (!x || !y)
        return gdb_error("no such snapshot (take them with culeak-snapshot NAME)");
    struct cl_error err = {0};
    struct cl_output o;
    char *text = NULL;
    size_t len = 0;
    int rc = output ? cl_output_open(output, &o, &err) : 0;
    FILE *out = rc ? NULL : output ? o.f : open_memstream(&text, &len);
    if (!rc && !out)
        return gdb_error("out of memory");
    if (!rc)
        rc = cl_snapshot_diff(out, &x->snap, &y->snap, json, &err);
    if (output && !rc)
        rc = cl_output_commit(&o, &err);
    else if (output && out)
        cl_output_abort(&o);
    else if (out)
        fclose(out);
    if (!rc && text)
        gdb_write(text);
    free(text);
    if (rc)
        return gdb_error(err.msg);
    Py_RETURN_NONE;
}

static PyObject *snapshot_command(const char *command, struct args *a)
{
    struct cl_error err = {0};
    int names = a->argc - 1;
    if (strcmp(command, "snapshot") == 0) {
        /* NAME, NAME --save FILE (the CLI's snapshot format), or --load FILE NAME */
        bool load = names == 3 && strcmp(a->argv[1], "--load") == 0;
        bool save = names == 3 && strcmp(a->argv[2], "--save") == 0;
        if (names != 1 && !load && !save)
            return gdb_error("usage: culeak-snapshot NAME [--save FILE] | "
                             "culeak-snapshot --load FILE NAME");
        struct named_snapshot *ns = snapshot_named(a->argv[load ? 3 : 1], true);
        if (!ns)
            return gdb_error("too many snapshots");
        struct cl_snapshot snap;
        int rc;
        if (load) {
            rc = cl_snapshot_read(a->argv[2], &snap, &err);
        } else {
            struct gdb_target g = {0};
            struct cl_session *s = NULL;
            rc = open_session(&g, &s, &err);
            if (!rc)
                rc = cl_snapshot_take(s, NULL, &snap, &err);
            cl_session_close(s);
            gdb_target_free(&g);
        }
        struct cl_output o;
        bool taken = rc == 0;
        if (taken && save && !(rc = cl_output_open(a->argv[3], &o, &err))) {
            cl_snapshot_write(o.f, &snap);
            rc = cl_output_commit(&o, &err);
        }
        if (rc) {
            if (taken)
                cl_snapshot_free(&snap);
            ns->name[0] = '\0';
            return gdb_error(err.msg);
        }
        cl_snapshot_free(&ns->snap);
        ns->snap = snap;
        last_taken = ns;
        char line[256];
        char size[CL_BYTES_TEXT];
        cl_bytes_text(size, sizeof size, snap.bytes);
        snprintf(line, sizeof line, "snapshot %s: %llu storages, %s\n", ns->name,
                 (unsigned long long)snap.storages, size);
        gdb_write(line);
        Py_RETURN_NONE;
    }
    return diff_command(a);
}

static PyObject *break_step_command(const char *command, struct args *a);
static PyObject *step_report_command(const char *command, struct args *a);

/* The plugin's own forms of commands (the table's CL_CMD_GDB_OWN rows; each must be here, or
 * the plugin does not load): named snapshots, and the step tracking that only gdb can do. */
static const struct own_command {
    const char *name;
    PyObject *(*invoke)(const char *command, struct args *a);
} own_commands[] = {
    {"snapshot", snapshot_command},       {"diff", snapshot_command},
    {"break-step", break_step_command},   {"step-report", step_report_command},
    {"catch-oom", catch_oom_command},     {"oom-report", oom_report_command},
    {"oom-reached", oom_reached_command},
};

static const struct own_command *own_command(const char *name)
{
    for (size_t i = 0; i < sizeof own_commands / sizeof *own_commands; i++)
        if (strcmp(own_commands[i].name, name) == 0)
            return &own_commands[i];
    return NULL;
}

static PyObject *cmd_invoke(PyObject *self, PyObject *args)
{
    const char *arg;
    PyObject *from_tty;
    if (!PyArg_ParseTuple(args, "sO", &arg, &from_tty))
        return NULL;
    char command[64];
    snprintf(command, sizeof command, "%s", command_of(self));
    struct args a;
    char full[80];
    snprintf(full, sizeof full, "culeak-%s", command);
    if (args_split(full, arg, &a) != 0) {
        args_free(&a);
        return NULL;
    }
    PyObject *r;
    const struct own_command *own = own_command(command);
    if (!command[0]) {
        gdb_write(overview);
        gdb_write("\n");
        Py_INCREF(Py_None);
        r = Py_None;
    } else if (own) {
        r = own->invoke(command, &a);
    } else {
        r = run_engine(command, &a);
    }
    args_free(&a);
    return r;
}

/* The options of a culeak-* command (without --): the table's, but for the plugin's own forms of
 * snapshot and diff, which take names, and catch-oom, whose --dump names the file it writes. */
static size_t command_options(const char *command, const char **out, size_t cap)
{
    static const char *const snapshot[] = {"save", "load", NULL};
    static const char *const diff[] = {"json", "output", NULL};
    static const char *const catch_oom[] = {"dump", "json", "off", "once", "report", NULL};
    const char *const *own = strcmp(command, "snapshot") == 0    ? snapshot
                             : strcmp(command, "diff") == 0      ? diff
                             : strcmp(command, "catch-oom") == 0 ? catch_oom
                                                                 : NULL;
    if (!own)
        return *command ? cl_command_options(command, CL_FRONT_GDB, out, cap) : 0;
    size_t n = 0;
    while (own[n] && n < cap) {
        out[n] = own[n];
        n++;
    }
    return n;
}

/* Appends candidate, from where gdb's word starts in it (typed is what was typed of it, word
 * its tail that gdb completes): gdb breaks words at '-' and ':'. */
static int add_candidate(PyObject *list, const char *candidate, const char *typed, size_t word)
{
    size_t len = strlen(typed);
    if (strncmp(candidate, typed, len) != 0 || word > len)
        return 0;
    PyObject *s = PyUnicode_FromString(candidate + (len - word));
    int rc = s ? PyList_Append(list, s) : -1;
    Py_XDECREF(s);
    return rc;
}

/* TAB completion: the command's own options, then the values of one that takes a fixed set
 * (--device cpu|cuda|all and the cuda:N the last inspection met, --state all|allocated|free). */
static PyObject *cmd_complete(PyObject *self, PyObject *args)
{
    const char *text;
    PyObject *word;
    if (!PyArg_ParseTuple(args, "sO", &text, &word))
        return NULL;
    if (word == Py_None)
        Py_RETURN_NONE;   /* the first phase: let gdb pick word breaks */
    char *w = utf8_dup(word);
    char command[64];
    snprintf(command, sizeof command, "%s", command_of(self));
    const char *last = strrchr(text, ' ');
    last = last ? last + 1 : text;
    char previous[64] = "";   /* the word before the last, when it is an option */
    const char *end = last > text ? last - 1 : text;
    while (end > text && end[-1] == ' ')
        end--;
    const char *begin = end;
    while (begin > text && begin[-1] != ' ')
        begin--;
    if (end - begin > 2 && strncmp(begin, "--", 2) == 0)
        (void)cl_copy_span(previous, sizeof previous, begin + 2, (size_t)(end - begin - 2));
    const char *const *values = previous[0] ? cl_option_values(previous) : NULL;
    PyObject *list = w ? PyList_New(0) : NULL;
    int rc = list ? 0 : -1;
    if (values && *last != '-') {
        for (size_t i = 0; rc == 0 && values[i]; i++)
            if (strcmp(command, "blocks") != 0 || strcmp(values[i], "cpu") != 0)
                rc = add_candidate(list, values[i], last, strlen(w));
        for (int d = 0; rc == 0 && strcmp(previous, "device") == 0 && d < 64; d++) {
            char device[16];
            snprintf(device, sizeof device, "cuda:%d", d);
            if (devices_seen >> d & 1)
                rc = add_candidate(list, device, last, strlen(w));
        }
    } else if (*last == '-' || !*last) {
        const char *names[32];
        size_t n = command_options(command, names, 32);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            char dashed[40];
            snprintf(dashed, sizeof dashed, "--%s", names[i]);
            rc = add_candidate(list, dashed, last, strlen(w));
        }
    }
    free(w);
    if (rc)
        Py_CLEAR(list);   /* the Python error is set: gdb shows it */
    return list;
}

static PyMethodDef command_methods[] = {
    {"invoke", cmd_invoke, METH_VARARGS, NULL},
    {"complete", cmd_complete, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

/* ---- step-boundary tracking ---- */

static struct step_tracker {
    PyObject *bp;              /* the gdb.Breakpoint */
    unsigned every, hits, steps;
    int64_t stop_on_growth;    /* stop when the growth since the last report reaches it */
    bool auto_warmup;          /* warm once every optimizer has state (at most MAX_WARMUP) */
    uint64_t warmup;           /* else after this many steps */
    bool warm;                 /* growth counts from here */
    bool have_base;
    struct cl_snapshot base;   /* at the last report */
} tracker;

/* Steps the default warm-up waits at most for optimizer state: a job whose optimizer never
 * steps (evaluation) is tracked all the same. */
#define MAX_WARMUP 10

/* Breakpoint.stop(): decides cheaply whether this hit is a step to report. The report itself
 * runs from the breakpoint's commands (culeak-step-report), once gdb has stopped every thread:
 * inside stop() the other threads may still be running. */
static PyObject *step_stop(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    /* The same symbol also resolves to PLT stubs (the callers' and its own): skip those hits.
     * `info symbol $pc` names a stub NAME@plt without unwinding a frame, which Debian's cuda-gdb
     * 11.8 cannot do from Python (its unwinder hook fails at every stop). */
    char *where = gdb_capture("info symbol $pc");
    bool plt = where && strstr(where, "@plt");
    free(where);
    if (plt)
        Py_RETURN_FALSE;
    tracker.hits++;
    if (tracker.every > 1 && tracker.hits % tracker.every != 0)
        Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

void set_flag_variable(const char *name, bool value)
{
    PyObject *r = PyObject_CallMethod(gdb, "set_convenience_variable", "sO", name,
                                      value ? Py_True : Py_False);
    Py_XDECREF(r);
    PyErr_Clear();
}

/* culeak-step-report: one line for this step; $culeak_stop tells the breakpoint's commands
 * whether to stay stopped (growth crossed --stop-on-growth) or continue. */
/* A step of the warm-up: its line, and its snapshot the base the next step's growth is measured
 * from; the last one says growth counts from here. */
static PyObject *warmup_step(struct cl_snapshot *now, const struct cl_optimizers *opts)
{
    bool done = tracker.auto_warmup ? opts->with_state == opts->total || tracker.steps >= MAX_WARMUP
                                    : tracker.steps >= tracker.warmup;
    char size[CL_BYTES_TEXT], why[96] = "", line[256];
    cl_bytes_text(size, sizeof size, now->bytes);
    if (tracker.auto_warmup && opts->with_state < opts->total)
        snprintf(why, sizeof why, ": %u of %u optimizers without state",
                 opts->total - opts->with_state, opts->total);
    snprintf(line, sizeof line, "culeak: step %u: %llu storages, %s (%s%s)\n", tracker.hits,
             (unsigned long long)now->storages, size, done ? "baseline" : "warming up", why);
    gdb_write(line);
    if (tracker.have_base)
        cl_snapshot_free(&tracker.base);
    tracker.base = *now;
    tracker.have_base = true;
    tracker.warm = done;
    Py_RETURN_NONE;
}

static PyObject *step_report_command(const char *command, struct args *a)
{
    (void)command;
    if (a->argc > 1)
        return gdb_error("culeak-step-report takes no arguments (culeak-break-step sets it up)");
    set_flag_variable("culeak_stop", false);
    if (!tracker.bp)
        return gdb_error("no step tracking (culeak-break-step starts it)");
    tracker.steps++;
    struct gdb_target g = {0};
    struct cl_session *s = NULL;
    struct cl_error err = {0};
    struct cl_snapshot now;
    struct cl_optimizers opts = {0};
    int rc = open_session(&g, &s, &err);
    if (!rc)
        rc = cl_snapshot_take(s, NULL, &now, &err);
    if (!rc && !tracker.warm && tracker.auto_warmup &&
        (rc = cl_optimizers_count(&s->heap, &opts, &err)))
        cl_snapshot_free(&now);
    cl_session_close(s);
    gdb_target_free(&g);
    char line[1024];
    if (rc) {
        snprintf(line, sizeof line, "culeak: step %u: %s\n", tracker.hits, err.msg);
        gdb_write(line);
        Py_RETURN_NONE;
    }
    if (!tracker.warm)
        return warmup_step(&now, &opts);
    char delta[900];
    int64_t grew = cl_snapshot_delta(&tracker.base, &now, delta, sizeof delta);
    snprintf(line, sizeof line, "culeak: step %u: %s\n", tracker.hits, delta);
    gdb_write(line);
    cl_snapshot_free(&tracker.base);
    tracker.base = now;
    if (tracker.stop_on_growth > 0 && grew >= tracker.stop_on_growth) {
        gdb_write("culeak: growth crossed --stop-on-growth; stopped here\n");
        set_flag_variable("culeak_stop", true);
    }
    Py_RETURN_NONE;
}

static PyMethodDef breakpoint_methods[] = {
    {"stop", step_stop, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyObject *breakpoint_type;

static void tracker_off(void)
{
    if (tracker.bp) {
        PyObject *r = PyObject_CallMethod(tracker.bp, "delete", NULL);
        Py_XDECREF(r);
        PyErr_Clear();
        Py_CLEAR(tracker.bp);
    }
    if (tracker.have_base)
        cl_snapshot_free(&tracker.base);
    memset(&tracker, 0, sizeof tracker);
}

/* ---- SIGTERM while steps are tracked ----
 * gdb quits on SIGTERM at once, with the step breakpoint still written into the job's code: a job
 * gdb attached to then dies of SIGTRAP at its next step. While steps are tracked, SIGTERM is made
 * an interrupt instead (what Ctrl-C does: gdb stops the job and takes its breakpoints out), and at
 * that stop the plugin detaches and quits: the job runs on as it was. */

static volatile sig_atomic_t sigterm_seen;

static void on_sigterm(int sig)
{
    (void)sig;
    sigterm_seen = 1;
    kill(getpid(), SIGINT);   /* async-signal-safe: gdb's own handler does the rest */
}

/* gdb.events.stop: the stop a SIGTERM asked for. */
static PyObject *stopped_for_sigterm(PyObject *self, PyObject *event)
{
    (void)self, (void)event;
    if (!sigterm_seen)
        Py_RETURN_NONE;
    sigterm_seen = 0;
    tracker_off();
    gdb_write("culeak: SIGTERM: detaching, the job runs on\n");
    PyObject *r = PyObject_CallMethod(gdb, "execute", "s", "detach");
    Py_XDECREF(r);
    PyErr_Clear();
    r = PyObject_CallMethod(gdb, "execute", "s", "quit");
    Py_XDECREF(r);
    PyErr_Clear();
    Py_RETURN_NONE;
}

static PyMethodDef stop_handler_def = {"culeak_sigterm_stop", stopped_for_sigterm, METH_O, NULL};

/* Makes SIGTERM an interrupt while steps are tracked, once per gdb. */
static int catch_sigterm(void)
{
    static bool done;
    if (done)
        return 0;
    PyObject *events = PyObject_GetAttrString(gdb, "events");
    PyObject *stop = events ? PyObject_GetAttrString(events, "stop") : NULL;
    PyObject *fn = PyCFunction_New(&stop_handler_def, NULL);
    PyObject *r = stop && fn ? PyObject_CallMethod(stop, "connect", "O", fn) : NULL;
    Py_XDECREF(r);
    Py_XDECREF(fn);
    Py_XDECREF(stop);
    Py_XDECREF(events);
    if (!r) {
        PyErr_Clear();
        return -1;
    }
    struct sigaction sa = {.sa_handler = on_sigterm};
    sigemptyset(&sa.sa_mask);
    done = sigaction(SIGTERM, &sa, NULL) == 0;
    return done ? 0 : -1;
}

/* What the user should know of the job and this gdb before steps are tracked: a job gdb runs
 * itself ends with gdb; gdb 10 (cuda-gdb 11.8) in batch mode runs no breakpoint commands after
 * an -ex run. */
static void tracking_notes(void)
{
    PyObject *inf = PyObject_CallMethod(gdb, "selected_inferior", NULL);
    PyObject *pid = inf ? PyObject_GetAttrString(inf, "pid") : NULL;
    PyObject *attached = inf ? PyObject_GetAttrString(inf, "was_attached") : NULL;
    if (pid && PyLong_AsLong(pid) > 0 && attached == Py_False)
        gdb_write("culeak: this job is gdb's own (run): it ends when gdb does; attach to a job "
                  "(gdb -p PID) for it to run on after gdb\n");
    else if (pid && PyLong_AsLong(pid) <= 0)
        gdb_write("culeak: the job gdb will run ends when gdb does; attach to a job (gdb -p PID) "
                  "for it to run on after gdb\n");
    Py_XDECREF(attached);
    Py_XDECREF(pid);
    Py_XDECREF(inf);
    PyErr_Clear();
    PyObject *version = PyObject_GetAttrString(gdb, "VERSION");
    char *v = version ? utf8_dup(version) : NULL;
    if (v && atoi(v) < 11)
        gdb_write("culeak: in batch mode this gdb (before 11, as cuda-gdb 11.8) runs no breakpoint "
                  "commands after -ex run: give run in a file (echo run > run.gdb; -x run.gdb)\n");
    free(v);
    Py_XDECREF(version);
    PyErr_Clear();
}

/* culeak-break-step [--symbol SYM] [--every N] [--stop-on-growth N] | --off: its options parsed
 * by the engine as the table has them, so that values read as the CLI's do (units included:
 * --stop-on-growth 1M). */
static PyObject *break_step_command(const char *command, struct args *a)
{
    struct cl_command_line cl = {.command = command};
    struct cl_error err = {0};
    int rc = parse(a, &cl, &err);
    if (rc == CL_PARSE_HELP)
        Py_RETURN_NONE;
    if (rc)
        return gdb_error(err.msg);
    tracker_off();
    if (cl.steps.off) {
        gdb_write("culeak: step tracking off\n");
        Py_RETURN_NONE;
    }
    const char *symbol = cl.steps.symbol ? cl.steps.symbol : "torch::autograd::Engine::execute";
    PyObject *r = PyObject_CallMethod(gdb, "execute", "s", "set breakpoint pending on");
    Py_XDECREF(r);
    PyObject *bp = PyObject_CallFunction(breakpoint_type, "s", symbol);
    if (!bp)
        return NULL;
    PyObject *cmds = PyUnicode_FromString("silent\nculeak-step-report\n"
                                          "if $culeak_stop == 0\n  continue\nend");
    int set = cmds ? PyObject_SetAttrString(bp, "commands", cmds) : -1;
    Py_XDECREF(cmds);
    if (set != 0) {
        Py_DECREF(bp);
        return NULL;
    }
    tracker.bp = bp;
    tracker.every = cl.steps.every ? (unsigned)cl.steps.every : 1;
    tracker.stop_on_growth = (int64_t)cl.steps.stop_on_growth;
    tracker.auto_warmup = !cl.steps.warmup_given;
    tracker.warmup = cl.steps.warmup;
    tracking_notes();
    if (catch_sigterm())
        gdb_write("culeak: SIGTERM could not be made an interrupt: a SIGTERM to gdb would kill "
                  "the job\n");
    char line[512];
    snprintf(line, sizeof line, "culeak: tracking steps at %s%s%s\n", symbol,
             tracker.every > 1 ? " (every few hits)" : "",
             tracker.stop_on_growth ? "; stops on growth" : "");
    gdb_write(line);
    Py_RETURN_NONE;
}

/* ---- module ---- */

/* The help of a command the engine runs, from its row: what it does, then its usage. */
static void engine_doc(const struct cl_command_spec *c, char *doc, size_t cap)
{
    size_t len = 0;
    const char *names[64];
    size_t n = cl_command_options(c->name, CL_FRONT_GDB, names, 64);
    cl_appendf(doc, cap, &len, "%c",
               c->help[0] >= 'a' && c->help[0] <= 'z' ? c->help[0] - 32 : c->help[0]);
    for (const char *p = c->help + 1; *p; p++)
        cl_appendf(doc, cap, &len, "%c", *p == '\n' ? ' ' : *p);
    cl_appendf(doc, cap, &len, ".\nUsage: culeak-%s", c->name);
    for (size_t i = 0; i < n; i++) {
        const struct cl_option_spec *o = NULL;
        for (int id = 0; id < CL_O_NUMBER_OF_OPTIONS && !o; id++)
            if (strcmp(cl_option(id)->name, names[i]) == 0)
                o = cl_option(id);
        cl_appendf(doc, cap, &len, " [--%s%s%s]", o->name, o->value ? " " : "",
                   o->value ? o->value : "");
    }
    cl_appendf(doc, cap, &len,
               "\n\nOptions are the CLI's (see `culeak --help`); the target is "
               "gdb's own.");
}

/* The help of a culeak-* command: the plugin's own form's, or the engine command's. */
static void command_doc(const struct cl_command_spec *c, char *doc, size_t cap)
{
    if (c->flags & CL_CMD_GDB_OWN)
        snprintf(doc, cap, "%s", c->gdb_doc);
    else
        engine_doc(c, doc, cap);
}

/* Registers culeak-NAME (culeak for the overview, name "") with its help. */
static int register_command(PyObject *module, PyObject *bases, PyObject *data, const char *name,
                            const char *doc)
{
    char type_name[64], full[80], attr[80];
    snprintf(type_name, sizeof type_name, "culeak_gdb.Culeak_%s", name[0] ? name : "overview");
    /* Py_tp_doc's slot is a void *; CPython copies the text and the type's name */
    PyType_Slot slots[] = {{Py_tp_doc, (void *)doc}, {Py_tp_methods, command_methods}, {0, NULL}};
    PyType_Spec spec = {type_name, 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
    PyObject *cls = PyType_FromSpecWithBases(&spec, bases);
    PyObject *cmd = NULL, *value = PyUnicode_FromString(name);
    int named = cls && value ? PyObject_SetAttrString(cls, "_culeak_command", value) : -1;
    Py_XDECREF(value);   /* SetAttr took its own reference */
    if (named == 0) {
        snprintf(full, sizeof full, "culeak%s%s", name[0] ? "-" : "", name);
        cmd = PyObject_CallFunction(cls, "sO", full, data);
    }
    snprintf(attr, sizeof attr, "_%s_command", name[0] ? name : "overview");
    int rc = 0;
    if (!cmd || PyModule_AddObject(module, attr, cmd) != 0) {
        Py_XDECREF(cmd);   /* AddObject steals the reference only when it succeeds */
        rc = -1;
    }
    Py_XDECREF(cls);
    return rc;
}

/* Every command of the table that gdb has, and culeak, their overview. A row in the plugin's own
 * form that the plugin lacks is an error: the table and the plugin have drifted. */
static int register_commands(PyObject *module)
{
    size_t n, len = 0;
    const struct cl_command_spec *c = cl_commands(&n);
    cl_appendf(overview, sizeof overview, &len,
               "culeak: who holds this memory? Its commands, each "
               "with help of its own (help culeak-info):\n");
    for (size_t i = 0; i < n; i++)
        if (c[i].flags & (CL_CMD_GDB | CL_CMD_GDB_OWN)) {
            const char *doc = c[i].flags & CL_CMD_GDB_OWN ? c[i].gdb_doc : c[i].help;
            int width = (int)strcspn(doc, ".\n");
            cl_appendf(overview, sizeof overview, &len, "\nculeak-%-12s %c%.*s", c[i].name,
                       doc[0] >= 'a' && doc[0] <= 'z' ? doc[0] - 32 : doc[0], width - 1, doc + 1);
        }
    PyObject *base = PyObject_GetAttrString(gdb, "Command");
    PyObject *data = PyObject_GetAttrString(gdb, "COMMAND_DATA");
    PyObject *bases = base ? PyTuple_Pack(1, base) : NULL;
    int rc = bases && data ? register_command(module, bases, data, "", overview) : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!(c[i].flags & (CL_CMD_GDB | CL_CMD_GDB_OWN)))
            continue;
        if ((c[i].flags & CL_CMD_GDB_OWN) && !own_command(c[i].name)) {
            PyErr_Format(PyExc_RuntimeError, "culeak-%s: the plugin has no form of it", c[i].name);
            rc = -1;
            break;
        }
        char doc[2048];
        command_doc(&c[i], doc, sizeof doc);
        rc = register_command(module, bases, data, c[i].name, doc);
    }
    Py_XDECREF(bases);
    Py_XDECREF(base);
    Py_XDECREF(data);
    if (rc)
        return rc;
    breakpoint_type = breakpoint_class("culeak_gdb.StepBreakpoint", breakpoint_methods);
    return breakpoint_type ? catch_oom_init() : -1;
}

PyObject *breakpoint_class(const char *name, PyMethodDef *methods)
{
    PyObject *base = PyObject_GetAttrString(gdb, "Breakpoint");
    PyObject *bases = base ? PyTuple_Pack(1, base) : NULL;
    /* read by PyType_FromSpecWithBases only; the name is kept (static storage) */
    PyType_Slot slots[] = {{Py_tp_methods, methods}, {0, NULL}};
    PyType_Spec spec = {name, 0, 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
    PyObject *cls = bases ? PyType_FromSpecWithBases(&spec, bases) : NULL;
    Py_XDECREF(bases);
    Py_XDECREF(base);
    return cls;
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "culeak_gdb",
    "culeak commands for gdb and cuda-gdb",
    -1,
    NULL,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit_culeak_gdb(void)
{
    gdb = PyImport_ImportModule("gdb");
    if (!gdb)
        return NULL;   /* not inside gdb: ImportError says so */
    PyObject *m = PyModule_Create(&module_def);
    if (m && register_commands(m) != 0)
        Py_CLEAR(m);
    return m;
}
