/* The C++ classes pybind11 registered for Python types. Each pybind11 bundle in the process (torch
 * has one; other extensions may have their own) keeps its `internals` behind a capsule named
 * "__pybind11_internals_vN_…" in builtins (v4) or in the interpreter's dict (v5 on); its
 * registered_types_py maps a PyTypeObject to the type_infos whose cpptype names the C++ class.
 * Many bound classes have no vtable (c10d::Reducer), so this is the one way to name what a
 * pybind11 object wraps. */
#ifndef CULEAK_CPYTHON_PYBIND11_TYPES_H
#define CULEAK_CPYTHON_PYBIND11_TYPES_H

#include <stdint.h>

#include "cpython/object.h"
#include "util/addrmap.h"

/* pybind11's instance (pybind11/detail/common.h), the same in every 2.x and 3.x release torch
 * bundles: the head, the value pointer (outside the simple layout: its values_and_holders
 * array), a holder of up to two words (a std::shared_ptr's pointer and control block), the weak
 * references, then its flags (bit 1: simple_layout). */
#define PY_PYBIND11_VALUE 16
#define PY_PYBIND11_HOLDER 24
#define PY_PYBIND11_FLAGS 48
#define PY_PYBIND11_SIMPLE_LAYOUT 2
/* its size: the basicsize of a bound class's instances, unless they take dynamic attributes */
#define PY_PYBIND11_INSTANCE_SIZE 56

struct py_pybind11_types {
    struct cl_addrmap by_type; /* PyTypeObject address -> index into names */
    char **names;              /* mangled C++ class names ("N4c10d7ReducerE") */
    size_t n, cap;
    /* internals of an ABI version culeak has no row for ("v13"), or whose map did not check
     * out; their types are left unnamed */
    char unread[64];
    /* the types each internals made and holds a reference to (its static property type,
     * default metaclass and instance base), for the books */
    struct py_pybind11_owned {
        uint64_t addr;
        char name[64];   /* "<pybind11 internals v11: default_metaclass>" */
        bool instance_base;   /* the base of every type of its instances */
    } owned[12];
    size_t nowned;
};

/* Reads every pybind11 internals of the process, only from memory the target holds (so that a
 * dump recorded with it reads the same). */
void py_pybind11_types_read(struct py_objects *o, struct py_pybind11_types *p);
/* The mangled C++ class pybind11 registered for the type at addr or, for a Python subclass, for
 * its nearest base that has one; NULL when none. */
const char *py_pybind11_cxx_class(struct py_objects *o, const struct py_pybind11_types *p,
                                  uint64_t type);
/* The C++ object the pybind11 instance at obj wraps: its value pointer (the word after the
 * head in the simple layout, else the first of its values_and_holders), or 0 when none. */
uint64_t py_pybind11_value(struct cl_target *t, uint64_t obj);
void py_pybind11_types_free(struct py_pybind11_types *p);

#endif
