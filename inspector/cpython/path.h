/* A path as culeak renders it (`__main__.history[17].grad_fn → AddBackward0`), kept as marked
 * text: each step starts with PY_PATH_MARK and a letter for its kind. One rendering so gives both
 * the display text users paste (py_path_text) and the steps scripts read (py_path_steps, the
 * JSON's "steps"). Names read from the target never carry the mark: the renderer replaces it. */
#ifndef CULEAK_CPYTHON_PATH_H
#define CULEAK_CPYTHON_PATH_H

#include <stdbool.h>
#include <stddef.h>

#define PY_PATH_MARK '\x1f'
/* How the text of an elided step begins: ` → …120 steps…`. */
#define PY_PATH_ELISION " → …"

enum py_path_kind {
    PY_PATH_ROOT = 'r',       /* where it starts: `__main__`, `<thread main: f() at x.py:3>` */
    PY_PATH_ATTR = 'a',       /* `.name` */
    PY_PATH_INDEX = 'i',      /* `[17]` */
    PY_PATH_KEY = 'k',        /* `['k']`, `[(1, 2)]`, `[model.fc2.weight]` */
    PY_PATH_LOCAL = 'l',      /* `.f_locals['x']`, `.gi_frame.f_locals['x']` */
    PY_PATH_DICT_KEY = 'd',   /* a dict's key itself, by position: `[*d][3]` */
    PY_PATH_SET_ITEM = 's',   /* a set's item, by position: `[*s][3]` */
    PY_PATH_AUTOGRAD = 'g',   /* through C++: ` → AddBackward0`, `.grad_fn → Mul…`, ` (saved)` */
    PY_PATH_ELIDED = 'e',     /* ` → …120 steps…`: the middle of a very long path, left out */
    PY_PATH_NAMED = 'n',      /* culeak's own notation where Python has none: `.<vars>` */
};

struct py_path_step {
    enum py_path_kind kind;
    const char *text;         /* the step's part of the display text (not NUL-terminated) */
    size_t len;
};

/* The display text: path without its marks, into out (cut to cap bytes); returns out. */
char *py_path_text(const char *path, char *out, size_t cap);
/* The steps in order, at most cap of them into out; returns how many the path has. Text before
 * the first mark belongs to no step (the `[*` that a dict key's position wraps around). */
size_t py_path_steps(const char *path, struct py_path_step *out, size_t cap);
/* "root", "attr", ...: the kind as the JSON names it; NULL for a letter that is no kind. */
const char *py_path_kind_name(enum py_path_kind kind);

#endif
