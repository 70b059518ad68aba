/* String stores: every string stays intact as later ones fill chunks, a string longer than a
 * chunk gets one of its own, and freeing empties the store. */
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "util/strings.h"

static void test_many(void)
{
    struct cl_strings st = {0};
    static const char *kept[100000];
    char text[32];
    for (int i = 0; i < 100000; i++) { /* about 1.5 MB: more than one chunk */
        snprintf(text, sizeof text, "__main__.history[%d]", i);
        kept[i] = cl_strings_add(&st, text);
        CU_ASSERT_PTR_NOT_NULL_FATAL(kept[i]);
    }
    int intact = 0;
    for (int i = 0; i < 100000; i++) {
        snprintf(text, sizeof text, "__main__.history[%d]", i);
        intact += strcmp(kept[i], text) == 0;
    }
    CU_ASSERT_EQUAL(intact, 100000);
    cl_strings_free(&st);
    CU_ASSERT_PTR_NULL(st.chunks);
}

static void test_long(void)
{
    struct cl_strings st = {0};
    static char big[(1 << 20) + 100];
    memset(big, 'x', sizeof big - 1);
    const char *a = cl_strings_add(&st, "a"), *b = cl_strings_add(&st, big),
               *c = cl_strings_add(&st, "");
    CU_ASSERT_TRUE_FATAL(a && b && c);
    CU_ASSERT_STRING_EQUAL(a, "a");
    CU_ASSERT_EQUAL(strlen(b), sizeof big - 1);
    CU_ASSERT_STRING_EQUAL(c, "");
    cl_strings_free(&st);
}

void register_util_strings_tests(void)
{
    static const struct tu_test tests[] = {
        {"many strings over chunks", test_many},
        {"a string longer than a chunk", test_long},
        {NULL, NULL},
    };
    tu_add_suite("util/strings", tests);
}
