/* The _PyRuntime scan, on real interpreters where the symbol gives the answer to compare with:
 * every pyenv build 3.9-3.13, the stripped system Python, and the Debian roots' 3.13.5, 3.13.18
 * and 3.14.10 (run chroot'ed in their roots). */
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

/* Starts python (chroot'ed in root when that is not NULL; chroot execs it, so the pid stays) and
 * waits until its runtime is up: its pid, or -1. */
static pid_t start_python(const char *python, const char *root, int *pipe_fd)
{
    char *script = "import time; print('up', flush=True); time.sleep(60)";
    char *argv[] = {(char *)python, "-c", script, NULL};
    char *chroot_argv[] = {"chroot", (char *)root, (char *)python, "-c", script, NULL};
    return tu_spawn_ready(root ? chroot_argv : argv, pipe_fd);
}

/* python runs chroot'ed in root when that is not NULL (chroot execs it: the pid stays). */
static void check_scan(const char *python, const char *root)
{
    int pipe_fd = -1;
    pid_t pid = start_python(python, root, &pipe_fd);
    CU_ASSERT_FATAL(pid > 0);
    struct cl_session_options so = {.pid = pid};
    struct cl_session *s;
    struct cl_error err;
    int rc = cl_session_open(&so, &s, &err);
    CU_ASSERT_EQUAL(rc, 0);
    if (rc == 0) {
        CU_ASSERT_STRING_EQUAL(s->python.runtime_found_by, "symbol _PyRuntime");
        uint64_t found;
        CU_ASSERT_EQUAL(py_runtime_scan(s->target, s->python.module, 0, &found), 0);
        if (found != s->python.runtime_addr)
            fprintf(stderr, "\n%s: scan found 0x%llx, symbol says 0x%llx\n", python,
                    (unsigned long long)found, (unsigned long long)s->python.runtime_addr);
        CU_ASSERT_EQUAL(found, s->python.runtime_addr);
        cl_session_close(s);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(pipe_fd);
}

static void test_scan_pyenv(void)
{
    static const char *const minors[] = {"3.9", "3.10", "3.11", "3.12", "3.13"};
    for (size_t i = 0; i < sizeof minors / sizeof *minors; i++) {
        char pattern[256];
        snprintf(pattern, sizeof pattern, "%s/.pyenv/versions/%s.*/bin/python%s",
                 getenv("HOME") ? getenv("HOME") : "/root", minors[i], minors[i]);
        glob_t g;
        int found = glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0;
        CU_ASSERT_TRUE(found);   /* the test machines have every pyenv build */
        if (found)
            check_scan(g.gl_pathv[g.gl_pathc - 1], NULL);
        globfree(&g);
    }
}

static void test_scan_system(void)
{
    check_scan("/usr/bin/python3", NULL);
}

/* Patch releases move the embedded main interpreter (3.13.5: +88400, 3.13.18: +88424): the scan
 * must not depend on the table's exact offset. */
static void test_scan_roots(void)
{
    check_scan("/usr/bin/python3.13", "build/roots/trixie");
    check_scan("/usr/bin/python3.13", "build/roots/sid");
    check_scan("/usr/bin/python3.14", "build/roots/sid");
}

void register_cpython_runtime_scan_tests(void)
{
    static const struct tu_test tests[] = {
        {"scan finds _PyRuntime (pyenv 3.9-3.13)", test_scan_pyenv},
        {"scan finds _PyRuntime (system python)", test_scan_system},
        {"scan finds _PyRuntime (Debian roots: 3.13.5, 3.13.18, 3.14.10)", test_scan_roots},
        {NULL, NULL},
    };
    tu_add_suite("cpython/runtime_scan", tests);
}
