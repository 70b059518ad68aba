#include "report/paths.h"

#include <stdlib.h>
#include <string.h>

#include "cpython/path.h"
#include "report/text.h"
#include "util/text.h"

#define MAX_STEPS 1024   /* a path is at most 8 KiB of text: no more steps than that holds */

const char *cl_path_text(const char *path, char out[CL_PATH_TEXT_CAP])
{
    return path ? py_path_text(path, out, CL_PATH_TEXT_CAP) : NULL;
}

void cl_text_path_line(FILE *out, const char *prefix, const char *path, size_t width)
{
    char line[CL_PATH_TEXT_CAP + 64];
    size_t n = strnlen(prefix, 64);
    memcpy(line, prefix, n);
    py_path_text(path, line + n, sizeof line - n);
    cl_text_line(out, line, width);
}

void cl_json_path(struct cl_json *j, const char *path)
{
    char text[CL_PATH_TEXT_CAP];
    cl_json_string(j, cl_path_text(path, text));
}

/* The fields a step of this kind has besides its text: an attribute's or root's name, an index,
 * a key as Python writes it (the text inside the brackets). */
static void step_fields(struct cl_json *j, const struct py_path_step *s, const char *text)
{
    size_t n = strlen(text);
    char *end;
    switch (s->kind) {
    case PY_PATH_ROOT:
        cl_json_key(j, "name");
        cl_json_string(j, text);
        break;
    case PY_PATH_ATTR:
        cl_json_key(j, "name");
        cl_json_string(j, text + 1);   /* after the dot */
        break;
    case PY_PATH_INDEX: {
        long long i = strtoll(text + 1, &end, 10);
        if (text[0] == '[' && end == text + n - 1 && *end == ']') {
            cl_json_key(j, "index");
            cl_json_int(j, i);
        }
        break;
    }
    case PY_PATH_KEY: {
        char key[CL_PATH_TEXT_CAP];
        if (n >= 2 && text[0] == '[' && text[n - 1] == ']' &&
            cl_copy_span(key, sizeof key, text + 1, n - 2)) {
            cl_json_key(j, "key");
            cl_json_string(j, key);
        }
        break;
    }
    default: break;
    }
}

void cl_json_path_steps(struct cl_json *j, const char *path)
{
    struct py_path_step steps[MAX_STEPS];   /* 24 KiB: no allocation that could fail unseen */
    size_t n = path ? py_path_steps(path, steps, MAX_STEPS) : 0;
    cl_json_begin_array(j);
    for (size_t k = 0; k < n && k < MAX_STEPS; k++) {
        char text[CL_PATH_TEXT_CAP];
        const char *kind = py_path_kind_name(steps[k].kind);
        if (!kind || !cl_copy_span(text, sizeof text, steps[k].text, steps[k].len))
            continue;   /* cut short before its kind was known */
        cl_json_begin_object(j);
        cl_json_key(j, "kind");
        cl_json_string(j, kind);
        cl_json_key(j, "text");
        cl_json_string(j, text);
        step_fields(j, &steps[k], text);
        cl_json_end_object(j);
    }
    cl_json_end_array(j);
}
