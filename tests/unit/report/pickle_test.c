/* The pickle writer against what CPython's pickle.dumps(v, 2) writes for the same values. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "report/pickle.h"
#include "suites.h"
#include "testutil.h"

/* The opcodes for one value (signed: as cl_pickle_int writes it), after PROTO and before STOP. */
static void check(uint64_t bits, bool is_signed, const char *want, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    struct cl_pickle p;
    cl_pickle_begin(&p, out);
    if (is_signed)
        cl_pickle_int(&p, (int64_t)bits);
    else
        cl_pickle_uint(&p, bits);
    cl_pickle_end(&p);
    fclose(out);
    CU_ASSERT_EQUAL(len, n + 3);
    CU_ASSERT_TRUE(len == n + 3 && memcmp(text + 2, want, n) == 0);
    free(text);
}

static void test_ints(void)
{
    check(1, false, "J\x01\x00\x00\x00", 5);   /* BININT, where pickle would use BININT1 */
    check(2147483648u, false, "\x8a\x05\x00\x00\x00\x80\x00", 7);
    check(9223372036854775808u, false, "\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00", 11);
    check(UINT64_MAX, false, "\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00", 11);
    check(0x7f1234567890u, false, "\x8a\x06\x90\x78\x56\x34\x12\x7f", 8);
    check((uint64_t)-2147483649LL, true, "\x8a\x05\xff\xff\xff\x7f\xff", 7);
    check((uint64_t)-1099511627776LL, true, "\x8a\x06\x00\x00\x00\x00\x00\xff", 8);
}

static void test_containers(void)
{
    /* {'a': [1, True, None, (0, 0)]}, which pickle.loads reads back (memo opcodes aside, the
     * same stream pickle.dumps writes) */
    static const char want[] = "\x80\x02}(X\x01\x00\x00\x00"
                               "a](J\x01\x00\x00\x00\x88N"
                               "J\x00\x00\x00\x00J\x00\x00\x00\x00\x86"
                               "eu.";
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
