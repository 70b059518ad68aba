/* Marked paths: the display text drops the marks, the steps split at them, and a path cut short
 * (a partial mark at its end) still reads. */
#include <string.h>

#include <CUnit/CUnit.h>

#include "cpython/path.h"
#include "suites.h"
#include "testutil.h"

#define M "\x1f"

static void test_text(void)
{
    char out[64];
    CU_ASSERT_STRING_EQUAL(py_path_text(M "r__main__" M "a.history" M "i[17]", out, sizeof out),
                           "__main__.history[17]");
    CU_ASSERT_STRING_EQUAL(py_path_text("[*" M "r__main__" M "d][2]", out, sizeof out),
                           "[*__main__][2]");
    CU_ASSERT_STRING_EQUAL(py_path_text(M "rx" M, out, sizeof out), "x");   /* cut at a mark */
    CU_ASSERT_STRING_EQUAL(py_path_text("plain.path", out, sizeof out), "plain.path");
    CU_ASSERT_STRING_EQUAL(py_path_text(M "r__main__" M "a.history", out, 6), "__mai");
    CU_ASSERT_STRING_EQUAL(py_path_text(M "r__main__" M "a.history", out, 9), "__main__");
    CU_ASSERT_STRING_EQUAL(py_path_text(M "r__main__" M "a.history", out, 10), "__main__.");
    CU_ASSERT_STRING_EQUAL(py_path_text(M "r__main__", out, 1), "");
}

static void test_steps(void)
{
    struct py_path_step s[4];
    const char *path = "[*" M "r__main__" M "g → AddBackward0" M "d][2]";
    CU_ASSERT_EQUAL(py_path_steps(path, s, 4), 3);
    CU_ASSERT_EQUAL(s[0].kind, PY_PATH_ROOT);
    CU_ASSERT_EQUAL(s[0].len, strlen("__main__"));
    CU_ASSERT_EQUAL(strncmp(s[0].text, "__main__", s[0].len), 0);
    CU_ASSERT_EQUAL(s[1].kind, PY_PATH_AUTOGRAD);
    CU_ASSERT_EQUAL(strncmp(s[1].text, " → AddBackward0", s[1].len), 0);
    CU_ASSERT_EQUAL(s[2].kind, PY_PATH_DICT_KEY);
    CU_ASSERT_EQUAL(py_path_steps(path, s, 1), 3);   /* counts past cap, writes cap */
    CU_ASSERT_EQUAL(py_path_steps("plain", s, 4), 0);
    CU_ASSERT_EQUAL(py_path_steps(M "rx" M, s, 4), 1);   /* a mark with no kind is no step */
}

static void test_kind_names(void)
{
    CU_ASSERT_STRING_EQUAL(py_path_kind_name(PY_PATH_ATTR), "attr");
    CU_ASSERT_STRING_EQUAL(py_path_kind_name(PY_PATH_ELIDED), "elided");
    CU_ASSERT_PTR_NULL(py_path_kind_name((enum py_path_kind)'?'));   /* a step cut short */
}

void register_cpython_path_tests(void)
{
    static const struct tu_test tests[] = {
        {"display text", test_text},
        {"steps", test_steps},
        {"kind names", test_kind_names},
        {NULL, NULL},
    };
    tu_add_suite("cpython/path", tests);
}
