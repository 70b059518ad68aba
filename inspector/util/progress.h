/* Progress lines for long work: nothing for the first second (CULEAK_PROGRESS_AFTER), then one
 * line a second, redrawn in place, and a last line when the work ends. Short runs and pipes see
 * nothing; the front ends pass a stream only when it is a terminal and --quiet was not given. */
#ifndef CULEAK_UTIL_PROGRESS_H
#define CULEAK_UTIL_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct cl_progress {
    FILE *out;                /* NULL: no progress */
    const char *what;         /* "walked", as in "1200000 objects walked" */
    double start, next;       /* monotonic seconds: when the work began, when to draw next */
    bool shown;               /* a line is on the terminal: the last one ends it */
};

void cl_progress_start(struct cl_progress *p, FILE *out, const char *what);
/* Cheap enough to call every few thousand items: it reads the clock and nothing else. */
void cl_progress_tick(struct cl_progress *p, uint64_t items, uint64_t bytes_read);
void cl_progress_done(struct cl_progress *p, uint64_t items, uint64_t bytes_read);

#endif
