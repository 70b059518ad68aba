/* `culeak info`: what the target is and which runtimes it holds. */
#ifndef CULEAK_REPORT_INFO_H
#define CULEAK_REPORT_INFO_H

#include <stdio.h>

#include "report/warnings.h"
#include "runtime/python.h"
#include "runtime/rank.h"
#include "runtime/torch.h"
#include "target/target.h"

void cl_report_info_text(FILE *out, const struct cl_target *t, const struct cl_python_info *py,
                         const struct cl_torch_info *tc, const struct cl_rank *rank,
                         const struct cl_report_notes *w);
void cl_report_info_json(FILE *out, const struct cl_target *t, const struct cl_python_info *py,
                         const struct cl_torch_info *tc, const struct cl_rank *rank,
                         const struct cl_report_notes *w);

#endif
