#include "report/json.h"

#include <string.h>

/* A report's stream is written by one thread, and a report can be hundreds of megabytes of short
 * tokens: the _unlocked calls leave out a lock per call, and numbers skip printf's parsing. */

static void put_number(FILE *out, uint64_t v, unsigned base)
{
    char digits[24];
    size_t n = 0;
    do
        digits[sizeof digits - ++n] = "0123456789abcdef"[v % base];
    while (v /= base);
    fwrite_unlocked(digits + sizeof digits - n, 1, n, out);
}

void cl_json_init(struct cl_json *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->first[0] = true;
    j->after_key = false;
}

static void separate(struct cl_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (!j->first[j->depth])
        fputc_unlocked(',', j->out);
    j->first[j->depth] = false;
}

static void open_scope(struct cl_json *j, char c)
{
    separate(j);
    fputc_unlocked(c, j->out);
    if (j->depth + 1 < CL_JSON_MAX_DEPTH)
        j->depth++;
    j->first[j->depth] = true;
}

static void close_scope(struct cl_json *j, char c)
{
    if (j->depth > 0)
        j->depth--;
    fputc_unlocked(c, j->out);
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
    fwrite_unlocked(json, 1, n, j->out);
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

/* Runs of characters written as they are (printable ASCII but the quote and the backslash, and
 * valid UTF-8) go out in one fwrite: a tensors report of 300,000 tensors is 250 MB of them. */
static void write_string(FILE *out, const char *s)
{
    fputc_unlocked('"', out);
    const unsigned char *p = (const unsigned char *)s, *run = p;
    for (;;) {
        unsigned char c = *p;
        int n = c >= 0x80 ? utf8_len(p) : c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
        if (n) {
            p += n;
            continue;
        }
        fwrite_unlocked(run, 1, (size_t)(p - run), out);
        if (!c)
            break;
        switch (c) {
        case '"': fputs_unlocked("\\\"", out); break;
        case '\\': fputs_unlocked("\\\\", out); break;
        case '\n': fputs_unlocked("\\n", out); break;
        case '\r': fputs_unlocked("\\r", out); break;
        case '\t': fputs_unlocked("\\t", out); break;
        default:
            if (c < 0x80)
                fprintf(out, "\\u%04x", c);
            else
                fputs_unlocked("\\ufffd", out);
        }
        run = ++p;
    }
    fputc_unlocked('"', out);
}

void cl_json_key(struct cl_json *j, const char *key)
{
    separate(j);
    write_string(j->out, key);
    fputc_unlocked(':', j->out);
    j->after_key = true;
}

void cl_json_string(struct cl_json *j, const char *s)
{
    separate(j);
    if (s)
        write_string(j->out, s);
    else
        fputs_unlocked("null", j->out);
}

void cl_json_int(struct cl_json *j, long long v)
{
    separate(j);
    if (v < 0)
        fputc_unlocked('-', j->out);
    put_number(j->out, v < 0 ? -(uint64_t)v : (uint64_t)v, 10);
}

void cl_json_bool(struct cl_json *j, bool v)
{
    separate(j);
    fputs_unlocked(v ? "true" : "false", j->out);
}

void cl_json_null(struct cl_json *j)
{
    separate(j);
    fputs_unlocked("null", j->out);
}

void cl_json_hex(struct cl_json *j, uint64_t v)
{
    separate(j);
    fputs_unlocked("\"0x", j->out);
    put_number(j->out, v, 16);
    fputc_unlocked('"', j->out);
}

void cl_json_finish(struct cl_json *j)
{
    fputc_unlocked('\n', j->out);
    fflush(j->out);
}

void cl_json_begin_document(struct cl_json *j, FILE *out)
{
    cl_json_init(j, out);
    cl_json_begin_object(j);
    cl_json_key(j, "schema_version");
    cl_json_int(j, CL_SCHEMA_VERSION);
}
