/* _Py_DebugOffsets, read off real runtimes (pyenv's 3.13.0, sid's 3.14.10 and 3.15.2 chroot'ed in
 * its root) and then served from an image: each is read through its own release's layout and
 * fills in exactly its table's values; read through the other minor's positions, or with an
 * offset past the struct size it states, or with two fields that must agree disagreeing, or
 * saying a release whose layout culeak has not seen (a beta), it is refused. */
#include <glob.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "cpython/debug_offsets.h"
#include "engine/session.h"
#include "image.h"
#include "suites.h"
#include "testutil.h"


#define BASE 0x300000u
static unsigned char img[CL_PAGE_SIZE];

static struct tu_image image = {.base = BASE, .bytes = img, .size = sizeof img};

/* The first bytes of _PyRuntime of a live python (argv[0] run as is, or through chroot), into
 * img. False if it could not be read. */
static bool capture(char *const argv[])
{
    int pipe_fd;
    pid_t pid = tu_spawn_ready(argv, &pipe_fd);
    int rc = pid > 0 ? 0 : -1;
    bool ok = false;
    struct cl_session_options so = {.pid = pid};
    struct cl_session *s;
    struct cl_error err;
    memset(img, 0, sizeof img);
    if (rc == 0 && cl_session_open(&so, &s, &err) == 0) {
        ok = cl_read(s->target, s->python.runtime_addr, img, PY_DEBUG_OFFSETS_MAX) == 0;
        cl_session_close(s);
    }
    if (rc == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    if (pipe_fd >= 0)
        close(pipe_fd);
    return ok;
}

static int read_image(unsigned minor, struct py_debug_offsets *d, struct cl_error *err)
{
    struct cl_open_options opt = {.cache_pages = 2};
    struct cl_target *t = tu_image_target(&image, CL_TARGET_GDB, &opt, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int rc = py_debug_offsets_read(t, BASE, minor, d, err);
    cl_target_close(t);
    return rc;
}

static void put64(size_t off, uint64_t v)
{
    tu_put64(&image, BASE + off, v);
}

#define SCRIPT "import time; print('up', flush=True); time.sleep(60)"

/* The image read as minor fills in table's values, with nothing to compare left over. */
static void check_fills(unsigned minor, const char *table)
{
    struct py_debug_offsets d;
    struct cl_error err;
    CU_ASSERT_EQUAL_FATAL(read_image(minor, &d, &err), 0);
    CU_ASSERT_EQUAL((d.version_hex >> 16) & 0xff, minor);
    CU_ASSERT_EQUAL(d.free_threaded, 0);
    const struct py_layout *l = py_layout_named(table);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    unsigned checked;
    CU_ASSERT_EQUAL(py_debug_offsets_compare(&d, l, NULL, &checked), 0);
    CU_ASSERT_TRUE(checked >= 40);
    struct py_layout filled = *l;
    py_debug_offsets_fill(&d, &filled);
    CU_ASSERT_EQUAL(memcmp(&filled, l, sizeof filled), 0);
}

static void test_313(void)
{
    glob_t g;
    const char *home = getenv("HOME") ? getenv("HOME") : "/root";
    char pattern[256];
    snprintf(pattern, sizeof pattern, "%s/.pyenv/versions/3.13.0/bin/python3.13", home);
    CU_ASSERT_FATAL(glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc == 1);
    char *argv[] = {g.gl_pathv[0], "-c", SCRIPT, NULL};
    bool ok = capture(argv);
    globfree(&g);
    CU_ASSERT_TRUE_FATAL(ok);
    check_fills(13, "3.13.0");
}

static void test_314(void)
{
    char *argv[] = {"chroot", "build/roots/sid", "/usr/bin/python3.14", "-c", SCRIPT, NULL};
    CU_ASSERT_TRUE_FATAL(capture(argv));
    check_fills(14, "3.14");
    struct py_debug_offsets d;
    struct cl_error err;
    unsigned char saved[sizeof img];
    memcpy(saved, img, sizeof img);

    put64(8, 0x030d12f0);   /* says 3.13.18: read at 3.13's positions, PyObject does not fit */
    CU_ASSERT_EQUAL(read_image(13, &d, &err), CL_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "PyObject"));
    memcpy(img, saved, sizeof img);
    CU_ASSERT_EQUAL(read_image(13, &d, &err), CL_E_UNSUPPORTED);   /* 3.14 read as 3.13 */

    uint64_t interp_size;
    memcpy(&interp_size, img + 48, sizeof interp_size);
    put64(88, interp_size);   /* interpreter_state.gc at its struct's end */
    CU_ASSERT_EQUAL(read_image(14, &d, &err), CL_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "interpreter_state.gc"));
    memcpy(img, saved, sizeof img);

    put64(464, 24);   /* tuple_object.ob_size against list_object.ob_size (16) */
    CU_ASSERT_EQUAL(read_image(14, &d, &err), CL_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "disagree"));
    memcpy(img, saved, sizeof img);

    img[0] = 'y';   /* no cookie: no _Py_DebugOffsets, not an error */
    CU_ASSERT_EQUAL(read_image(14, &d, &err), 0);
    CU_ASSERT_EQUAL(d.size, 0);
}

static void test_315(void)
{
    char *argv[] = {"chroot", "build/roots/sid", "/usr/bin/python3.15", "-c", SCRIPT, NULL};
    CU_ASSERT_TRUE_FATAL(capture(argv));
    check_fills(15, "3.15");
    struct py_debug_offsets d;
    struct cl_error err;
    put64(8, 0x030f00b2);   /* a beta of 3.15: its layout may differ, and is refused by name */
    CU_ASSERT_EQUAL(read_image(15, &d, &err), CL_E_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "3.15.0b2"));
    put64(8, 0x030f0cf0);   /* 3.15.12, a later patch release: the final releases' layout */
    CU_ASSERT_EQUAL(read_image(15, &d, &err), 0);
}

void register_cpython_debug_offsets_tests(void)
{
    static const struct tu_test tests[] = {
        {"_Py_DebugOffsets: 3.13.0 fills its table", test_313},
        {"_Py_DebugOffsets: 3.14.10 fills its table, corrupt ones refused", test_314},
        {"_Py_DebugOffsets: 3.15.2 fills its table, a beta's refused by name", test_315},
        {NULL, NULL},
    };
    tu_add_suite("cpython/debug_offsets", tests);
}
