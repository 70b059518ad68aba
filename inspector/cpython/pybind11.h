/* The default arguments of functions pybind11 binds (torch's, and any pybind11 extension's). A
 * bound function is a builtin whose __self__ holds its C++ function_record at the word after
 * its header (a PyCapsule's pointer; pybind11 3's own function_record type likewise): the
 * record's `args` vector keeps each argument's default value with a reference of its own
 * (argument_record::value, inc_ref'd when bound, dropped with the record), and its overloads
 * follow it through `next`. Those defaults (torch.distributed's *Options instances, a default
 * tensor) are held by nothing else, and no object leads to them but the function.
 *
 * The record has no header culeak can check, so each is checked whole before a word of it is
 * taken: its `def` is the builtin's own PyMethodDef and its name the method's name, and every
 * overload's name the same; the layout (pybind11 2.10 to 3.0, read off torch's builds) is a
 * table row, refused where nothing checks. */
#ifndef CULEAK_CPYTHON_PYBIND11_H
#define CULEAK_CPYTHON_PYBIND11_H

#include <stdint.h>

#include "cpython/emit.h"

/* Emits the defaults of the builtin function at obj, if pybind11 binds it (`.<default NAME>`). */
void py_pybind11_defaults(struct py_emitter *e, uint64_t obj);

#endif
