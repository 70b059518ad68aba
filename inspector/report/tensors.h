/* `culeak tensors` (storages biggest first, each with its tensors and their paths) and
 * `culeak summary` (totals by device and by the root that holds them). */
#ifndef CULEAK_REPORT_TENSORS_H
#define CULEAK_REPORT_TENSORS_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/session.h"

struct cl_tensor_filter {
    int device;             /* -1 all, else a device type (0 cpu, 1 cuda) */
    uint64_t min_bytes;
};

/* Both need the session's tensors built (cl_session_tensors). */
void cl_report_tensors(FILE *out, struct cl_session *s, const struct cl_tensor_filter *f, bool json);
void cl_report_summary(FILE *out, struct cl_session *s, bool json);

#endif
