#include "report/pickle.h"

#include <string.h>

/* The opcodes used (Lib/pickletools.py). */
enum {
    PROTO = 0x80,
    STOP = '.',
    MARK = '(',
    EMPTY_DICT = '}',
    SETITEMS = 'u',
    EMPTY_LIST = ']',
    APPENDS = 'e',
    TUPLE2 = 0x86,
    BINUNICODE = 'X',
    BININT = 'J',
    LONG1 = 0x8a,
    NEWTRUE = 0x88,
    NEWFALSE = 0x89,
    NONE = 'N',
};

static void op(struct cl_pickle *p, int code)
{
    fputc(code, p->out);
}

static void le32(struct cl_pickle *p, uint32_t v)
{
    unsigned char b[4] = {v & 0xff, v >> 8 & 0xff, v >> 16 & 0xff, v >> 24 & 0xff};
    fwrite(b, 1, sizeof b, p->out);
}

void cl_pickle_begin(struct cl_pickle *p, FILE *out)
{
    p->out = out;
    op(p, PROTO);
    op(p, 2);
}

void cl_pickle_end(struct cl_pickle *p)
{
    op(p, STOP);
}

void cl_pickle_dict_begin(struct cl_pickle *p)
{
    op(p, EMPTY_DICT);
    op(p, MARK);
}

void cl_pickle_dict_end(struct cl_pickle *p)
{
    op(p, SETITEMS);
}

void cl_pickle_list_begin(struct cl_pickle *p)
{
    op(p, EMPTY_LIST);
    op(p, MARK);
}

void cl_pickle_list_end(struct cl_pickle *p)
{
    op(p, APPENDS);
}

void cl_pickle_pair(struct cl_pickle *p)
{
    op(p, TUPLE2);
}

void cl_pickle_str(struct cl_pickle *p, const char *s)
{
    size_t n = strlen(s);
    op(p, BINUNICODE);
    le32(p, (uint32_t)n);
    fwrite(s, 1, n, p->out);
}

/* LONG1: the value's two's complement, little-endian, in as few bytes as keep its sign. */
static void long1(struct cl_pickle *p, uint64_t bits, bool negative)
{
    unsigned char b[9];
    int n = 0;
    for (;;) {
        b[n++] = bits & 0xff;
        bits = negative ? (uint64_t)((int64_t)bits >> 8) : bits >> 8;   /* sign-extending */
        bool sign = b[n - 1] & 0x80;
        if (n == 8 || (negative ? bits == UINT64_MAX && sign : bits == 0 && !sign))
            break;
    }
    if (n == 8 && !negative && (b[7] & 0x80))
        b[n++] = 0;   /* 2^63 and up: one more byte keeps it positive */
    op(p, LONG1);
    op(p, n);
    fwrite(b, 1, (size_t)n, p->out);
}

void cl_pickle_int(struct cl_pickle *p, int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX) {
        op(p, BININT);
        le32(p, (uint32_t)(int32_t)v);
    } else {
        long1(p, (uint64_t)v, v < 0);
    }
}

void cl_pickle_uint(struct cl_pickle *p, uint64_t v)
{
    if (v <= INT32_MAX)
        cl_pickle_int(p, (int64_t)v);
    else
        long1(p, v, false);
}

void cl_pickle_bool(struct cl_pickle *p, bool v)
{
    op(p, v ? NEWTRUE : NEWFALSE);
}

void cl_pickle_none(struct cl_pickle *p)
{
    op(p, NONE);
}
