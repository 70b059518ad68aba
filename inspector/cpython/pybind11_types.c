#include "cpython/pybind11_types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpython/layout.h"
#include "cpython/referents.h"
#include "cpython/runtime.h"
#include "util/vec.h"

#define CAPSULE_PREFIX "__pybind11_internals_v"
#define MAX_TYPES (1u << 16)   /* torch registers about 500 */
#define MAX_NAME 256

/* Where internals keeps registered_types_py (a libstdc++ unordered_map), by internals version:
 * found by reading real processes (the map whose keys are the Python types and whose first
 * type_info's `type` is the key) of every torch from 2.1 to 2.15: v4 to 2.8, v11 from 2.9, v12
 * from 2.14 (after a second, faster map of the C++ types). */
static const struct {
    unsigned version;
    uint16_t types_py;
    uint16_t owned;   /* static_property_type, then default_metaclass and instance_base */
} rows[] = {{4, 56, 432}, {11, 56, 408}, {12, 112, 464}};

/* What internals makes with a new reference it never gives back (pybind11/detail/internals.h:
 * get_internals), in the order it keeps them; read off the same processes as types_py. */
static const char *const owned_names[] = {"static_property_type", "default_metaclass",
                                          "instance_base"};
#define NOWNED (sizeof owned_names / sizeof *owned_names)
#define INSTANCE_BASE 2   /* owned_names' index of the instance base */

uint64_t py_pybind11_value(struct cl_target *t, uint64_t obj)
{
    uint64_t head[PY_PYBIND11_FLAGS / 8 + 1], value = 0;
    if (cl_read_held(t, obj, head, sizeof head))
        return 0;
    value = head[PY_PYBIND11_VALUE / 8];
    if (!(head[PY_PYBIND11_FLAGS / 8] & PY_PYBIND11_SIMPLE_LAYOUT) && value &&
        cl_read_held(t, value, &value, 8))
        return 0;
    return value & 7 ? 0 : value;
}

/* Adds the C++ class of each Python type in the registered_types_py map at map (a Python subclass
 * of a bound class maps to its base's type_infos), the names read as cxx_class_name reads RTTI's:
 * std::type_info's name, in a library's read-only data. False when the map does not check out:
 * its nodes do not end after its count, or one has no type_info with a name. */
static bool read_map(struct cl_target *t, uint64_t map, struct py_pybind11_types *p)
{
    uint64_t head[4]; /* buckets, bucket count, first node, element count */
    if (cl_read_held(t, map, head, sizeof head) || head[3] > MAX_TYPES)
        return false;
    uint64_t node = head[2], seen = 0;
    for (; node && seen < head[3]; seen++) {
        uint64_t n[4], info[2], name_at; /* next, key, its vector's begin and end */
        char name[MAX_NAME];
        if (cl_read_held(t, node, n, sizeof n) || !n[1] || n[3] <= n[2] ||
            cl_read_held(t, n[2], &info[0], 8) || cl_read_held(t, info[0], info, sizeof info) ||
            !info[0] || (info[0] & 7) || !info[1] || (info[1] & 7) ||
            cl_read_u64(t, info[1] + 8, &name_at) || cl_read_cstr(t, name_at, name, sizeof name))
            return false;
        const char *text = name[0] == '*' ? name + 1 : name; /* a local type's mark */
        bool inserted;
        char *copy = strdup(text);
        if (copy && CL_VEC_RESERVE(p->names, p->n, p->cap) &&
            cl_addrmap_put(&p->by_type, n[1], (uint32_t)p->n, &inserted) != UINT32_MAX && inserted)
            p->names[p->n++] = copy;
        else
            free(copy);
        node = n[0];
    }
    return !node && seen == head[3];
}

struct capsules {
    struct py_objects *o;
    struct py_pybind11_types *p;
};

/* A capsule of internals: reads its map with the row of its version. */
static bool each_key(void *arg, uint64_t key, uint64_t value)
{
    struct capsules *c = arg;
    struct cl_target *t = c->o->rt->t;
    char text[128];
    unsigned version;
    if (!py_str_read(c->o, key, text, sizeof text) ||
        strncmp(text, CAPSULE_PREFIX, strlen(CAPSULE_PREFIX)) != 0 ||
        sscanf(text + strlen(CAPSULE_PREFIX), "%u", &version) != 1)
        return true;
    uint64_t pointer, internals;   /* PyCapsule: the head, then its pointer: internals ** */
    int row = -1;
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++)
        if (rows[k].version == version)
            row = (int)k;
    uint64_t owned[NOWNED];
    if (row < 0 || cl_read_held(t, value + 16, &pointer, 8) ||
        cl_read_held(t, pointer, &internals, 8) ||
        !read_map(t, internals + rows[row].types_py, c->p) ||
        cl_read_held(t, internals + rows[row].owned, owned, sizeof owned)) {
        size_t len = strlen(c->p->unread);
        snprintf(c->p->unread + len, sizeof c->p->unread - len, "%sv%u", len ? ", " : "", version);
        return true;
    }
    struct py_pybind11_types *p = c->p;
    for (size_t k = 0; k < NOWNED; k++) /* each a type: checked by the heap, which must know it */
        if (owned[k] && p->nowned < sizeof p->owned / sizeof *p->owned) {
            p->owned[p->nowned].addr = owned[k];
            p->owned[p->nowned].instance_base = k == INSTANCE_BASE;
            snprintf(p->owned[p->nowned++].name, sizeof p->owned[0].name,
                     "<pybind11 internals v%u: %s>", version, owned_names[k]);
        }
    return true;
}

void py_pybind11_types_read(struct py_objects *o, struct py_pybind11_types *p)
{
    const struct py_layout *l = o->rt->l;
    struct capsules c = {o, p};
    uint64_t dicts[2] = {py_word(o, o->rt->interp + l->is_builtins),
                         l->is_interp_dict ? py_word(o, o->rt->interp + l->is_interp_dict) : 0};
    for (int k = 0; k < 2; k++)
        if (dicts[k])
            py_dict_items(o, dicts[k], each_key, &c);
}

#define MAX_BASES 32

const char *py_pybind11_cxx_class(struct py_objects *o, const struct py_pybind11_types *p,
                                  uint64_t type)
{
    for (int k = 0; type && p->n && k < MAX_BASES; k++) {
        uint32_t at = cl_addrmap_get(&p->by_type, type);
        if (at != UINT32_MAX)
            return p->names[at];
        type = py_word(o, type + o->rt->l->tp_base);
    }
    return NULL;
}

void py_pybind11_types_free(struct py_pybind11_types *p)
{
    for (size_t k = 0; k < p->n; k++)
        free(p->names[k]);
    free(p->names);
    cl_addrmap_free(&p->by_type);
    memset(p, 0, sizeof *p);
}
