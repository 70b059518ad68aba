#include "report/warnings.h"

#include <string.h>

#include "util/text.h"

static void lines(FILE *out, struct cl_json *j, const char *notes, const char *prefix)
{
    for (const char *w = notes; w && *w;) {
        const char *nl = strchr(w, '\n');
        char line[600];
        cl_copy_span(line, sizeof line, w, (size_t)(nl - w));   /* a longer note is cut */
        if (j)
            cl_json_string(j, line);
        else
            fprintf(out, "%s%s\n", prefix, line);
        w = nl + 1;
    }
}

void cl_report_warnings(FILE *out, struct cl_json *j, const struct cl_report_notes *w,
                        const char *prefix)
{
    if (j) {
        cl_json_key(j, "warnings");
        cl_json_begin_array(j);
    }
    for (int i = 0; w && i < CL_REPORT_NOTE_LISTS; i++)
        lines(out, j, w->lists[i], prefix);
    if (j)
        cl_json_end_array(j);
}

void cl_report_json_end(FILE *out, struct cl_json *j, const struct cl_report_notes *w)
{
    cl_report_warnings(out, j, w, NULL);
    cl_json_end_object(j);
    cl_json_finish(j);
}
