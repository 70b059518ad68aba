/* /proc/PID/stat parsing: the command name may hold spaces and parentheses; a line cut short or
 * not a stat line is refused, not half read. */
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "target/procstat.h"
#include "testutil.h"

static void test_parse(void)
{
    struct cl_proc_stat st;
    CU_ASSERT(cl_proc_stat_parse("1234 (python3) S 1 1234 1234 0 -1 4194560 100 0 0 0", &st));
    CU_ASSERT_EQUAL(st.state, 'S');
    CU_ASSERT_EQUAL(st.flags, 4194560ul);
    /* a command name made to look like the fields that follow it */
    CU_ASSERT(cl_proc_stat_parse("77 (a) R 1 2 3 4 5 6 (b) t 1 77 77 0 -1 2097216 0", &st));
    CU_ASSERT_EQUAL(st.state, 't');
    CU_ASSERT_EQUAL(st.flags, 2097216ul);
    CU_ASSERT_FALSE(cl_proc_stat_parse("77 (cut) S 1 2", &st));
    CU_ASSERT_EQUAL(st.state, 0);
    CU_ASSERT_FALSE(cl_proc_stat_parse("no parenthesis here", &st));
    CU_ASSERT_FALSE(cl_proc_stat_parse("5 (x)", &st));
    CU_ASSERT_FALSE(cl_proc_stat_parse("", &st));
}

static void test_read_self(void)
{
    struct cl_proc_stat st;
    CU_ASSERT(cl_proc_stat_read(getpid(), &st));
    CU_ASSERT_EQUAL(st.state, 'R');   /* reading its own stat, it runs */
    CU_ASSERT_FALSE(cl_proc_stat_read(0x7fffffff, &st));
    CU_ASSERT_EQUAL(st.state, 0);
}

void register_target_procstat_tests(void)
{
    static const struct tu_test tests[] = {
        {"parse", test_parse},
        {"read its own", test_read_self},
        {NULL, NULL},
    };
    tu_add_suite("target/procstat", tests);
}
