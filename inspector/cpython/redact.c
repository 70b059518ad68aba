#include "cpython/redact.h"

#include <stdlib.h>

#include "cpython/object.h"
#include "util/addrmap.h"

/* The strs that name things in the reports though they are not interned: a module's name (its
 * md_name, what sys.modules and `__main__.x` say) and a code object's file name, name and
 * qualified name (frames' roots). Kept in names; false when out of memory. */
static bool collect_names(struct py_heap *h, struct cl_addrmap *names)
{
    const struct py_layout *l = h->objects.rt->l;
    for (uint32_t i = 0; i < h->n; i++) {
        const struct py_type *ty = py_node_type(h, i);
        uint16_t fields[3] = {PY_NONE, PY_NONE, PY_NONE};
        if (ty->family == PY_F_MODULE)
            fields[0] = l->module_name;
        else if (ty->family == PY_F_CODE)
            fields[0] = l->co_filename, fields[1] = l->co_name, fields[2] = l->co_qualname;
        for (int k = 0; k < 3; k++) {
            uint64_t name;
            bool inserted;
            if (fields[k] != PY_NONE &&
                !cl_read_u64(h->objects.rt->t, h->nodes[i].addr + fields[k], &name) && name &&
                cl_addrmap_put(names, name, 1, &inserted) == UINT32_MAX)
                return false;
        }
    }
    return true;
}

uint64_t py_redact(struct py_heap *h, void (*left_out)(void *arg, uint64_t addr, uint64_t len),
                   void *arg, uint64_t *bytes)
{
    struct cl_addrmap names = {0};
    bool all_names = collect_names(h, &names);
    uint64_t objects = 0, at, len;
    *bytes = 0;
    for (uint32_t i = 0; i < h->n; i++) {
        uint64_t addr = h->nodes[i].addr;
        /* out of memory for the names: every str goes, names too, rather than a secret stay */
        if ((all_names && cl_addrmap_get(&names, addr) != UINT32_MAX) ||
            !py_text_range(&h->objects, addr, &at, &len))
            continue;
        left_out(arg, at, len);
        objects++;
        *bytes += len;
    }
    cl_addrmap_free(&names);
    return objects;
}
