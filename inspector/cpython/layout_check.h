/* Checks a layout table against what the target's own binary says: DWARF where the runtime has
 * debug info, and `_Py_DebugOffsets` (3.13+). */
#ifndef CULEAK_CPYTHON_LAYOUT_CHECK_H
#define CULEAK_CPYTHON_LAYOUT_CHECK_H

#include <stdio.h>

#include "cpython/layout.h"
#include "symbols/symbols.h"
#include "target/target.h"

struct py_layout_check {
    unsigned checked, mismatched, missing;   /* missing: the field is not in the DWARF */
};

/* Compares every table field with the runtime module's DWARF, printing one line per mismatch (and
 * per field with verbose). Returns false when the module has no DWARF. */
bool py_layout_check_dwarf(const struct py_layout *l, const struct cl_module *runtime, FILE *out,
                           bool verbose, struct py_layout_check *result);

/* 3.13+: compares every table field that _Py_DebugOffsets covers with the values the runtime
 * carries at runtime_addr. Returns the number of mismatches (each printed to out if non-NULL);
 * -1 when the target has no _Py_DebugOffsets culeak knows (before 3.13). */
int py_layout_check_debug_offsets(const struct py_layout *l, struct cl_target *t,
                                  uint64_t runtime_addr, FILE *out, unsigned *checked);

#endif
