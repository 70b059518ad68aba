/* `culeak info`: what the target is and which runtimes it holds. */
#ifndef CULEAK_REPORT_INFO_H
#define CULEAK_REPORT_INFO_H

#include <stdio.h>

#include "report/json.h"
#include "report/warnings.h"
#include "runtime/python.h"
#include "runtime/rank.h"
#include "runtime/torch.h"
#include "target/target.h"

/* The keys rank, local_rank and world_size (null where not set), as info and every document
 * that names ranks write them. */
void cl_json_rank(struct cl_json *j, const struct cl_rank *rank);

/* What the target is, as every report's header names it: "live process, pid 42", "dump of a
 * core file, pid 42"; returns buf. */
const char *cl_target_words(const struct cl_target *t, char *buf, size_t cap);

void cl_report_info_text(FILE *out, const struct cl_target *t, const struct cl_python_info *py,
                         const struct cl_torch_info *tc, const struct cl_rank *rank,
                         const struct cl_report_notes *w);
void cl_report_info_json(FILE *out, const struct cl_target *t, const struct cl_python_info *py,
                         const struct cl_torch_info *tc, const struct cl_rank *rank,
                         const struct cl_report_notes *w);

#endif
