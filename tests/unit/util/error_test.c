/* The error channel: codes, messages, stable names. */
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "util/error.h"

static void test_set(void)
{
    struct cl_error err = {0};
    CU_ASSERT_EQUAL(cl_error_set(&err, CL_E_TRUNCATED, "%s is %d bytes", "core", 12),
                    CL_E_TRUNCATED);
    CU_ASSERT_EQUAL(err.code, CL_E_TRUNCATED);
    CU_ASSERT_STRING_EQUAL(err.msg, "core is 12 bytes");
    CU_ASSERT_EQUAL(cl_error_set(NULL, CL_E_IO, "no error struct"), CL_E_IO);

    char long_arg[2000];
    memset(long_arg, 'a', sizeof long_arg - 1);
    long_arg[sizeof long_arg - 1] = '\0';
    cl_error_set(&err, CL_E_INTERNAL, "%s", long_arg);   /* cut to the buffer, terminated */
    CU_ASSERT_EQUAL(strlen(err.msg), sizeof err.msg - 1);
}

static void test_names(void)
{
    const char *names[] = {"ok",         "internal",    "usage",          "no-process",
                           "permission", "not-core",    "truncated-core", "exe-mismatch",
                           "not-python", "unsupported", "unreadable",     "io"};
    for (int c = CL_OK; c <= CL_E_IO; c++)
        CU_ASSERT_STRING_EQUAL(cl_status_name((enum cl_status)c), names[c]);
    CU_ASSERT_STRING_EQUAL(cl_status_name((enum cl_status)99), "unknown");
}

void register_util_error_tests(void)
{
    static const struct tu_test tests[] = {
        {"cl_error_set", test_set},
        {"cl_status_name", test_names},
        {NULL, NULL},
    };
    tu_add_suite("util/error", tests);
}
