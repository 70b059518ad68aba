/* A streaming JSON writer: callers emit keys and values in order, the writer does commas, nesting
 * and escaping, so every writer of culeak's --json output produces valid JSON. */
#ifndef CULEAK_REPORT_JSON_H
#define CULEAK_REPORT_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"

#define CL_JSON_MAX_DEPTH 32

/* Output waits in buf until it is full, the document's outermost value closes, or
 * cl_json_finish: a report is millions of short tokens, which stdio would take a call each. A
 * document's stream takes nothing else meanwhile. */
struct cl_json {
    FILE *out;
    int depth;
    bool first[CL_JSON_MAX_DEPTH];
    bool after_key;
    size_t used;
    char buf[1 << 14];
};

void cl_json_init(struct cl_json *j, FILE *out);

/* The version of culeak's JSON documents: raised when a field changes meaning or goes away
 * (adding fields does not raise it). Every document and error object carries it. */
#define CL_SCHEMA_VERSION 1

/* Starts a top-level document: cl_json_init, its object, and its schema_version. */
void cl_json_begin_document(struct cl_json *j, FILE *out);
void cl_json_begin_object(struct cl_json *j);
void cl_json_end_object(struct cl_json *j);
void cl_json_begin_array(struct cl_json *j);
void cl_json_end_array(struct cl_json *j);
void cl_json_key(struct cl_json *j, const char *key);
void cl_json_string(struct cl_json *j, const char *s);   /* NULL writes null */
void cl_json_int(struct cl_json *j, long long v);
void cl_json_bool(struct cl_json *j, bool v);
void cl_json_null(struct cl_json *j);
void cl_json_hex(struct cl_json *j, uint64_t v);         /* "0x7f..." as a string */
/* A CUDA memory pool's id, torch's MempoolId_t pair: [a, b] */
void cl_json_pool_id(struct cl_json *j, const uint64_t id[2]);
/* A count, or null when v is negative (not known). */
void cl_json_count_or_null(struct cl_json *j, long long v);
/* A whole document that is an error object: {"schema_version", "error": {"code", "message"}}. */
void cl_json_error_document(FILE *out, enum cl_status code, const char *message);
/* A value that is already JSON (another document culeak wrote), written as it is. */
void cl_json_raw(struct cl_json *j, const char *json);
/* Ends the document with a newline. */
void cl_json_finish(struct cl_json *j);

#endif
