#include "cpython/pybind11.h"

#include <string.h>

/* pybind11/attr.h: function_record {char *name, *doc, *signature; std::vector<argument_record>
 * args; impl; void *data[3]; free_data; policy and flags; nargs...; PyMethodDef *def; handle
 * scope, sibling; function_record *next}, and argument_record {const char *name, *descr; handle
 * value; flags} (pybind11 2.10-3.0: torch 2.1-2.14). */
static const struct record_layout {
    uint16_t name, args, def, next;
    uint16_t arg_size, arg_name, arg_value;
} layouts[] = {
    {0, 24, 104, 128, 32, 0, 16},
};

#define MAX_OVERLOADS 64
#define MAX_ARGS 64
#define MAX_NAME 128

/* The C string the word at `at` points at into out, only from memory the target holds; false
 * when it is none, or empty. */
static bool read_name(struct cl_target *t, uint64_t at, char *out, size_t cap)
{
    uint64_t p;
    return !cl_read_held(t, at, &p, sizeof p) && p && !cl_read_cstr_held(t, p, out, cap) && out[0];
}

/* The record chain from rec under layout r, if every record checks (its name is name, its args
 * a vector of argument records): its count of records, else 0. */
static unsigned check_chain(struct cl_target *t, const struct record_layout *r, uint64_t rec,
                            const char *name)
{
    uint64_t next;
    char got[MAX_NAME];
    unsigned n = 0;
    for (; rec && n < MAX_OVERLOADS; n++, rec = next) {
        uint64_t v[3];
        if (!read_name(t, rec + r->name, got, sizeof got) || strcmp(got, name) != 0 ||
            cl_read_held(t, rec + r->args, v, sizeof v) || v[1] < v[0] || v[2] < v[1] ||
            (v[1] - v[0]) % r->arg_size || (v[1] - v[0]) / r->arg_size > MAX_ARGS ||
            cl_read_held(t, rec + r->next, &next, sizeof next))
            return 0;
    }
    return rec ? 0 : n; /* a chain past MAX_OVERLOADS is no record's */
}

void py_pybind11_defaults(struct py_emitter *e, uint64_t obj)
{
    struct cl_target *t = e->o->rt->t;
    const struct py_layout *l = e->o->rt->l;
    uint64_t ml, self, rec;
    char name[MAX_NAME];
    if (cl_read_held(t, obj + l->cfunc_ml, &ml, sizeof ml) ||
        cl_read_held(t, obj + l->cfunc_self, &self, sizeof self) || !self || (self & 7) ||
        cl_read_held(t, self + 16, &rec, sizeof rec) || !rec || (rec & 7))
        return;
    for (size_t k = 0; k < sizeof layouts / sizeof *layouts; k++) {
        const struct record_layout *r = &layouts[k];
        uint64_t def;
        if (cl_read_held(t, rec + r->def, &def, sizeof def) || def != ml ||
            !read_name(t, ml, name, sizeof name) || !check_chain(t, r, rec, name))
            continue;
        for (uint64_t at = rec, next; at; at = next) {
            uint64_t v[2];
            if (cl_read_held(t, at + r->args, v, sizeof v) ||
                cl_read_held(t, at + r->next, &next, sizeof next))
                return;
            for (uint64_t a = v[0]; a < v[1]; a += r->arg_size) {
                uint64_t value;
                if (!cl_read_held(t, a + r->arg_value, &value, sizeof value) && value)
                    py_emit(e, value, PY_E_NAMED, (uint64_t)(uintptr_t)".<default argument>");
            }
        }
        return;
    }
}
