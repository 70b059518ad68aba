/* Progress lines: silent for short work, a line redrawn in place once the first second (or
 * CULEAK_PROGRESS_AFTER) has passed, and a last line that ends it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "util/progress.h"

static void test_silent_when_short(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct cl_progress p;
    cl_progress_start(&p, out, "walked");
    cl_progress_tick(&p, 4096, 1000000);   /* well within the first second */
    cl_progress_done(&p, 5000, 2000000);
    fclose(out);
    CU_ASSERT_EQUAL(len, 0);
    free(text);
}

static void test_lines_after_a_second(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct cl_progress p;
    cl_progress_start(&p, out, "walked");
    p.next = p.start;   /* as if the first second had passed */
    cl_progress_tick(&p, 4096, 1500000);
    cl_progress_tick(&p, 8192, 1600000);   /* drawn again only a second later */
    cl_progress_done(&p, 9000, 2500000);
    fclose(out);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\rculeak: 4096 objects walked, 1.5 MB read"));
    CU_ASSERT_PTR_NULL(strstr(text, "8192"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\rculeak: 9000 objects walked, 2.5 MB read"));
    CU_ASSERT_EQUAL(text[len - 1], '\n');
    free(text);
}

static void test_first_after_from_environment(void)
{
    static const struct {
        const char *value;
        double after;
    } cases[] = {{"0", 0}, {"2.5", 2.5}, {"", 1}, {"soon", 1}, {"1s", 1}, {"-1", 1}, {"1e9", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv("CULEAK_PROGRESS_AFTER", cases[i].value, 1);
        struct cl_progress p;
        cl_progress_start(&p, stderr, "walked");
        CU_ASSERT_DOUBLE_EQUAL(p.next - p.start, cases[i].after, 1e-9);
    }
    unsetenv("CULEAK_PROGRESS_AFTER");
}

static void test_no_stream(void)
{
    struct cl_progress p;
    cl_progress_start(&p, NULL, "walked");
    p.next = p.start;
    cl_progress_tick(&p, 1, 1);   /* nothing to write to: nothing happens */
    cl_progress_done(&p, 1, 1);
    CU_ASSERT_FALSE(p.shown);
}

void register_util_progress_tests(void)
{
    static const struct tu_test tests[] = {
        {"silent when short", test_silent_when_short},
        {"lines after a second", test_lines_after_a_second},
        {"first line after CULEAK_PROGRESS_AFTER", test_first_after_from_environment},
        {"no stream", test_no_stream},
        {NULL, NULL},
    };
    tu_add_suite("util/progress", tests);
}
