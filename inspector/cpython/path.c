#include "cpython/path.h"

#include <string.h>

char *py_path_text(const char *path, char *out, size_t cap)
{
    size_t n = 0;
    if (!cap)
        return out;
    for (const char *p = path; *p;) {   /* the text between marks, a run at a time */
        const char *mark = strchrnul(p, PY_PATH_MARK);
        size_t run = (size_t)(mark - p);
        if (run > cap - 1 - n)
            run = cap - 1 - n;
        memcpy(out + n, p, run);
        n += run;
        if (!*mark || !mark[1] || n + 1 == cap)
            break;
        p = mark + 2;   /* the mark and its kind letter */
    }
    out[n] = '\0';
    return out;
}

size_t py_path_steps(const char *path, struct py_path_step *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = strchr(path, PY_PATH_MARK); p && p[1]; n++) {
        const char *text = p + 2, *next = strchr(text, PY_PATH_MARK);
        size_t len = next ? (size_t)(next - text) : strlen(text);
        if (n < cap)
            out[n] = (struct py_path_step){(enum py_path_kind)p[1], text, len};
        p = next;
    }
    return n;
}

const char *py_path_kind_name(enum py_path_kind kind)
{
    switch (kind) {
    case PY_PATH_ROOT: return "root";
    case PY_PATH_ATTR: return "attr";
    case PY_PATH_INDEX: return "index";
    case PY_PATH_KEY: return "key";
    case PY_PATH_LOCAL: return "local";
    case PY_PATH_DICT_KEY: return "dict_key";
    case PY_PATH_SET_ITEM: return "set_item";
    case PY_PATH_AUTOGRAD: return "autograd";
    case PY_PATH_ELIDED: return "elided";
    case PY_PATH_NAMED: return "named";
    }
    return NULL;
}
