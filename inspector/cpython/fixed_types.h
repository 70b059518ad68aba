/* C types whose every reference is a field at a fixed offset, the same struct across a range of
 * versions: iterators, wrappers and the like, which tp_traverse visits field by field, and the
 * fields a C subclass of dict keeps beside its items (ctypes' StgDict). A row is data
 * (fixed_types.c); the referent reader (referents.c) emits its fields. */
#ifndef CULEAK_CPYTHON_FIXED_TYPES_H
#define CULEAK_CPYTHON_FIXED_TYPES_H

#include <stddef.h>
#include <stdint.h>

#define PY_FIXED_FIELDS 10

struct py_fixed_type {
    const char *name;          /* tp_name */
    uint8_t since, until;      /* the 3.minor versions whose struct this is */
    uint16_t size;             /* tp_basicsize: a type of another size is not this struct */
    struct {
        uint16_t offset;
        const char *label;     /* as a path prints it; NULL: no more fields */
    } fields[PY_FIXED_FIELDS];
};

/* The row of the type named name of that size in Python 3.minor, or NULL. */
const struct py_fixed_type *py_fixed_type(const char *name, unsigned minor, int64_t size);
/* The row of a C subclass of dict named name: the fields it keeps beside its items, or NULL. */
const struct py_fixed_type *py_fixed_dict_fields(const char *name, unsigned minor, int64_t size);
/* Every row, *n of them. */
const struct py_fixed_type *py_fixed_types(size_t *n);

#endif
