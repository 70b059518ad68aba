/* culeak-catch-oom: stops the job where torch's CUDA caching allocator throws its out-of-memory
 * error, before any frame unwinds, writes what the user asked (a culeak dump of that instant,
 * the leak report) and lets the job go on: its own `except`, or its death, happens as it would
 * have. The stop is a breakpoint on __cxa_throw whose exception type is compared with
 * c10::OutOfMemoryError's typeinfo (no `catch throw REGEX`, which needs libstdc++'s probes:
 * conda's libstdc++ has none). torch catches some of its own OOMs (a workspace it retries
 * without), so each OOM is followed until torch turns it into Python's torch.OutOfMemoryError
 * (PyErr_SetString with THPException_OutOfMemoryError), or the next one is thrown. */
#include "plugin.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/dump.h"
#include "engine/snapshot.h"

static struct {
    PyObject *thrown_bp;   /* on __cxa_throw: stops for c10::OutOfMemoryError */
    PyObject *python_bp;   /* on PyErr_SetString, while an OOM is on its way: did it get there */
    char *dump, *report;   /* --dump, --report: paths, NULL where not asked */
    bool json, once;
    unsigned thrown;       /* errors thrown so far, each numbered by it */
    char note[CL_MAX_NOTE + 1]; /* the error's message, for the dump and the report; "": none */
    bool on_its_way;       /* the last OOM thrown has not reached Python yet */
} oom;

static PyObject *thrown_class, *python_class;

/* The value of a gdb expression that names an address or register; false where gdb cannot
 * evaluate it (the library that defines it is not loaded yet). */
static bool eval_u64(const char *expr, uint64_t *out)
{
    PyObject *v = PyObject_CallMethod(gdb, "parse_and_eval", "s", expr);
    PyObject *i = v ? PyNumber_Long(v) : NULL;
    if (i)
        *out = (uint64_t)PyLong_AsUnsignedLongLongMask(i);
    bool ok = i != NULL;
    Py_XDECREF(i);
    Py_XDECREF(v);
    PyErr_Clear();
    return ok;
}

/* The call's argument k (0 or 1) at a function's first instruction: x86-64's rdi and rsi,
 * AArch64's x0 and x1. */
static bool argument(int k, uint64_t *out)
{
    static const char *const x86_64[] = {"$rdi", "$rsi"}, *const aarch64[] = {"$x0", "$x1"};
    return eval_u64(x86_64[k], out) || eval_u64(aarch64[k], out);
}

#define MESSAGE_MAX 4096 /* a c10::Error's message read, at most */

/* The thrown c10::OutOfMemoryError's message (its what(), without the backtrace) into oom.note:
 * the first member of c10::Error after its vtable is `std::string msg_` (c10/util/Exception.h),
 * libstdc++'s {char *data; size_t size; ...}; taken only if it reads as torch's own words
 * ("CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 ..."), else the note says why not. */
static void read_message(void)
{
    uint64_t obj, data, size;
    snprintf(oom.note, sizeof oom.note,
             "a CUDA out-of-memory error (c10::OutOfMemoryError; its "
             "message could not be read)");
    char expr[64];
    if (!argument(0, &obj))
        return;
    snprintf(expr, sizeof expr, "*(unsigned long *)%llu", (unsigned long long)(obj + 8));
    bool ok = eval_u64(expr, &data);
    snprintf(expr, sizeof expr, "*(unsigned long *)%llu", (unsigned long long)(obj + 16));
    if (!ok || !eval_u64(expr, &size) || size < 20 || size > MESSAGE_MAX)
        return;
    PyObject *inf = PyObject_CallMethod(gdb, "selected_inferior", NULL);
    PyObject *mem = inf ? PyObject_CallMethod(inf, "read_memory", "KK", (unsigned long long)data,
                                              (unsigned long long)size)
                        : NULL;
    PyObject *bytes = mem ? PyObject_CallMethod(mem, "tobytes", NULL) : NULL;
    const char *text = bytes && PyBytes_Check(bytes) ? PyBytes_AsString(bytes) : NULL;
    if (text && strncmp(text, "CUDA out of memory", 18) == 0) {
        size_t len = strcspn(text, "\n");
        len = len < (size_t)PyBytes_Size(bytes) ? len : (size_t)PyBytes_Size(bytes);
        len = len < sizeof oom.note - 1 ? len : sizeof oom.note - 1;
        memcpy(oom.note, text, len);
        oom.note[len] = '\0';
    }
    Py_XDECREF(bytes);
    Py_XDECREF(mem);
    Py_XDECREF(inf);
    PyErr_Clear();
}

/* A stop at a PLT stub (the callers' of the function, which gdb's breakpoint also covers) is
 * skipped: the call stops again at the function itself. */
static bool at_plt_stub(void)
{
    char *where = gdb_capture("info symbol $pc");
    bool plt = where && strstr(where, "@plt");
    free(where);
    return plt;
}

/* __cxa_throw(object, tinfo, dest): stops where tinfo is c10::OutOfMemoryError's. */
static PyObject *thrown_stop(PyObject *self, PyObject *noargs)
{
    (void)self, (void)noargs;
    uint64_t tinfo, oom_tinfo;
    if (argument(1, &tinfo) &&
        eval_u64("(unsigned long)&'typeinfo for c10::OutOfMemoryError'", &oom_tinfo) &&
        tinfo == oom_tinfo && !at_plt_stub())
        Py_RETURN_TRUE;
    Py_RETURN_FALSE;
}

/* PyErr_SetString(type, message): stops where type is torch.OutOfMemoryError. */
static PyObject *python_stop(PyObject *self, PyObject *noargs)
{
    (void)self, (void)noargs;
    uint64_t type, oom_type;
    if (argument(0, &type) &&
        eval_u64("*(unsigned long *)&THPException_OutOfMemoryError", &oom_type) &&
        type == oom_type && oom_type && !at_plt_stub())
        Py_RETURN_TRUE;
    Py_RETURN_FALSE;
}

static PyMethodDef thrown_methods[] = {{"stop", thrown_stop, METH_NOARGS, NULL},
                                       {NULL, NULL, 0, NULL}};
static PyMethodDef python_methods[] = {{"stop", python_stop, METH_NOARGS, NULL},
                                       {NULL, NULL, 0, NULL}};

int catch_oom_init(void)
{
    thrown_class = breakpoint_class("culeak_gdb.OutOfMemoryThrown", thrown_methods);
    python_class = breakpoint_class("culeak_gdb.OutOfMemoryInPython", python_methods);
    return thrown_class && python_class ? 0 : -1;
}

static void delete_breakpoint(PyObject **bp)
{
    if (*bp) {
        PyObject *r = PyObject_CallMethod(*bp, "delete", NULL);
        Py_XDECREF(r);
        PyErr_Clear();
        Py_CLEAR(*bp);
    }
}

static void catch_off(void)
{
    delete_breakpoint(&oom.thrown_bp);
    delete_breakpoint(&oom.python_bp);
    free(oom.dump);
    free(oom.report);
    memset(&oom, 0, sizeof oom);
}

static void set_enabled(PyObject *bp, bool enabled)
{
    if (bp && PyObject_SetAttrString(bp, "enabled", enabled ? Py_True : Py_False))
        PyErr_Clear();
}

/* A breakpoint of cls at location whose commands are commands; NULL with a Python error. */
static PyObject *new_breakpoint(PyObject *cls, const char *location, const char *commands)
{
    PyObject *bp = PyObject_CallFunction(cls, "s", location);
    PyObject *text = bp ? PyUnicode_FromString(commands) : NULL;
    if (bp && (!text || PyObject_SetAttrString(bp, "commands", text))) {
        PyObject *r = PyObject_CallMethod(bp, "delete", NULL);
        Py_XDECREF(r);
        Py_CLEAR(bp);
    }
    Py_XDECREF(text);
    return bp;
}

/* path with each {pid} replaced by the job's pid and each {n} by the OOM's number. */
static char *expand(const char *path, int pid, unsigned n)
{
    size_t cap = strlen(path) + 64, len = 0;
    char *out = malloc(cap);
    for (const char *p = path; out && *p;) {
        if (len + 24 >= cap) {
            char *more = realloc(out, cap *= 2);
            if (!more) {
                free(out);
                return NULL;
            }
            out = more;
        }
        if (strncmp(p, "{pid}", 5) == 0) {
            len += (size_t)snprintf(out + len, cap - len, "%d", pid);
            p += 5;
        } else if (strncmp(p, "{n}", 3) == 0) {
            len += (size_t)snprintf(out + len, cap - len, "%u", n);
            p += 3;
        } else {
            out[len++] = *p++;
        }
    }
    if (out)
        out[len] = '\0';
    return out;
}

/* `culeak dump` of the job as it stands, into path. */
static int write_dump(const struct cl_session_options *so, const char *path, FILE *log,
                      struct cl_error *err)
{
    struct cl_command_line cli = {.command = "dump",
                                  .session = *so,
                                  .output = path,
                                  .tensor_filter = {.device = -1},
                                  .block_filter = {.device = -1}};
    cli.session.open.note = oom.note;
    return cl_command_dump(&cli, log, err);
}

/* What grew since the last snapshot culeak-snapshot took, if one was (a line as watch prints),
 * into since (growth cap bytes); false when none was taken. */
static bool grew_since(struct cl_session *s, struct cl_since *since, char *growth, size_t cap)
{
    const char *name;
    const struct cl_snapshot *last = last_snapshot(&name);
    struct cl_snapshot now;
    struct cl_error err = {0};
    if (!last || cl_snapshot_take(s, NULL, &now, &err))
        return false;
    cl_snapshot_delta(last, &now, growth, cap);
    cl_snapshot_free(&now);
    *since = (struct cl_since){name, last->time, growth};
    return true;
}

/* The leak report (summary), text or JSON, into path; with what grew since the last snapshot,
 * which gdb prints too. */
static int write_report(const char *path, struct cl_error *err)
{
    struct cl_command_line cli = {.command = "summary",
                                  .json = oom.json,
                                  .output = path, /* written whole, 0600 (cl_command_run) */
                                  .tensor_filter = {.device = -1},
                                  .block_filter = {.device = -1}};
    struct gdb_target g = {0};
    struct cl_session *s = NULL;
    struct cl_since since;
    char growth[2048], line[2200];
    int rc = open_session(&g, &s, err);
    if (!rc && !(s->target->note = strdup(oom.note)))
        rc = cl_error_set(err, CL_E_INTERNAL, "out of memory");
    if (!rc && grew_since(s, &since, growth, sizeof growth)) {
        cli.since = &since;
        snprintf(line, sizeof line, "culeak: grew since snapshot %s: %s\n", since.snapshot, growth);
        gdb_write(line);
    }
    if (!rc)
        rc = cl_command_run(&cli, s, NULL, err);
    cl_session_close(s);
    gdb_target_free(&g);
    return rc;
}

/* An OOM of which no PyErr_SetString was seen before the next one: torch caught it. */
static void note_caught_inside(void)
{
    char line[160];
    if (!oom.on_its_way)
        return;
    snprintf(line, sizeof line,
             "culeak: out-of-memory error %u was caught inside torch: it never reached Python\n",
             oom.thrown);
    gdb_write(line);
    oom.on_its_way = false;
}

/* culeak-oom-report: the OOM breakpoint's commands run it, once gdb has stopped every thread. */
PyObject *oom_report_command(const char *command, struct args *a)
{
    (void)command;
    if (a->argc > 1)
        return gdb_error("culeak-oom-report takes no arguments (culeak-catch-oom sets it up)");
    set_flag_variable("culeak_stop", true);
    if (!oom.thrown_bp)
        return gdb_error("no out-of-memory catching (culeak-catch-oom starts it)");
    note_caught_inside();
    oom.thrown++;
    oom.on_its_way = true;
    read_message();
    set_enabled(oom.python_bp, true);
    char line[4096];
    snprintf(line, sizeof line,
             "culeak: out-of-memory error %u thrown (c10::OutOfMemoryError), before anything "
             "unwinds: %s\n",
             oom.thrown, oom.note);
    gdb_write(line);
    struct gdb_target g = {0};
    struct cl_session_options so;
    struct cl_error err = {0};
    int rc = target_options(&g, &so, &err);
    if (!rc && so.core)
        rc = cl_error_set(&err, CL_E_USAGE, "culeak-catch-oom wants a live job, not a core");
    if (!rc && oom.dump && g.through_gdb)
        rc = cl_error_set(&err, CL_E_USAGE,
                          "--dump reads the job itself, which gdb runs natively only (here "
                          "through its remote target): --report works");
    char *dump = !rc && oom.dump ? expand(oom.dump, so.pid, oom.thrown) : NULL;
    char *report = !rc && oom.report ? expand(oom.report, so.pid, oom.thrown) : NULL;
    if (!rc && dump) {
        char *log = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&log, &len);
        rc =
            f ? write_dump(&so, dump, f, &err) : cl_error_set(&err, CL_E_INTERNAL, "out of memory");
        if (f)
            fclose(f);
        if (log && len)
            gdb_write(log);
        free(log);
    }
    if (!rc && report && !(rc = write_report(report, &err))) {
        snprintf(line, sizeof line, "culeak: report: %s\n", report);
        gdb_write(line);
    }
    gdb_target_free(&g);
    free(dump);
    free(report);
    if (rc) {
        snprintf(line, sizeof line, "culeak: at out-of-memory error %u: %s\n", oom.thrown, err.msg);
        gdb_write(line);
    }
    /* asked for nothing to write: the job stays stopped here, to be looked at */
    set_flag_variable("culeak_stop", !oom.dump && !oom.report);
    Py_RETURN_NONE;
}

/* culeak-oom-reached: the PyErr_SetString breakpoint's commands run it. */
PyObject *oom_reached_command(const char *command, struct args *a)
{
    (void)command, (void)a;
    set_flag_variable("culeak_stop", false);
    if (!oom.thrown_bp)
        return gdb_error("no out-of-memory catching (culeak-catch-oom starts it)");
    set_enabled(oom.python_bp, false);
    oom.on_its_way = false;
    char line[256];
    snprintf(line, sizeof line,
             "culeak: out-of-memory error %u reached Python (torch.OutOfMemoryError)\n",
             oom.thrown);
    gdb_write(line);
    if (oom.once) {
        /* Disabled, not deleted: gdb is running this breakpoint's commands (the next
         * culeak-catch-oom deletes them). The job stays stopped, for gdb to let go of: a detach
         * among the commands crashes gdb 13, and a batch gdb detaches as it ends. */
        set_enabled(oom.thrown_bp, false);
        oom.once = false;
        gdb_write("culeak: --once: done; the job is stopped where torch raises it: detach lets "
                  "it run on to its own except (a batch gdb detaches as it ends)\n");
        set_flag_variable("culeak_stop", true);
    }
    Py_RETURN_NONE;
}

#define USAGE \
    "usage: culeak-catch-oom [--dump FILE] [--report FILE] [--json] [--once] | culeak-catch-oom " \
    "--off"

/* culeak-catch-oom [--dump FILE] [--report FILE] [--json] [--once] | --off */
PyObject *catch_oom_command(const char *command, struct args *a)
{
    (void)command;
    const char *dump = NULL, *report = NULL;
    bool json = false, once = false, off = false;
    for (int i = 1; i < a->argc; i++) {
        const char *w = a->argv[i];
        bool value = i + 1 < a->argc && a->argv[i + 1][0];
        if (strcmp(w, "--dump") == 0 && value)
            dump = a->argv[++i];
        else if (strcmp(w, "--report") == 0 && value)
            report = a->argv[++i];
        else if (strcmp(w, "--json") == 0)
            json = true;
        else if (strcmp(w, "--once") == 0)
            once = true;
        else if (strcmp(w, "--off") == 0)
            off = true;
        else
            return gdb_error(USAGE);
    }
    if (off && (dump || report || json || once))
        return gdb_error(USAGE);
    catch_off();
    if (off) {
        gdb_write("culeak: out-of-memory catching off\n");
        Py_RETURN_NONE;
    }
    PyObject *r = PyObject_CallMethod(gdb, "execute", "s", "set breakpoint pending on");
    Py_XDECREF(r);
    PyErr_Clear();
    oom.thrown_bp =
        new_breakpoint(thrown_class, "__cxa_throw",
                       "silent\nculeak-oom-report\nif $culeak_stop == 0\n  continue\nend");
    oom.python_bp = oom.thrown_bp ? new_breakpoint(python_class, "PyErr_SetString",
                                                   "silent\nculeak-oom-reached\n"
                                                   "if $culeak_stop == 0\n  continue\nend")
                                  : NULL;
    if (!oom.python_bp) {
        catch_off();
        return NULL;
    }
    set_enabled(oom.python_bp, false);
    oom.dump = dump ? strdup(dump) : NULL;
    oom.report = report ? strdup(report) : NULL;
    oom.json = json;
    oom.once = once;
    char line[4200];
    snprintf(line, sizeof line, "culeak: catching CUDA out-of-memory errors%s%s%s%s%s\n",
             dump ? "; dump to " : "", dump ? dump : "", report ? "; report to " : "",
             report ? report : "", !dump && !report ? ": the job stays stopped at each" : "");
    gdb_write(line);
    Py_RETURN_NONE;
}
