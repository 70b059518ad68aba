/* How reports give a path (cpython/path.h): its display text in text and JSON, and beside it in
 * JSON its steps, each {"kind", "text"} and, where the step is plainly one, its "name", "index"
 * or "key". */
#ifndef CULEAK_REPORT_PATHS_H
#define CULEAK_REPORT_PATHS_H

#include <stddef.h>
#include <stdio.h>

#include "report/json.h"

#define CL_PATH_TEXT_CAP 8192   /* a path's display text: what the renderer ever writes */

/* The display text of a marked path (NULL stays NULL), in out. */
const char *cl_path_text(const char *path, char out[CL_PATH_TEXT_CAP]);
/* prefix then the path's display text, as one line of a text report (cl_text_line). */
void cl_text_path_line(FILE *out, const char *prefix, const char *path, size_t width);
/* The path as a JSON string of its display text (null for NULL). */
void cl_json_path(struct cl_json *j, const char *path);
/* The path's steps as a JSON array (empty for NULL). */
void cl_json_path_steps(struct cl_json *j, const char *path);

#endif
