/* `culeak objects` (counts and sizes by type) and `culeak refs` (objects with their shortest
 * chain from a root). */
#ifndef CULEAK_REPORT_OBJECTS_H
#define CULEAK_REPORT_OBJECTS_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/session.h"

/* Both need the session's heap built (cl_session_heap). */
void cl_report_objects(FILE *out, struct cl_session *s, size_t top, bool json);

struct cl_refs_query {
    const uint64_t *addrs;       /* objects by address, or */
    size_t naddrs;
    const char *type;            /* every object whose type name is this (or ends in ".this") */
    size_t max_paths;            /* paths per object, shortest first (0: 1) */
};
/* Returns the number of objects matched. */
size_t cl_report_refs(FILE *out, struct cl_session *s, const struct cl_refs_query *q, bool json);

#endif
