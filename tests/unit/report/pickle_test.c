/* The pickle writer against what CPython's pickle.dumps(v, 2) writes for the same values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "report/pickle.h"
#include "suites.h"
#include "testutil.h"

/* The opcodes for one unsigned value, after PROTO and before STOP. */
static void check_uint(uint64_t v, const char *want, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct cl_pickle p;
    cl_pickle_begin(&p, out);
    cl_pickle_uint(&p, v);
    cl_pickle_end(&p);
    fclose(out);
    CU_ASSERT_EQUAL(len, n + 3);
    CU_ASSERT_TRUE(len == n + 3 && memcmp(text + 2, want, n) == 0);
    free(text);
}

static void check_int(int64_t v, const char *want, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct cl_pickle p;
    cl_pickle_begin(&p, out);
    cl_pickle_int(&p, v);
    cl_pickle_end(&p);
    fclose(out);
    CU_ASSERT_EQUAL(len, n + 3);
    CU_ASSERT_TRUE(len == n + 3 && memcmp(text + 2, want, n) == 0);
    free(text);
}

static void test_ints(void)
{
    check_uint(1, "J\x01\x00\x00\x00", 5);   /* BININT, where pickle would use BININT1 */
    check_uint(2147483648u, "\x8a\x05\x00\x00\x00\x80\x00", 7);
    check_uint(9223372036854775808u, "\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00", 11);
    check_uint(UINT64_MAX, "\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00", 11);
    check_uint(0x7f1234567890u, "\x8a\x06\x90\x78\x56\x34\x12\x7f", 8);
    check_int(-2147483649LL, "\x8a\x05\xff\xff\xff\x7f\xff", 7);
    check_int(-1099511627776LL, "\x8a\x06\x00\x00\x00\x00\x00\xff", 8);
}

static void test_containers(void)
{
    /* {'a': [1, True, None, (0, 0)]}, which pickle.loads reads back (memo opcodes aside, the
     * same stream pickle.dumps writes) */
    static const char want[] = "\x80\x02}(X\x01\x00\x00\x00" "a](J\x01\x00\x00\x00\x88N"
                               "J\x00\x00\x00\x00J\x00\x00\x00\x00\x86" "eu.";
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct cl_pickle p;
    cl_pickle_begin(&p, out);
    cl_pickle_dict_begin(&p);
    cl_pickle_str(&p, "a");
    cl_pickle_list_begin(&p);
    cl_pickle_int(&p, 1);
    cl_pickle_bool(&p, true);
    cl_pickle_none(&p);
    cl_pickle_int(&p, 0);
    cl_pickle_int(&p, 0);
    cl_pickle_pair(&p);
    cl_pickle_list_end(&p);
    cl_pickle_dict_end(&p);
    cl_pickle_end(&p);
    fclose(out);
    CU_ASSERT_EQUAL(len, sizeof want - 1);
    CU_ASSERT_TRUE(len == sizeof want - 1 && memcmp(text, want, len) == 0);
    free(text);
}

void register_report_pickle_tests(void)
{
    static const struct tu_test tests[] = {
        {"ints as pickle writes them", test_ints},
        {"dicts, lists, pairs", test_containers},
        {NULL, NULL},
    };
    tu_add_suite("report/pickle", tests);
}
