/* culeak._native: the engine for Python scripts (python/culeak/__init__.py is the API over it).
 * One Session is one open target: a live process copied once (or stopped, past the copy limit),
 * a core, or a dump; each run() is a command on it, returning the report's text, so several
 * reports come from one look at the process; run_files() runs the commands that read snapshot
 * files only (diff A B, merge), and children() lists a torchrun agent's workers. Built against
 * the stable ABI (3.8+), as the gdb plugin is, so one binary serves every CPython. The walk runs
 * without the GIL: threads can inspect several targets at once. */
#define Py_LIMITED_API 0x03080000
#include <Python.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "engine/command.h"
#include "target/children.h"
#include "util/version.h"

#define MAX_ARGS 64                          /* a target's options, or a command's */
#define MAX_FILE_ARGS (CL_MAX_TARGETS + 8)   /* merge: a file per rank */

static PyObject *error_type;   /* culeak._native.Error(code, message) */

struct session {
    PyObject_HEAD struct cl_session *s;
    struct cl_command_line target;   /* the target options: the session points into it */
    char *argv[MAX_ARGS + 1];        /* ... and into these, which it parsed */
    int argc;
    bool busy;                       /* a command is running on it (in another thread) */
};

static PyObject *fail_with(enum cl_status code, const char *msg)
{
    PyObject *args = Py_BuildValue("(ss)", cl_status_name(code), msg);
    if (args) {
        PyErr_SetObject(error_type, args);
        Py_DECREF(args);
    }
    return NULL;
}

/* args (a list of str) as argv[1..], argv[0] a program name, in argv[cap + 1]: 0, or -1 with
 * an exception set. */
static int take_args(PyObject *args, char **argv, int cap, int *argc)
{
    Py_ssize_t n = PyList_Check(args) ? PyList_Size(args) : -1;
    if (n < 0 || n >= cap) {
        PyErr_Format(PyExc_TypeError, "arguments: a list of at most %d strings", cap - 1);
        return -1;
    }
    argv[0] = strdup("culeak");
    *argc = 1;
    for (Py_ssize_t i = 0; argv[0] && i < n; i++) {
        PyObject *b = PyUnicode_AsUTF8String(PyList_GetItem(args, i));
        argv[*argc] = b ? strdup(PyBytes_AsString(b)) : NULL;
        Py_XDECREF(b);
        if (!argv[*argc])
            break;
        (*argc)++;
    }
    if (argv[0] && *argc == n + 1)
        return 0;
    for (int i = 0; i < *argc; i++)
        free(argv[i]);
    *argc = 0;
    if (!PyErr_Occurred())
        PyErr_NoMemory();
    return -1;
}

static void free_args(char **argv, int argc)
{
    for (int i = 0; i < argc; i++)
        free(argv[i]);
}

static void session_dealloc(PyObject *self)
{
    struct session *so = (struct session *)self;
    cl_session_close(so->s);
    free_args(so->argv, so->argc);
    PyObject *type = (PyObject *)Py_TYPE(self);
    freefunc free_self = (freefunc)PyType_GetSlot(Py_TYPE(self), Py_tp_free);
    free_self(self);
    Py_DECREF(type);
}

/* Session(args): opens the target the options in args name (--pid P, --core F, --sysroot D...). */
static PyObject *session_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *list;
    if (kwargs || !PyArg_ParseTuple(args, "O", &list))
        return PyErr_Format(PyExc_TypeError, "Session(args): one list of str");
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    struct session *so = (struct session *)alloc(type, 0);
    if (!so)
        return NULL;
    if (take_args(list, so->argv, MAX_ARGS, &so->argc)) {
        Py_DECREF(so);
        return NULL;
    }
    struct cl_error err = {0};
    so->target =
        (struct cl_command_line){.tensor_filter = {.device = -1}, .block_filter = {.device = -1}};
    int rc = cl_command_parse(so->argc, so->argv, 1, false, true, &so->target, &err);
    if (rc == 0 && !so->target.session.pid && !so->target.session.core && !so->target.session.dump)
        rc = cl_error_set(&err, CL_E_USAGE, "no target: give a pid, a core or a dump");
    if (rc) {
        Py_DECREF(so);
        return fail_with(rc < 0 ? CL_E_USAGE : (enum cl_status)rc,
                         rc < 0 ? "not a target" : err.msg);
    }
    Py_BEGIN_ALLOW_THREADS rc = cl_session_open(&so->target.session, &so->s, &err);
    Py_END_ALLOW_THREADS if (rc)
    {
        Py_DECREF(so);
        return fail_with(rc, err.msg);
    }
    return (PyObject *)so;
}

/* Whether the command runs on an open target (engine/table.h): not on files alone (diff A B,
 * merge), nor opening targets itself (watch, dump). */
static bool runs_on_session(const struct cl_command_line *cl)
{
    const struct cl_command_spec *c = cl_command_find(cl->command);
    return c && c->run && !cl_command_offline(cl);
}

/* Runs a parsed command, on s or (NULL) on its files, without the GIL: what it printed, or
 * culeak.Error. */
static PyObject *run_printing(const struct cl_command_line *cl, struct cl_session *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out)
        return PyErr_NoMemory();
    struct cl_error err = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS rc =
        s ? cl_command_run(cl, s, out, &err) : cl_command_run_offline(cl, out, &err);
    fclose(out);
    Py_END_ALLOW_THREADS PyObject *result =
        rc ? fail_with(rc, err.msg) : PyUnicode_FromStringAndSize(text, (Py_ssize_t)len);
    free(text);
    return result;
}

/* Session.run(args): the command and its options in args; returns what it printed. */
static PyObject *session_run(PyObject *self, PyObject *args)
{
    struct session *so = (struct session *)self;
    PyObject *list;
    if (!PyArg_ParseTuple(args, "O", &list))
        return NULL;
    if (!so->s)
        return fail_with(CL_E_USAGE, "the target is closed");
    if (so->busy)
        return fail_with(CL_E_USAGE, "a command is already running on this target");
    char *argv[MAX_ARGS + 1];
    int argc;
    if (take_args(list, argv, MAX_ARGS, &argc))
        return NULL;
    struct cl_command_line cl = {.tensor_filter = {.device = -1}, .block_filter = {.device = -1}};
    struct cl_error err = {0};
    int rc = cl_command_parse(argc, argv, 1, true, false, &cl, &err);
    if (rc == 0 && !runs_on_session(&cl))
        rc = cl_error_set(&err, CL_E_USAGE, "%s does not run on an open target", cl.command);
    if (rc) {
        free_args(argv, argc);
        return fail_with(rc < 0 ? CL_E_USAGE : (enum cl_status)rc,
                         rc < 0 ? "no help here" : err.msg);
    }
    so->busy = true;
    PyObject *result = run_printing(&cl, so->s);
    so->busy = false;
    free_args(argv, argc);
    return result;
}

/* Session.close(): detaches (a process still stopped resumes) and frees; idempotent. */
static PyObject *session_close(PyObject *self, PyObject *noargs)
{
    (void)noargs;
    struct session *so = (struct session *)self;
    if (so->busy)
        return fail_with(CL_E_USAGE, "a command is still running on this target");
    cl_session_close(so->s);
    so->s = NULL;
    Py_RETURN_NONE;
}

/* run_files(args): diff A B or merge A B..., which read snapshot files and no target. */
static PyObject *run_files(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *list;
    if (!PyArg_ParseTuple(args, "O", &list))
        return NULL;
    char **argv = calloc(MAX_FILE_ARGS + 1, sizeof *argv);
    struct cl_command_line *cl = calloc(1, sizeof *cl);   /* a file and a target per rank: big */
    int argc;
    if (!argv || !cl || take_args(list, argv, MAX_FILE_ARGS, &argc)) {
        free(argv);
        free(cl);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    *cl = (struct cl_command_line){.tensor_filter = {.device = -1}, .block_filter = {.device = -1}};
    struct cl_error err = {0};
    int rc = cl_command_parse(argc, argv, 1, true, false, cl, &err);
    if (rc == 0 && !cl_command_offline(cl))
        rc = cl_error_set(&err, CL_E_USAGE, "%s reads a target: culeak.open it", cl->command);
    PyObject *result =
        rc ? fail_with(rc < 0 ? CL_E_USAGE : (enum cl_status)rc, rc < 0 ? "no help here" : err.msg)
           : run_printing(cl, NULL);
    free_args(argv, argc);
    free(argv);
    free(cl);
    return result;
}

/* children(pid): the pids of a live process's children (a torchrun agent's workers). */
static PyObject *children(PyObject *module, PyObject *args)
{
    (void)module;
    int pid;
    if (!PyArg_ParseTuple(args, "i", &pid))
        return NULL;
    int pids[CL_MAX_TARGETS];
    size_t n = cl_proc_children(pid, pids, CL_MAX_TARGETS);
    if (n > CL_MAX_TARGETS) {
        char msg[64];
        snprintf(msg, sizeof msg, "more than %d children", CL_MAX_TARGETS);
        return fail_with(CL_E_USAGE, msg);
    }
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *item = PyLong_FromLong(pids[i]);
        if (!item || PyList_SetItem(list, (Py_ssize_t)i, item)) {   /* SetItem takes item */
            Py_DECREF(list);
            return NULL;
        }
    }
    return list;
}

/* allow_tracer(pid): lets process pid trace this one under kernel.yama.ptrace_scope 1, where
 * only ancestors may (culeak.dump_on_oom's culeak is a child); 0 takes it back. False where the
 * kernel has no Yama, which then does not restrict a child. */
static PyObject *allow_tracer(PyObject *module, PyObject *args)
{
    (void)module;
    int pid;
    if (!PyArg_ParseTuple(args, "i", &pid))
        return NULL;
    return PyBool_FromLong(prctl(PR_SET_PTRACER, (unsigned long)pid, 0, 0, 0) == 0);
}

/* One row of the command table as a dict: what the checks of the package, the plugin and the
 * docs against the table read (tests/integration/test_commands.py, scripts/check-commands). */
static PyObject *command_dict(const struct cl_command_spec *c)
{
    const char *options[CL_O_NUMBER_OF_OPTIONS];
    size_t n = cl_command_options(c->name, CL_FRONT_CLI, options, CL_O_NUMBER_OF_OPTIONS);
    PyObject *names = PyList_New(0);
    for (size_t i = 0; names && i < n; i++) {
        PyObject *o = PyUnicode_FromString(options[i]);
        if (!o || PyList_Append(names, o)) {
            Py_XDECREF(o);
            Py_CLEAR(names);
        } else {
            Py_DECREF(o);
        }
    }
    const char *gdb = c->flags & CL_CMD_GDB ? "engine" : c->flags & CL_CMD_GDB_OWN ? "own" : NULL;
    PyObject *d =
        names ? Py_BuildValue("{s:s,s:O,s:z,s:z,s:z,s:z,s:O,s:O,s:O}", "name", c->name, "cli",
                              c->flags & CL_CMD_GDB_ONLY ? Py_False : Py_True, "schema", c->schema,
                              "python", c->python, "no_python", c->no_python, "gdb", gdb, "options",
                              names, "dumped", c->flags & CL_CMD_DUMPED ? Py_True : Py_False,
                              "many", c->flags & CL_CMD_MANY ? Py_True : Py_False)
              : NULL;
    Py_XDECREF(names);
    return d;
}

/* commands(): the command table, a dict a row. */
static PyObject *commands(PyObject *module, PyObject *noargs)
{
    (void)module;
    (void)noargs;
    size_t n;
    const struct cl_command_spec *c = cl_commands(&n);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *row = command_dict(&c[i]);
        if (!row || PyList_SetItem(list, (Py_ssize_t)i, row))   /* SetItem takes row */
            Py_CLEAR(list);
    }
    return list;
}

static PyMethodDef module_methods[] = {
    {"run_files", run_files, METH_VARARGS, "run_files([command, files...]) -> the report's text"},
    {"commands", commands, METH_NOARGS, "commands() -> the command table, a dict a row"},
    {"children", children, METH_VARARGS, "children(pid) -> [pid, ...]"},
    {"allow_tracer", allow_tracer, METH_VARARGS, "allow_tracer(pid) -> whether Yama took it"},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef session_methods[] = {
    {"run", session_run, METH_VARARGS, "run([command, options...]) -> the report's text"},
    {"close", session_close, METH_NOARGS, "close(): detach from the target"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot session_slots[] = {
    {Py_tp_new, (void *)session_new},
    {Py_tp_dealloc, (void *)session_dealloc},
    {Py_tp_methods, session_methods},
    {Py_tp_doc, "Session([target options]): one open target"},
    {0, NULL},
};

static PyType_Spec session_spec = {"culeak._native.Session", sizeof(struct session), 0,
                                   Py_TPFLAGS_DEFAULT, session_slots};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, .m_name = "culeak._native",
                                        .m_doc = "culeak's engine (see the culeak package)",
                                        .m_size = -1, .m_methods = module_methods};

PyMODINIT_FUNC PyInit__native(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    PyObject *session = PyType_FromSpec(&session_spec);
    error_type = PyErr_NewException("culeak._native.Error", NULL, NULL);
    /* PyModule_AddObject takes the reference only when it succeeds */
    if (!session || PyModule_AddObject(m, "Session", session)) {
        Py_XDECREF(session);
        Py_DECREF(m);
        return NULL;
    }
    Py_XINCREF(error_type);   /* one for the module, one for fail_with */
    if (!error_type || PyModule_AddObject(m, "Error", error_type) ||
        PyModule_AddStringConstant(m, "version", CL_VERSION)) {
        Py_XDECREF(error_type);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
