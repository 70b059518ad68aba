#include "util/jsonread.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/vec.h"

struct parser {
    const char *p, *end, *start;
    struct cl_error *err;
};

static int fail(struct parser *ps, const char *what)
{
    return cl_error_set(ps->err, CL_E_IO, "invalid JSON at byte %zu: %s",
                        (size_t)(ps->p - ps->start), what);
}

static void skip_space(struct parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static bool literal(struct parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return false;
    ps->p += n;
    return true;
}

static int hex4(struct parser *ps, unsigned *out)
{
    *out = 0;
    for (int i = 0; i < 4; i++, ps->p++) {
        char c = ps->p < ps->end ? *ps->p : 0;
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return fail(ps, "bad \\u escape");
        *out = *out << 4 | (unsigned)d;
    }
    return 0;
}

static size_t put_utf8(char *s, unsigned cp)
{
    if (cp < 0x80) {
        s[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        s[0] = (char)(0xc0 | cp >> 6);
        s[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        s[0] = (char)(0xe0 | cp >> 12);
        s[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        s[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    s[0] = (char)(0xf0 | cp >> 18);
    s[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    s[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    s[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string after its opening quote; the result is never longer than the input. */
static int string(struct parser *ps, char **out)
{
    char *s = malloc((size_t)(ps->end - ps->p) + 1);
    size_t n = 0;
    if (!s)
        return cl_error_set(ps->err, CL_E_INTERNAL, "out of memory reading JSON");
    for (;;) {
        if (ps->p >= ps->end) {
            free(s);
            return fail(ps, "unterminated string");
        }
        char c = *ps->p++;
        if (c == '"')
            break;
        if ((unsigned char)c < 0x20) {
            free(s);
            return fail(ps, "control character in a string");
        }
        if (c != '\\') {
            s[n++] = c;
            continue;
        }
        c = ps->p < ps->end ? *ps->p++ : 0;
        const char *plain = strchr("\"\\/bfnrt", c), *value = "\"\\/\b\f\n\r\t";
        unsigned cp, low;
        if (c && plain) {
            s[n++] = value[plain - "\"\\/bfnrt"];
        } else if (c == 'u' && hex4(ps, &cp) == 0) {
            if (cp >= 0xd800 && cp < 0xdc00 && literal(ps, "\\u") && hex4(ps, &low) == 0 &&
                low >= 0xdc00 && low < 0xe000)
                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
            else if (cp >= 0xd800 && cp < 0xe000)
                cp = 0xfffd;   /* a lone surrogate: the replacement character */
            n += put_utf8(s + n, cp);
        } else {
            free(s);
            return fail(ps, "bad escape");
        }
    }
    s[n] = '\0';
    *out = s;
    return 0;
}

static int number(struct parser *ps, struct cl_jv *v)
{
    char buf[64];
    size_t n = 0;
    bool integer = true;
    while (ps->p < ps->end && n < sizeof buf - 1 && strchr("+-0123456789.eE", *ps->p)) {
        integer &= *ps->p != '.' && *ps->p != 'e' && *ps->p != 'E';
        buf[n++] = *ps->p++;
    }
    buf[n] = '\0';
    char *end;
    v->kind = CL_JV_NUMBER;
    v->number = strtod(buf, &end);
    if (!n || *end || !isfinite(v->number))
        return fail(ps, "bad number");
    if (integer) {
        long long i = strtoll(buf, &end, 10);
        v->is_integer = !*end && (double)i == v->number;
        v->integer = i;
    }
    return 0;
}

static int value(struct parser *ps, struct cl_jv *v, int depth);

/* An array or object after its opening bracket: items until close. */
static int items(struct parser *ps, struct cl_jv *v, char close, int depth)
{
    size_t cap = 0;
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return 0;
    }
    for (;;) {
        if (!CL_VEC_RESERVE(v->items, v->n, cap))
            return cl_error_set(ps->err, CL_E_INTERNAL, "out of memory reading JSON");
        struct cl_jv *item = &v->items[v->n++];
        memset(item, 0, sizeof *item);
        skip_space(ps);
        if (close == '}') {
            int rc;
            if (ps->p >= ps->end || *ps->p++ != '"')
                return fail(ps, "a member name must be a string");
            if ((rc = string(ps, &item->key)))
                return rc;
            skip_space(ps);
            if (ps->p >= ps->end || *ps->p++ != ':')
                return fail(ps, "':' expected");
        }
        int rc = value(ps, item, depth + 1);
        if (rc)
            return rc;
        skip_space(ps);
        char c = ps->p < ps->end ? *ps->p++ : 0;
        if (c == close)
            return 0;
        if (c != ',')
            return fail(ps, "',' or a closing bracket expected");
    }
}

static int value(struct parser *ps, struct cl_jv *v, int depth)
{
    if (depth > CL_JSON_READ_MAX_DEPTH)
        return fail(ps, "nested too deep");
    skip_space(ps);
    if (ps->p >= ps->end)
        return fail(ps, "a value expected");
    char c = *ps->p;
    if (c == '{' || c == '[') {
        ps->p++;
        v->kind = c == '{' ? CL_JV_OBJECT : CL_JV_ARRAY;
        return items(ps, v, c == '{' ? '}' : ']', depth);
    }
    if (c == '"') {
        ps->p++;
        v->kind = CL_JV_STRING;
        return string(ps, &v->string);
    }
    if (literal(ps, "null")) {
        v->kind = CL_JV_NULL;
        return 0;
    }
    if (literal(ps, "true") || literal(ps, "false")) {
        v->kind = CL_JV_BOOL;
        v->boolean = ps->p[-1] == 'e' && ps->p[-2] == 'u';
        return 0;
    }
    return number(ps, v);
}

int cl_json_parse(const char *text, size_t len, struct cl_jv *out, struct cl_error *err)
{
    struct parser ps = {text, text + len, text, err};
    memset(out, 0, sizeof *out);
    int rc = value(&ps, out, 0);
    skip_space(&ps);
    if (!rc && ps.p != ps.end)
        rc = fail(&ps, "text after the value");
    if (rc)
        cl_jv_free(out);
    return rc;
}

void cl_jv_free(struct cl_jv *v)
{
    for (size_t i = 0; i < v->n; i++)
        cl_jv_free(&v->items[i]);
    free(v->items);
    free(v->string);
    free(v->key);
    memset(v, 0, sizeof *v);
}

const struct cl_jv *cl_jv_get(const struct cl_jv *v, const char *key)
{
    for (size_t i = 0; v && v->kind == CL_JV_OBJECT && i < v->n; i++)
        if (v->items[i].key && strcmp(v->items[i].key, key) == 0)
            return &v->items[i];
    return NULL;
}
