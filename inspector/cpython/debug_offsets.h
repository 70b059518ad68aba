/* _Py_DebugOffsets (3.13+): the runtime's own description of where its fields are, at the start
 * of _PyRuntime. Read through a table of its own layout, chosen by the PY_VERSION_HEX in its head
 * (3.14 and 3.15 insert fields), checked (cookie, version, every offset inside the struct size it
 * also states), then used to fill the layout table's fields it covers. */
#ifndef CULEAK_CPYTHON_DEBUG_OFFSETS_H
#define CULEAK_CPYTHON_DEBUG_OFFSETS_H

#include <stdio.h>

#include "cpython/layout.h"
#include "target/target.h"
#include "util/error.h"

#define PY_DEBUG_OFFSETS_MAX 1024   /* bytes: 3.13's struct is 584, 3.14's 760, 3.15's 888 */

/* Its head, the same in every minor: the cookie, PY_VERSION_HEX, then whether the build is
 * free-threaded (each 8 bytes). */
#define PY_DEBUG_COOKIE "xdebugpy"
#define PY_DEBUG_COOKIE_SIZE 8
#define PY_DEBUG_VERSION 8
#define PY_DEBUG_FREE_THREADED 16
#define PY_DEBUG_HEAD_SIZE 24

struct py_debug_offsets {
    uint64_t version_hex, free_threaded;
    unsigned char raw[PY_DEBUG_OFFSETS_MAX];   /* the struct as read from the target */
    size_t size;                               /* its size in this minor's layout */
};

/* Reads and checks the _Py_DebugOffsets at runtime_addr for Python 3.minor. Without one (no
 * cookie: before 3.13) d->size is 0 and the result 0. CL_E_UNSUPPORTED says why a struct that is
 * there does not check out, or that culeak has no layout of it for the release it names. */
int py_debug_offsets_read(struct cl_target *t, uint64_t runtime_addr, unsigned minor,
                          struct py_debug_offsets *d, struct cl_error *err);

/* Overwrites every field of l that d gives. */
void py_debug_offsets_fill(const struct py_debug_offsets *d, struct py_layout *l);

/* Compares the table with d, field by field: the number that differ, each printed to out when it
 * is not NULL; *checked says how many were compared. */
unsigned py_debug_offsets_compare(const struct py_debug_offsets *d, const struct py_layout *l,
                                  FILE *out, unsigned *checked);

#endif
