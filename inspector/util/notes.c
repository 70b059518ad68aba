#include "util/notes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cl_note_add(char **notes, const char *fmt, ...)
{
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t old = *notes ? strlen(*notes) : 0;
    char *w = realloc(*notes, old + strlen(line) + 2);
    if (!w)
        return;
    sprintf(w + old, "%s\n", line);
    *notes = w;
}
