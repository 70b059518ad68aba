/* The streaming JSON writer, compared byte for byte with the expected document. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "report/json.h"
#include "suites.h"
#include "testutil.h"

struct doc {
    char *text;
    size_t len;
    FILE *f;
    struct cl_json j;
};

static struct cl_json *doc_open(struct doc *d)
{
    d->text = NULL;
    d->len = 0;
    d->f = open_memstream(&d->text, &d->len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d->f);
    cl_json_init(&d->j, d->f);
    return &d->j;
}

/* Closes the stream, compares, frees. */
static void doc_expect(struct doc *d, const char *want)
{
    fclose(d->f);
    CU_ASSERT_STRING_EQUAL(d->text, want);
    CU_ASSERT_EQUAL(d->len, strlen(want));
    if (strcmp(d->text, want) != 0)
        fprintf(stderr, "\n  got:  %s\n  want: %s\n", d->text, want);
    free(d->text);
}

static void test_structure(void)
{
    struct doc d;
    struct cl_json *j = doc_open(&d);
    cl_json_begin_object(j);
    cl_json_key(j, "a");
    cl_json_int(j, 1);
    cl_json_key(j, "b");
    cl_json_begin_array(j);
    cl_json_bool(j, true);
    cl_json_bool(j, false);
    cl_json_null(j);
    cl_json_string(j, NULL);
    cl_json_end_array(j);
    cl_json_key(j, "c");
    cl_json_begin_object(j);
    cl_json_key(j, "d");
    cl_json_string(j, "x");
    cl_json_key(j, "e");
    cl_json_begin_object(j);
    cl_json_end_object(j);
    cl_json_end_object(j);
    cl_json_key(j, "f");
    cl_json_begin_array(j);
    cl_json_end_array(j);
    cl_json_key(j, "g");
    cl_json_begin_array(j);
    cl_json_begin_object(j);
    cl_json_end_object(j);
    cl_json_begin_array(j);
    cl_json_int(j, 2);
    cl_json_end_array(j);
    cl_json_end_array(j);
    cl_json_end_object(j);
    cl_json_finish(j);
    doc_expect(&d, "{\"a\":1,\"b\":[true,false,null,null],\"c\":{\"d\":\"x\",\"e\":{}},\"f\":[],"
                   "\"g\":[{},[2]]}\n");
}

static void test_numbers(void)
{
    struct doc d;
    struct cl_json *j = doc_open(&d);
    cl_json_begin_array(j);
    cl_json_int(j, 0);
    cl_json_int(j, -42);
    cl_json_int(j, LLONG_MIN);
    cl_json_int(j, LLONG_MAX);
    cl_json_hex(j, 0);
    cl_json_hex(j, 0x7f2a1c000000ull);
    cl_json_hex(j, UINT64_MAX);
    cl_json_end_array(j);
    cl_json_finish(j);
    doc_expect(&d, "[0,-42,-9223372036854775808,9223372036854775807,\"0x0\",\"0x7f2a1c000000\","
                   "\"0xffffffffffffffff\"]\n");
}

/* The JSON text of one string value. */
static void string_is(const char *s, const char *want)
{
    struct doc d;
    struct cl_json *j = doc_open(&d);
    cl_json_string(j, s);
    doc_expect(&d, want);
}

static void test_escaping(void)
{
    string_is("", "\"\"");
    string_is("plain text", "\"plain text\"");
    string_is("say \"hi\" \\o/", "\"say \\\"hi\\\" \\\\o/\"");
    string_is("a\nb\rc\td", "\"a\\nb\\rc\\td\"");
    string_is("\x01\x08\x0c\x1f\x7f", "\"\\u0001\\u0008\\u000c\\u001f\\u007f\"");
    string_is("/path/to/lib.so", "\"/path/to/lib.so\"");

    /* keys are escaped the same way */
    struct doc d;
    struct cl_json *j = doc_open(&d);
    cl_json_begin_object(j);
    cl_json_key(j, "k\"\n");
    cl_json_string(j, "v");
    cl_json_end_object(j);
    doc_expect(&d, "{\"k\\\"\\n\":\"v\"}");
}

static void test_utf8(void)
{
    /* valid sequences pass through: 2, 3 and 4 bytes */
    string_is("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
              "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    /* invalid bytes become U+FFFD, one per byte, and the text after them is kept */
    string_is("\x80", "\"\\ufffd\"");
    string_is("a\xc3(b", "\"a\\ufffd(b\"");
    string_is("\xe2\x82", "\"\\ufffd\\ufffd\"");               /* cut short at the end */
    string_is("\xf0\x9f\x98", "\"\\ufffd\\ufffd\\ufffd\"");
    string_is("\xc0\xaf", "\"\\ufffd\\ufffd\"");               /* overlong '/' */
    string_is("\xc1\xbf", "\"\\ufffd\\ufffd\"");
    string_is("\xff\xfe", "\"\\ufffd\\ufffd\"");
    string_is("ok\xe9ok", "\"ok\\ufffdok\"");                  /* Latin-1 text */
}

/* Invalid sequences a lax decoder would copy raw: each byte becomes U+FFFD. */
static void test_utf8_invalid(void)
{
    string_is("\xf8\x80\x80", "\"\\ufffd\\ufffd\\ufffd\""); /* 0xf5..0xff are never leads */
    string_is("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""); /* a UTF-16 surrogate */
    string_is("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\""); /* overlong */
    string_is("\xf0\x80\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* overlong */
    string_is("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* above U+10FFFF */
}

/* A document many times the writer's buffer, with strings longer than it, comes out whole and
 * in order. */
static void test_beyond_buffer(void)
{
    static char big[3 * sizeof((struct cl_json *)0)->buf + 7];
    memset(big, 'y', sizeof big - 1);
    size_t cap = 64 * sizeof big;
    char *want = malloc(cap), *w = want;
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    struct doc d;
    struct cl_json *j = doc_open(&d);
    cl_json_begin_array(j);
    w += sprintf(w, "[");
    for (int i = 0; i < 20000; i++) {
        cl_json_int(j, i);
        w += sprintf(w, i ? ",%d" : "%d", i);
        if (i % 5000 == 0) {
            cl_json_string(j, big);
            w += sprintf(w, ",\"%s\"", big);
        }
    }
    cl_json_end_array(j);
    sprintf(w, "]");
    doc_expect(&d, want);
    free(want);
}

void register_report_json_tests(void)
{
    static const struct tu_test tests[] = {
        {"objects, arrays, commas", test_structure},
        {"numbers and hex", test_numbers},
        {"escaping", test_escaping},
        {"UTF-8 and invalid bytes", test_utf8},
        {"invalid UTF-8 sequences", test_utf8_invalid},
        {"a document beyond the buffer", test_beyond_buffer},
        {NULL, NULL},
    };
    tu_add_suite("report/json", tests);
}
