/* Every warning of a session (target, heap walk, tensors), in one place for every report. */
#ifndef CULEAK_REPORT_WARNINGS_H
#define CULEAK_REPORT_WARNINGS_H

#include <stdio.h>

#include "engine/session.h"
#include "report/json.h"

/* With j: a "warnings" key and array. Without: one line each, after prefix. */
void cl_report_warnings(FILE *out, struct cl_json *j, const struct cl_session *s, const char *prefix);

#endif
