/* Text report lines: cut to the width in columns (UTF-8 code points), not bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "report/paths.h"
#include "report/text.h"
#include "suites.h"
#include "testutil.h"

/* What cl_text_line prints for line at width, without its newline (the caller frees it). */
static char *printed(const char *line, size_t width)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cl_text_line(out, line, width);
    fclose(out);
    CU_ASSERT_TRUE(len > 0 && text[len - 1] == '\n');
    if (len)
        text[len - 1] = '\0';
    return text;
}

static void check(const char *line, size_t width, const char *want)
{
    char *got = printed(line, width);
    CU_ASSERT_STRING_EQUAL(got, want);
    free(got);
}

static void test_cut(void)
{
    check("abcdefghijkl", 0, "abcdefghijkl");     /* 0: never cut */
    check("abcdefghijkl", 12, "abcdefghijkl");
    check("abcdefghijkl", 10, "abcdef…jkl"); /* two thirds of the rest before, a third after */
    check("abcdefghijkl", 4, "abcdefghijkl"); /* too narrow to cut */
    /* 10 columns in 16 bytes: longer than the width in bytes, not in columns */
    check("a→b→c→defg", 10, "a→b→c→defg");
    check("a→b→c→defgh", 10, "a→b→c→…fgh");
}

static void test_path_line(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    cl_text_path_line(out, "  holder ",
                      "\x1fr__main__\x1f"
                      "a.history\x1fi[17]",
                      0);
    fclose(out);
    CU_ASSERT_STRING_EQUAL(text, "  holder __main__.history[17]\n");
    free(text);
}

void register_report_text_tests(void)
{
    static const struct tu_test tests[] = {
        {"lines cut by columns", test_cut},
        {"a path after a prefix", test_path_line},
        {NULL, NULL},
    };
    tu_add_suite("report/text", tests);
}
