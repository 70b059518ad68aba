#include "report/json.h"

#include <string.h>

#include "util/text.h"

static void flush(struct cl_json *j)
{
    fwrite(j->buf, 1, j->used, j->out);
    j->used = 0;
}

static void put_bytes(struct cl_json *j, const char *p, size_t n)
{
    if (n > sizeof j->buf - j->used) {
        flush(j);
        if (n > sizeof j->buf) {
            fwrite(p, 1, n, j->out);
            return;
        }
    }
    memcpy(j->buf + j->used, p, n);
    j->used += n;
}

static void put_char(struct cl_json *j, char c)
{
    if (j->used == sizeof j->buf)
        flush(j);
    j->buf[j->used++] = c;
}

/* A value that ends at the top level ends the document's outermost value. */
static void value_done(struct cl_json *j)
{
    if (j->depth == 0)
        flush(j);
}

static void put_text(struct cl_json *j, const char *s)
{
    put_bytes(j, s, strlen(s));
}

static void put_number(struct cl_json *j, uint64_t v, unsigned base)
{
    char digits[CL_DIGITS];
    const char *p = cl_digits(digits, v, base);
    put_bytes(j, p, (size_t)(digits + CL_DIGITS - 1 - p));
}

void cl_json_init(struct cl_json *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->first[0] = true;
    j->after_key = false;
    j->used = 0;
}

static void separate(struct cl_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (!j->first[j->depth])
        put_char(j, ',');
    j->first[j->depth] = false;
}

static void open_scope(struct cl_json *j, char c)
{
    separate(j);
    put_char(j, c);
    if (j->depth + 1 < CL_JSON_MAX_DEPTH)
        j->depth++;
    j->first[j->depth] = true;
}

static void close_scope(struct cl_json *j, char c)
{
    if (j->depth > 0)
        j->depth--;
    put_char(j, c);
    value_done(j);
}

void cl_json_count_or_null(struct cl_json *j, long long v)
{
    if (v >= 0)
        cl_json_int(j, v);
    else
        cl_json_null(j);
}

void cl_json_error_document(FILE *out, enum cl_status code, const char *message)
{
    struct cl_json j;
    cl_json_begin_document(&j, out);
    cl_json_key(&j, "error");
    cl_json_begin_object(&j);
    cl_json_key(&j, "code");
    cl_json_string(&j, cl_status_name(code));
    cl_json_key(&j, "message");
    cl_json_string(&j, message);
    cl_json_end_object(&j);
    cl_json_end_object(&j);
    cl_json_finish(&j);
}

void cl_json_raw(struct cl_json *j, const char *json)
{
    separate(j);
    size_t n = strlen(json);
    while (n && (json[n - 1] == '\n' || json[n - 1] == ' '))
        n--;   /* a document's final newline */
    put_bytes(j, json, n);
    value_done(j);
}

void cl_json_begin_object(struct cl_json *j)
{
    open_scope(j, '{');
}
void cl_json_end_object(struct cl_json *j)
{
    close_scope(j, '}');
}
void cl_json_begin_array(struct cl_json *j)
{
    open_scope(j, '[');
}
void cl_json_end_array(struct cl_json *j)
{
    close_scope(j, ']');
}

/* Length of the valid UTF-8 sequence at p, or 0. Target memory is untrusted, so strings read
 * from it may hold any bytes; invalid ones become U+FFFD to keep the output valid JSON. */
static int utf8_len(const unsigned char *p)
{
    int n;
    unsigned char lo = 0x80, hi = 0xbf;   /* allowed range of the second byte */
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        n = 2;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        n = 3, lo = p[0] == 0xe0 ? 0xa0 : 0x80, hi = p[0] == 0xed ? 0x9f : 0xbf;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        n = 4, lo = p[0] == 0xf0 ? 0x90 : 0x80, hi = p[0] == 0xf4 ? 0x8f : 0xbf;
    else
        return 0;   /* overlong leads, continuation bytes, and beyond U+10FFFF */
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* The bytes a JSON string carries as they are: printable ASCII but the quote and the backslash.
 * (Bytes from 0x80 are UTF-8, checked a sequence at a time.) */
static const unsigned char as_is[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Runs of characters written as they are (those above, and valid UTF-8) are copied at once: a
 * tensors report of 300,000 tensors is 250 MB of them, in 28 million strings. */
static void write_string(struct cl_json *j, const char *s)
{
    put_char(j, '"');
    const unsigned char *p = (const unsigned char *)s, *run = p;
    for (;;) {
        while (as_is[*p])
            p++;
        unsigned char c = *p;
        int n = c >= 0x80 ? utf8_len(p) : 0;
        if (n) {
            p += n;
            continue;
        }
        put_bytes(j, (const char *)run, (size_t)(p - run));
        if (!c)
            break;
        switch (c) {
        case '"': put_text(j, "\\\""); break;
        case '\\': put_text(j, "\\\\"); break;
        case '\n': put_text(j, "\\n"); break;
        case '\r': put_text(j, "\\r"); break;
        case '\t': put_text(j, "\\t"); break;
        default:
            if (c < 0x80) {
                char u[8];
                snprintf(u, sizeof u, "\\u%04x", c);
                put_text(j, u);
            } else
                put_text(j, "\\ufffd");
        }
        run = ++p;
    }
    put_char(j, '"');
}

void cl_json_key(struct cl_json *j, const char *key)
{
    separate(j);
    write_string(j, key);
    put_char(j, ':');
    j->after_key = true;
}

void cl_json_string(struct cl_json *j, const char *s)
{
    separate(j);
    if (s)
        write_string(j, s);
    else
        put_text(j, "null");
    value_done(j);
}

void cl_json_int(struct cl_json *j, long long v)
{
    separate(j);
    if (v < 0)
        put_char(j, '-');
    put_number(j, v < 0 ? -(uint64_t)v : (uint64_t)v, 10);
    value_done(j);
}

void cl_json_bool(struct cl_json *j, bool v)
{
    separate(j);
    put_text(j, v ? "true" : "false");
    value_done(j);
}

void cl_json_null(struct cl_json *j)
{
    separate(j);
    put_text(j, "null");
    value_done(j);
}

void cl_json_pool_id(struct cl_json *j, const uint64_t id[2])
{
    cl_json_begin_array(j);
    cl_json_int(j, (long long)id[0]);
    cl_json_int(j, (long long)id[1]);
    cl_json_end_array(j);
}

void cl_json_hex(struct cl_json *j, uint64_t v)
{
    separate(j);
    put_text(j, "\"0x");
    put_number(j, v, 16);
    put_char(j, '"');
    value_done(j);
}

void cl_json_finish(struct cl_json *j)
{
    put_char(j, '\n');
    flush(j);
    fflush(j->out);
}

void cl_json_begin_document(struct cl_json *j, FILE *out)
{
    cl_json_init(j, out);
    cl_json_begin_object(j);
    cl_json_key(j, "schema_version");
    cl_json_int(j, CL_SCHEMA_VERSION);
}
