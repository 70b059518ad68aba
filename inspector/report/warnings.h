/* The warnings a report ends with: the note lists of every model it was built from (target, heap
 * walk, tensors, holders, allocator), handed over by the caller so reports never see a session. */
#ifndef CULEAK_REPORT_WARNINGS_H
#define CULEAK_REPORT_WARNINGS_H

#include <stdio.h>

#include "report/json.h"

#define CL_REPORT_NOTE_LISTS 6

/* Note lists in util/notes.h's format (newline-terminated lines); NULL entries are empty. */
struct cl_report_notes {
    const char *lists[CL_REPORT_NOTE_LISTS];
};

/* With j: a "warnings" key and array. Without: one line each, after prefix. */
void cl_report_warnings(FILE *out, struct cl_json *j, const struct cl_report_notes *w,
                        const char *prefix);
/* Ends a report's top-level JSON object: its warnings, then the closing brace. */
void cl_report_json_end(FILE *out, struct cl_json *j, const struct cl_report_notes *w);

#endif
