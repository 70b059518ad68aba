/* What the plugin's files share (gdbplugin/culeak_gdb.c keeps them): talking to gdb, the target
 * gdb has, and a command's arguments. */
#ifndef CULEAK_GDBPLUGIN_PLUGIN_H
#define CULEAK_GDBPLUGIN_PLUGIN_H

#define Py_LIMITED_API 0x03080000
#include <Python.h>

#include <stdbool.h>

#include "engine/command.h"

#define MAX_ARGS 64

extern PyObject *gdb;   /* the gdb module */

char *utf8_dup(PyObject *s);
/* gdb.write(text); errors cleared */
void gdb_write(const char *text);
/* Raises gdb.GdbError(msg): gdb prints msg alone; returns NULL. */
PyObject *gdb_error(const char *msg);
/* gdb.execute(cmd, to_string=True), malloc'ed; NULL on error. */
char *gdb_capture(const char *cmd);
/* Sets the convenience variable $name to value (what a breakpoint's commands test). */
void set_flag_variable(const char *name, bool value);
/* A subclass of gdb.Breakpoint named name (static storage) with methods (stop, ...). */
PyObject *breakpoint_class(const char *name, PyMethodDef *methods);

/* The target gdb has. */
struct gdb_target {
    bool through_gdb;          /* neither native nor a core: read through gdb's read_memory */
    char *core, *exe, *sysroot, *solib_path;
    const char *lib_dirs[CL_MAX_LIB_DIRS];
};
void gdb_target_free(struct gdb_target *g);
/* Session options for it (a native process gdb holds stopped, or its core). */
int target_options(struct gdb_target *g, struct cl_session_options *so, struct cl_error *err);
int open_session(struct gdb_target *g, struct cl_session **s, struct cl_error *err);

/* A command's words: argv[0] its name, then gdb.string_to_argv of the rest. */
struct args {
    int argc;
    char *argv[MAX_ARGS + 1];
};

/* culeak-catch-oom and the commands its breakpoints run (gdbplugin/catch_oom.c); the module
 * makes its breakpoint classes first (0, or -1 with a Python error). */
int catch_oom_init(void);
/* The snapshot culeak-snapshot took or loaded last, and its name; NULL when none. */
const struct cl_snapshot *last_snapshot(const char **name);
PyObject *catch_oom_command(const char *command, struct args *a);
PyObject *oom_report_command(const char *command, struct args *a);
PyObject *oom_reached_command(const char *command, struct args *a);

#endif
