/* Reading JSON back (snapshot files): values, escapes, and refusal of anything malformed. */
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "util/jsonread.h"

static int parse(const char *text, struct cl_jv *v)
{
    struct cl_error err = {0};
    return cl_json_parse(text, strlen(text), v, &err);
}

static void test_values(void)
{
    struct cl_jv v;
    CU_ASSERT_EQUAL_FATAL(parse(" {\"a\": [1, -2.5, true, false, null], \"b\": {\"c\": \"x\"},"
                                " \"big\": 123456789012345}",
                                &v),
                          0);
    const struct cl_jv *a = cl_jv_get(&v, "a");
    CU_ASSERT_EQUAL_FATAL(a->kind, CL_JV_ARRAY);
    CU_ASSERT_EQUAL_FATAL(a->n, 5);
    CU_ASSERT(a->items[0].is_integer && a->items[0].integer == 1);
    CU_ASSERT(!a->items[1].is_integer && a->items[1].number == -2.5);
    CU_ASSERT(a->items[2].kind == CL_JV_BOOL && a->items[2].boolean);
    CU_ASSERT(a->items[3].kind == CL_JV_BOOL && !a->items[3].boolean);
    CU_ASSERT_EQUAL(a->items[4].kind, CL_JV_NULL);
    CU_ASSERT_STRING_EQUAL(cl_jv_get(cl_jv_get(&v, "b"), "c")->string, "x");
    CU_ASSERT_EQUAL(cl_jv_get(&v, "big")->integer, 123456789012345ll);
    CU_ASSERT_PTR_NULL(cl_jv_get(&v, "missing"));
    CU_ASSERT_PTR_NULL(cl_jv_get(a, "a"));   /* not an object */
    cl_jv_free(&v);
}

static void test_escapes(void)
{
    struct cl_jv v;
    CU_ASSERT_EQUAL_FATAL(parse("\"q\\\"b\\\\s\\/n\\n\\u00e9\\u2192\\ud83d\\ude00\\ud800x\"", &v),
                          0);
    CU_ASSERT_STRING_EQUAL(v.string,
                           "q\"b\\s/n\n\xc3\xa9\xe2\x86\x92\xf0\x9f\x98\x80\xef\xbf\xbdx");
    cl_jv_free(&v);
}

static void test_refused(void)
{
    static const char *const bad[] = {
        "",          "[1,]", "{\"a\" 1}", "{\"a\": 1,}", "[1 2]", "\"open", "\"a\tb\"", "\"\\x\"",
        "\"\\u12\"", "tru",  "1 2",       "{1: 2}",      "-",     "1e999",  "[[[[",     "nan",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct cl_jv v;
        CU_ASSERT_NOT_EQUAL(parse(bad[i], &v), 0);
        CU_ASSERT_EQUAL(v.kind, CL_JV_NULL);   /* nothing left over */
    }
    char deep[200];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    struct cl_jv v;
    CU_ASSERT_NOT_EQUAL(parse(deep, &v), 0);   /* nesting is bounded */
}

void register_util_jsonread_tests(void)
{
    static const struct tu_test tests[] = {
        {"values", test_values},
        {"escapes and UTF-8", test_escapes},
        {"malformed input refused", test_refused},
        {NULL, NULL},
    };
    tu_add_suite("util/jsonread", tests);
}
