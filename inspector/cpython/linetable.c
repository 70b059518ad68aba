#include "cpython/linetable.h"

int py_line_lnotab(const uint8_t *t, size_t n, int firstlineno, uint64_t addr)
{
    /* (address increment, signed line increment) pairs; the line holds from its address on. */
    int line = firstlineno;
    uint64_t a = 0;
    for (size_t i = 0; i + 1 < n; i += 2) {
        a += t[i];
        if (a > addr)
            break;
        line += (int8_t)t[i + 1];
    }
    return line;
}

int py_line_linetable(const uint8_t *t, size_t n, int firstlineno, uint64_t addr)
{
    /* (length in bytes, signed line delta) per range; a delta of -128 means "no line". */
    int line = firstlineno, current = -1;
    uint64_t start = 0;
    for (size_t i = 0; i + 1 < n; i += 2) {
        int8_t delta = (int8_t)t[i + 1];
        if (delta == -128) {
            current = -1;
        } else {
            line += delta;
            current = line;
        }
        uint64_t end = start + t[i];
        if (addr >= start && addr < end)
            return current;
        start = end;
    }
    return -1;
}

/* Variable-length integers of the location table: 6 bits per byte, bit 6 = more follows. */
static int varint(const uint8_t *t, size_t n, size_t *i, uint32_t *out)
{
    uint32_t v = 0;
    for (unsigned shift = 0; *i < n && shift < 32; shift += 6) {
        uint8_t b = t[(*i)++];
        v |= (uint32_t)(b & 63) << shift;
        if (!(b & 64)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

int py_line_locations(const uint8_t *t, size_t n, int firstlineno, uint64_t addr)
{
    int line = firstlineno;
    uint64_t start = 0;
    for (size_t i = 0; i < n;) {
        uint8_t head = t[i++];
        if (!(head & 0x80))
            return -1;   /* not an entry start: a malformed table */
        unsigned code = (head >> 3) & 15;
        uint64_t end = start + 2 * ((head & 7) + 1u);   /* lengths count 2-byte code units */
        int has_line = 1;
        uint32_t v, skip;
        if (code == 15) {
            has_line = 0;   /* no location */
        } else if (code == 14 || code == 13) {   /* long form / no column: signed line delta */
            if (varint(t, n, &i, &v))
                return -1;
            line += (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
            for (int k = 0; code == 14 && k < 3; k++)   /* end line, column, end column */
                if (varint(t, n, &i, &skip))
                    return -1;
        } else if (code >= 10) {   /* one-line form: delta in the code, then two column bytes */
            line += (int)code - 10;
            i += 2;
        } else {                   /* short form: same line, one column byte */
            i += 1;
        }
        if (addr >= start && addr < end)
            return has_line ? line : -1;
        start = end;
    }
    return -1;
}
