/* `culeak dump --redact`: which bytes of the heap are text that must not leave the machine. The
 * characters of every str the walk met and the bytes of every bytes object, but for the names the
 * reports are written with: interned strs (attributes, dict keys in code, functions, classes),
 * modules' names and code objects' file names and names. Their sizes stay, and so does whatever
 * else a page read holds. */
#ifndef CULEAK_CPYTHON_REDACT_H
#define CULEAK_CPYTHON_REDACT_H

#include <stdint.h>

#include "cpython/heap.h"

/* Calls left_out(arg, addr, len) for each such run of text; returns how many objects, and their
 * bytes in *bytes. */
uint64_t py_redact(struct py_heap *h, void (*left_out)(void *arg, uint64_t addr, uint64_t len),
                   void *arg, uint64_t *bytes);

#endif
