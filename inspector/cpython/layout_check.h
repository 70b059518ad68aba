/* Checks a layout table against the DWARF of the target's runtime, where it has debug info
 * (the runtime's _Py_DebugOffsets are compared in debug_offsets.c). */
#ifndef CULEAK_CPYTHON_LAYOUT_CHECK_H
#define CULEAK_CPYTHON_LAYOUT_CHECK_H

#include <stdio.h>

#include "cpython/layout.h"
#include "symbols/symbols.h"
#include "target/target.h"

struct py_layout_check {
    unsigned checked, mismatched, missing;   /* missing: the field is not in the DWARF */
    unsigned unasked;   /* fields a dump's (older) culeak never looked up: not checked */
};

/* Compares every table field with the runtime module's DWARF, printing one line per mismatch (and
 * per field with verbose). Returns false when the module has no DWARF. */
bool py_layout_check_dwarf(const struct py_layout *l, const struct cl_module *runtime, FILE *out,
                           bool verbose, struct py_layout_check *result);

#endif
