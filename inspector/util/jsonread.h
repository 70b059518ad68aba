/* Reading JSON back: culeak's own snapshot files, which may come from another machine or have been
 * edited, so every input is untrusted: bounded nesting, whole-input validation, no partial
 * result on error. */
#ifndef CULEAK_UTIL_JSONREAD_H
#define CULEAK_UTIL_JSONREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define CL_JSON_READ_MAX_DEPTH 64

enum cl_jv_kind { CL_JV_NULL, CL_JV_BOOL, CL_JV_NUMBER, CL_JV_STRING, CL_JV_ARRAY, CL_JV_OBJECT };

struct cl_jv {
    enum cl_jv_kind kind;
    bool boolean;
    double number;
    int64_t integer;          /* the number when it is an integer that fits (is_integer) */
    bool is_integer;
    char *string;             /* UTF-8, NUL-terminated */
    char *key;                /* a member of an object: its name */
    struct cl_jv *items;      /* an array's elements or an object's members, in order */
    size_t n;
};

/* Parses text[0..len) as one JSON value; CL_E_IO with the offset of the error otherwise. */
int cl_json_parse(const char *text, size_t len, struct cl_jv *out, struct cl_error *err);
void cl_jv_free(struct cl_jv *v);

/* An object's member by name, or NULL (also when v is not an object). */
const struct cl_jv *cl_jv_get(const struct cl_jv *v, const char *key);

#endif
