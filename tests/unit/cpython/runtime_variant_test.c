/* Layout variants told apart by the runtime's own structure, on real interpreters: pyenv's 3.13.0
 * and trixie's 3.13.5 (chroot'ed in its root) each get the table read off their release, and each
 * refuses the other's (the GC's generation-0 pointer is not where that table has the first list),
 * as 3.13 refuses 3.14's table. */
#include <glob.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "cpython/runtime.h"
#include "engine/session.h"
#include "suites.h"
#include "testutil.h"

/* Opens the runtime of python with layout (NULL: chosen by structure): the status, and in *chosen
 * the table taken. */
static int open_with(struct cl_session *s, const char *layout, const char **chosen,
                     struct cl_error *err)
{
    const struct cl_python_info *py = &s->python;
    struct py_runtime_site site = {py->module, py->runtime_addr, py->version_hex, py->version,
                                   py->free_threaded};
    const struct py_layout *l = layout ? py_layout_named(layout) : NULL;
    CU_ASSERT_FATAL(!layout || l);
    static struct py_runtime rt;   /* a test's scratch; the struct is large for a stack */
    int rc = py_runtime_open_layout(s->target, &site, l, &rt, err);
    *chosen = rc ? NULL : rt.table->name;
    return rc;
}

#define SCRIPT "import time; print('up', flush=True); time.sleep(60)"

static void check_variants(char *const argv[], const char *own, const char *other)
{
    int pipe_fd = -1;
    pid_t pid = tu_spawn_ready(argv, &pipe_fd);
    CU_ASSERT_FATAL(pid > 0);
    struct cl_session_options so = {.pid = pid};
    struct cl_session *s;
    struct cl_error err;
    CU_ASSERT_EQUAL(cl_session_open(&so, &s, &err), 0);
    const char *chosen;
    CU_ASSERT_EQUAL(open_with(s, NULL, &chosen, &err), 0);
    CU_ASSERT_PTR_NOT_NULL(chosen);
    if (chosen)
        CU_ASSERT_STRING_EQUAL(chosen, own);
    CU_ASSERT_EQUAL(open_with(s, own, &chosen, &err), 0);
    CU_ASSERT_EQUAL(open_with(s, other, &chosen, &err), CL_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "generation 0"));
    CU_ASSERT_EQUAL(open_with(s, "3.14", &chosen, &err), CL_E_UNSUPPORTED);
    cl_session_close(s);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(pipe_fd);
}

static void test_3130(void)
{
    glob_t g;
    char pattern[256];
    snprintf(pattern, sizeof pattern, "%s/.pyenv/versions/3.13.0/bin/python3.13",
             getenv("HOME") ? getenv("HOME") : "/root");
    CU_ASSERT_FATAL(glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc == 1);
    char *argv[] = {g.gl_pathv[0], "-c", SCRIPT, NULL};
    check_variants(argv, "3.13.0", "3.13.5");
    globfree(&g);
}

static void test_3135(void)
{
    char *argv[] = {"chroot", "build/roots/trixie", "/usr/bin/python3.13", "-c", SCRIPT, NULL};
    check_variants(argv, "3.13.5", "3.13.0");
}

void register_cpython_runtime_variant_tests(void)
{
    static const struct tu_test tests[] = {
        {"3.13.0 gets its own variant and refuses 3.13.5's", test_3130},
        {"3.13.5 (trixie) gets its own variant and refuses 3.13.0's", test_3135},
        {NULL, NULL},
    };
    tu_add_suite("cpython/runtime_variant", tests);
}
