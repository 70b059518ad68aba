/* CPython version banners and PY_VERSION_HEX strings: pure functions. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "runtime/python.h"
#include "suites.h"
#include "testutil.h"

/* Parses the first len bytes of s from an exact-size copy with no NUL, so any read past len
 * shows up under AddressSanitizer. */
static uint64_t parse(const char *s, size_t len)
{
    char *copy = malloc(len ? len : 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    memcpy(copy, s, len);
    uint64_t hex = cl_python_parse_banner(copy, len);
    free(copy);
    return hex;
}

static uint64_t parse_str(const char *s)
{
    return parse(s, strlen(s));
}

static void test_parse_banner_real(void)
{
    CU_ASSERT_EQUAL(parse_str("3.9.18 (main, Aug 24 2023, 18:14:37) \n[GCC 12.2.0]"), 0x030912f0);
    CU_ASSERT_EQUAL(parse_str("3.11.7 (main, Dec  8 2023, 18:56:58) [GCC 12.2.0]"), 0x030b07f0);
    CU_ASSERT_EQUAL(parse_str("3.13.0rc2 (main, Sep 19 2024, 09:49:08) [GCC 12.2.0]"), 0x030d00c2);
    CU_ASSERT_EQUAL(parse_str("3.12.0a7 (main, Apr  5 2023) [Clang 14]"), 0x030c00a7);
    CU_ASSERT_EQUAL(parse_str("3.12.0b1 (tags/v3.12.0b1:..."), 0x030c00b1);
    CU_ASSERT_EQUAL(parse_str("3.11.7+ (heads/3.11:6b3a9c2, Jan  1 2024)"), 0x030b07f0);
    CU_ASSERT_EQUAL(parse_str("3.10.15rc1+ (x"), 0x030a0fc1);
}

/* Free-threaded builds write "3.13.1 experimental free-threading build (...)" (3.13) and
 * "3.14.0 free-threading build (...)" (3.14+) into sys.version (Python/getversion.c). */
static void test_parse_banner_free_threading(void)
{
    CU_ASSERT_EQUAL(parse_str("3.13.1 experimental free-threading build (main, Dec  4 2024)"),
                    0x030d01f0);
    CU_ASSERT_EQUAL(parse_str("3.14.0 free-threading build (main, Oct  7 2025)"), 0x030e00f0);
}

static void test_parse_banner_rejects(void)
{
    const char *bad[] = {
        "",
        "3",
        "3.",
        "3.11",
        "3.11.",
        "3.11.7",
        "3.11.7 ",
        "3.11.7  (",
        "3.11.7(",
        "3.11.7 x",
        "hello, world",
        "2.7.18 (default, ...)",
        "4.0.0 (x",
        "3.51.0 (x",
        "3.11.100 (x",
        "3.1234.5 (x",
        "3.11.7rc (x",
        "3.11.7rc16 (x",
        "3.11.7c1 (x",
        "3.11.7a (x",
        "3.11.7r (x",
        "3.11.7++ (x",
        "3.x.7 (x",
        ".11.7 (x",
        " 3.11.7 (x",
        "3..7 (x",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t hex = parse_str(bad[i]);
        CU_ASSERT_EQUAL(hex, 0);
        if (hex)
            fprintf(stderr, "\n  accepted \"%s\" as 0x%llx\n", bad[i], (unsigned long long)hex);
    }
    /* len, not the text, bounds the parse: cut before " (" */
    const char *s = "3.11.7 (main)";
    for (size_t len = 0; len < 8; len++)
        CU_ASSERT_EQUAL(parse(s, len), 0);
    CU_ASSERT_EQUAL(parse(s, 8), 0x030b07f0);
    CU_ASSERT_EQUAL(parse("3.13.0rc2 (", 6), 0);
    CU_ASSERT_EQUAL(parse("3.13.0rc2 (", 7), 0);   /* "3.13.0r" */
    CU_ASSERT_EQUAL(parse("3.13.0rc2 (", 8), 0);
}

static void test_version_string(void)
{
    const struct {
        uint64_t hex;
        const char *s;
    } cases[] = {
        {0x030912f0, "3.9.18"},   {0x030b07f0, "3.11.7"},   {0x030d00c2, "3.13.0rc2"},
        {0x030c00a7, "3.12.0a7"}, {0x030c00b1, "3.12.0b1"}, {0x030e00f0, "3.14.0"},
        {0x030b0000, "3.11.0"},   {0x030b07f3, "3.11.7"}, /* the serial of a final is not shown */
    };
    char out[24];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        memset(out, 'z', sizeof out);
        cl_python_version_string(cases[i].hex, out, sizeof out);
        CU_ASSERT_STRING_EQUAL(out, cases[i].s);
    }
    cl_python_version_string(0x030d00c2, out, 5); /* truncated, still terminated */
    CU_ASSERT_STRING_EQUAL(out, "3.13");
}

static void test_round_trip(void)
{
    const char *banners[] = {"3.8.20 (", "3.9.0a1 (",  "3.10.4 (",
                             "3.12.7 (", "3.13.0b3 (", "3.14.0rc1 ("};
    for (size_t i = 0; i < sizeof banners / sizeof *banners; i++) {
        char out[24];
        uint64_t hex = parse_str(banners[i]);
        CU_ASSERT_NOT_EQUAL(hex, 0);
        cl_python_version_string(hex, out, sizeof out);
        CU_ASSERT_EQUAL(strncmp(out, banners[i], strlen(banners[i]) - 2), 0);
        CU_ASSERT_EQUAL(strlen(out), strlen(banners[i]) - 2);
    }
}

void register_runtime_python_tests(void)
{
    static const struct tu_test tests[] = {
        {"parse real banners", test_parse_banner_real},
        {"reject garbage and truncation", test_parse_banner_rejects},
        {"free-threading banners", test_parse_banner_free_threading},
        {"version string", test_version_string},
        {"banner -> hex -> string round trip", test_round_trip},
        {NULL, NULL},
    };
    tu_add_suite("runtime/python", tests);
}
