/* Text reports: lines that fit a terminal. A line longer than the width keeps its start and its
 * end and loses its middle ("…"), where long chains repeat themselves; --full prints them whole. */
#ifndef CULEAK_REPORT_TEXT_H
#define CULEAK_REPORT_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CL_TEXT_WIDTH 160   /* columns, the default */

struct cl_text_options {
    size_t width;           /* 0: lines are never cut (--full) */
    size_t top;             /* report lines to print, 0: all */
};

/* "10.4 MiB": bytes as people read them (powers of 1024, as torch's tools print); text reports
 * give sizes so, JSON exact bytes. CL_BYTES_TEXT is enough room for one. */
#define CL_BYTES_TEXT 32
void cl_bytes_text(char *out, size_t cap, uint64_t n);
/* A change of size: "+10.4 MiB", "-640 B", "+0 B". */
void cl_bytes_delta_text(char *out, size_t cap, int64_t n);

/* Prints line and a newline, cut to width columns (UTF-8 code points) when width is not 0. */
void cl_text_line(FILE *out, const char *line, size_t width);

#endif
