#include "report/text.h"

#include <string.h>

/* The byte offset of the column-th code point of s (or its end). */
static size_t column_offset(const char *s, size_t column)
{
    size_t i = 0;
    for (; s[i] && column; column--)
        for (i++; ((unsigned char)s[i] & 0xc0) == 0x80; i++)
            ;
    return i;
}

static size_t columns(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

void cl_text_line(FILE *out, const char *line, size_t width)
{
    /* a line has at most as many columns as bytes: most are counted by neither */
    size_t n = width < 8 || strlen(line) <= width ? 0 : columns(line);
    if (n <= width) {
        fputs(line, out);
        putc('\n', out);
        return;
    }
    size_t head = (width - 1) * 2 / 3, tail = width - 1 - head;
    size_t cut = column_offset(line, head), rest = column_offset(line, n - tail);
    fprintf(out, "%.*s…%s\n", (int)cut, line, line + rest);
}

void cl_bytes_text(char *out, size_t cap, uint64_t n)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(out, cap, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

void cl_bytes_delta_text(char *out, size_t cap, int64_t n)
{
    char size[CL_BYTES_TEXT];
    cl_bytes_text(size, sizeof size, n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n);
    snprintf(out, cap, "%c%s", n < 0 ? '-' : '+', size);
}
