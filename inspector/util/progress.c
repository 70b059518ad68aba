#include "util/progress.h"

#include <stdlib.h>
#include <time.h>

#define FIRST_AFTER 1.0   /* seconds of silence: most walks end before it */
#define EVERY 1.0

/* CULEAK_PROGRESS_AFTER: the silence in seconds, for logs that want every walk (0) or only the
 * longest; anything but a number from 0 to a day leaves the default. */
static double first_after(void)
{
    const char *text = getenv("CULEAK_PROGRESS_AFTER");
    char *end;
    double s = text && *text ? strtod(text, &end) : -1;
    return text && *text && !*end && s >= 0 && s <= 86400 ? s : FIRST_AFTER;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cl_progress_start(struct cl_progress *p, FILE *out, const char *what)
{
    *p = (struct cl_progress){.out = out, .what = what};
    if (out) {
        p->start = now();
        p->next = p->start + first_after();
    }
}

static void draw(struct cl_progress *p, double t, uint64_t items, uint64_t bytes_read)
{
    /* \r and clear to the end of the line: the line is redrawn in place */
    fprintf(p->out, "\rculeak: %llu objects %s, %.1f MB read, %.1f s\033[K",
            (unsigned long long)items, p->what, (double)bytes_read / 1e6, t - p->start);
    fflush(p->out);
    p->shown = true;
}

void cl_progress_tick(struct cl_progress *p, uint64_t items, uint64_t bytes_read)
{
    if (!p->out)
        return;
    double t = now();
    if (t < p->next)
        return;
    draw(p, t, items, bytes_read);
    p->next = t + EVERY;
}

void cl_progress_done(struct cl_progress *p, uint64_t items, uint64_t bytes_read)
{
    if (!p->shown)
        return;
    draw(p, now(), items, bytes_read);
    fputc('\n', p->out);
    p->shown = false;
}
