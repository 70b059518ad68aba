/* Files written for the user: private and whole, and a device written in place, never replaced. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "util/output.h"

static void test_private_and_whole(void)
{
    char dir[] = "/tmp/culeak-output-XXXXXX", path[64];
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/report", dir);
    struct cl_output o;
    struct cl_error err;
    CU_ASSERT_EQUAL_FATAL(cl_output_open(path, &o, &err), 0);
    fputs("report", o.f);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);   /* not there until whole */
    CU_ASSERT_EQUAL(cl_output_commit(&o, &err), 0);
    struct stat st;
    CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
    CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
    CU_ASSERT_EQUAL(st.st_size, 6);
    /* a failed command leaves the earlier report as it was */
    CU_ASSERT_EQUAL_FATAL(cl_output_open(path, &o, &err), 0);
    fputs("half", o.f);
    cl_output_abort(&o);
    CU_ASSERT_EQUAL(stat(path, &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 6);
    unlink(path);
    rmdir(dir);
}

/* --torch-snapshot /dev/null (culeak dump runs blocks so) once replaced the device with a file of
 * mode 0600, which no other user could then open. A FIFO stands for the device here, so that a
 * regression cannot break the machine's /dev/null. */
static void test_device_in_place(void)
{
    char dir[] = "/tmp/culeak-output-XXXXXX", path[64], got[16] = "";
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/fifo", dir);
    CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
    int reader = open(path, O_RDWR | O_NONBLOCK);   /* a reader: opening it to write won't wait */
    CU_ASSERT_FATAL(reader >= 0);
    struct cl_output o;
    struct cl_error err;
    CU_ASSERT_EQUAL_FATAL(cl_output_open(path, &o, &err), 0);
    CU_ASSERT_PTR_NULL(o.tmp);
    fputs("through", o.f);
    CU_ASSERT_EQUAL(cl_output_commit(&o, &err), 0);
    CU_ASSERT_EQUAL(read(reader, got, sizeof got - 1), 7);
    CU_ASSERT_STRING_EQUAL(got, "through");
    struct stat st;
    CU_ASSERT_EQUAL(stat(path, &st), 0);
    CU_ASSERT_TRUE(S_ISFIFO(st.st_mode));
    close(reader);
    unlink(path);
    rmdir(dir);
}

void register_util_output_tests(void)
{
    static const struct tu_test tests[] = {
        {"written whole, mode 0600", test_private_and_whole},
        {"a device written in place", test_device_in_place},
        {NULL, NULL},
    };
    tu_add_suite("util/output", tests);
}
