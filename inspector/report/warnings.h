/* Every warning of a session (target, heap walk, tensors), in one place for every report. */
#ifndef CULEAK_REPORT_WARNINGS_H
#define CULEAK_REPORT_WARNINGS_H

#include <stdio.h>

#include "engine/session.h"
#include "report/json.h"

/* With j: a "warnings" key and array. Without: one line each, after prefix. */
void cl_report_warnings(FILE *out, struct cl_json *j, const struct cl_session *s, const char *prefix);
/* Ends a report's top-level JSON object: its warnings, then the closing brace. */
void cl_report_json_end(FILE *out, struct cl_json *j, const struct cl_session *s);

#endif
