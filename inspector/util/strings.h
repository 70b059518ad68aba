/* String stores: strings kept together until all go at once. A string costs its bytes and no
 * allocation of its own, and one stored string may be shared by everyone who holds that text (a
 * heap of a job's history has a path per tensor and per storage, most of them alike in pairs). */
#ifndef CULEAK_UTIL_STRINGS_H
#define CULEAK_UTIL_STRINGS_H

#include <stddef.h>

struct cl_strings_chunk;

struct cl_strings {
    struct cl_strings_chunk *chunks; /* the newest first */
    size_t used, cap;                /* of the newest */
};

/* A copy of s that lives until cl_strings_free; NULL when out of memory. */
const char *cl_strings_add(struct cl_strings *st, const char *s);
void cl_strings_free(struct cl_strings *st);

#endif
