/* Bounded text: appending and copying spans cut at the buffer's end, never past it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "suites.h"
#include "testutil.h"
#include "util/text.h"

static void test_appendf(void)
{
    char buf[8] = "";
    size_t len = 0;
    CU_ASSERT_TRUE(cl_appendf(buf, sizeof buf, &len, "%s", "ab"));
    CU_ASSERT_TRUE(cl_appendf(buf, sizeof buf, &len, "%d", 123));
    CU_ASSERT_STRING_EQUAL(buf, "ab123");
    CU_ASSERT_EQUAL(len, 5);
    CU_ASSERT_FALSE(cl_appendf(buf, sizeof buf, &len, "%s", "xyz"));   /* 8 bytes with NUL */
    CU_ASSERT_STRING_EQUAL(buf, "ab123xy");
    CU_ASSERT_EQUAL(len, sizeof buf - 1);
    CU_ASSERT_FALSE(cl_appendf(buf, sizeof buf, &len, "more"));
    CU_ASSERT_STRING_EQUAL(buf, "ab123xy");
    len = 0;
    CU_ASSERT_FALSE(cl_appendf(buf, 0, &len, "x"));
}

/* The plain appends write what printf would, and cut as cl_appendf does. */
static void test_append(void)
{
    static const int64_t ints[] = {0, 7, -7, 1234567890123, INT64_MAX, INT64_MIN};
    static const uint64_t uints[] = {0, 9, 10, 99, 100, 101, 1000, 12345, 0xdeadbeef, UINT64_MAX};
    char buf[32], want[32];
    size_t len;
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        len = 0;
        CU_ASSERT_TRUE(cl_append_int(buf, sizeof buf, &len, ints[i]));
        snprintf(want, sizeof want, "%lld", (long long)ints[i]);
        CU_ASSERT_STRING_EQUAL(buf, want);
        CU_ASSERT_EQUAL(len, strlen(want));
    }
    for (size_t i = 0; i < sizeof uints / sizeof *uints; i++) {
        len = 0;
        CU_ASSERT_TRUE(cl_append_uint(buf, sizeof buf, &len, uints[i]));
        snprintf(want, sizeof want, "%llu", (unsigned long long)uints[i]);
        CU_ASSERT_STRING_EQUAL(buf, want);
        len = 0;
        CU_ASSERT_TRUE(cl_append_hex(buf, sizeof buf, &len, uints[i]));
        snprintf(want, sizeof want, "0x%llx", (unsigned long long)uints[i]);
        CU_ASSERT_STRING_EQUAL(buf, want);
    }
    char small[8] = "";
    len = 0;
    CU_ASSERT_TRUE(cl_append(small, sizeof small, &len, "ab"));
    CU_ASSERT_FALSE(cl_append_uint(small, sizeof small, &len, 123456));   /* 8 bytes with NUL */
    CU_ASSERT_STRING_EQUAL(small, "ab12345");
    CU_ASSERT_EQUAL(len, sizeof small - 1);
    CU_ASSERT_FALSE(cl_append(small, sizeof small, &len, "x"));
    CU_ASSERT_STRING_EQUAL(small, "ab12345");
    len = 0;
    CU_ASSERT_FALSE(cl_append_hex(small, 0, &len, 1));
}

static void test_copy_span(void)
{
    char out[6];
    CU_ASSERT_TRUE(cl_copy_span(out, sizeof out, "hello.world", 5));
    CU_ASSERT_STRING_EQUAL(out, "hello");
    CU_ASSERT_TRUE(cl_copy_span(out, sizeof out, "hi", 5));   /* the string ends first */
    CU_ASSERT_STRING_EQUAL(out, "hi");
    CU_ASSERT_FALSE(cl_copy_span(out, sizeof out, "truncated", 9));
    CU_ASSERT_STRING_EQUAL(out, "trunc");
    CU_ASSERT_FALSE(cl_copy_span(out, 0, "x", 1));
}

static const char *const joined[] = {"2.1", "2.4", "2.13-2.15"};

static const char *joined_name(size_t i)
{
    return joined[i];
}

static void test_join_names(void)
{
    char buf[16];
    CU_ASSERT_STRING_EQUAL(cl_join_names(buf, sizeof buf, 3, joined_name), "2.1, 2.4, 2.13-");
    CU_ASSERT_STRING_EQUAL(cl_join_names(buf, sizeof buf, 2, joined_name), "2.1, 2.4");
    CU_ASSERT_STRING_EQUAL(cl_join_names(buf, sizeof buf, 0, joined_name), "");
    CU_ASSERT_PTR_EQUAL(cl_join_names(buf, 0, 3, joined_name), buf);   /* nothing written */
}

void register_util_text_tests(void)
{
    static const struct tu_test tests[] = {
        {"cl_appendf", test_appendf},
        {"cl_append, _int, _uint, _hex", test_append},
        {"cl_copy_span", test_copy_span},
        {"cl_join_names", test_join_names},
        {NULL, NULL},
    };
    tu_add_suite("util/text", tests);
}
