/* Line numbers from a code object's line table, per format. Pure functions over the table's
 * bytes, so they are tested without a process. addr is the instruction's offset in bytes. */
#ifndef CULEAK_CPYTHON_LINETABLE_H
#define CULEAK_CPYTHON_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

/* Each returns the line, or -1 when the table has none for addr (or is malformed). */
int py_line_lnotab(const uint8_t *t, size_t n, int firstlineno, uint64_t addr);      /* 3.9 */
int py_line_linetable(const uint8_t *t, size_t n, int firstlineno, uint64_t addr);   /* 3.10 */
int py_line_locations(const uint8_t *t, size_t n, int firstlineno, uint64_t addr);   /* 3.11+ */

#endif
