/* `culeak info`: what the target is and which runtimes it holds. */
#ifndef CULEAK_REPORT_INFO_H
#define CULEAK_REPORT_INFO_H

#include <stdio.h>

#include "engine/session.h"

void cl_report_info_text(FILE *out, const struct cl_session *s);
void cl_report_info_json(FILE *out, const struct cl_session *s);

#endif
