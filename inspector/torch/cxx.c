#include "torch/cxx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"
#include "util/vec.h"

static bool class_name(struct cl_target *t, uint64_t obj, bool held, char *out, size_t cap)
{
    /* held: the object as the caller's other reads; its vtable and RTTI, read-only, as a dump
     * recorded them */
    int (*read_obj)(struct cl_target *, uint64_t, void *, size_t) = held ? cl_read_held : cl_read;
    int (*read_ro)(struct cl_target *, uint64_t, void *, size_t) =
        held ? cl_read_unless_left_out : cl_read;
    uint64_t vptr = 0, typeinfo = 0, name = 0;
    if (!obj || (obj & 7) || read_obj(t, obj, &vptr, 8) || !vptr || (vptr & 7))
        return false;
    /* vtables live in .data.rel.ro: read-only after relocation, and backed by the library file */
    const struct cl_mapping *m = cl_mappings_find(&t->maps, vptr);
    if (!m || !m->path || m->path[0] != '/' || (m->perms & (CL_MAP_W | CL_MAP_X)))
        return false;
    if (read_ro(t, vptr - 8, &typeinfo, 8) || !typeinfo || read_ro(t, typeinfo + 8, &name, 8) ||
        !name || (held ? cl_read_cstr_unless_left_out : cl_read_cstr)(t, name, out, cap) != 0)
        return false;
    return out[0] != '\0';
}

bool cxx_class_name(struct cl_target *t, uint64_t obj, char *out, size_t cap)
{
    return class_name(t, obj, false, out, cap);
}

bool cxx_class_name_held(struct cl_target *t, uint64_t obj, char *out, size_t cap)
{
    return class_name(t, obj, true, out, cap);
}

void cxx_short_name(const char *mangled, char *out, size_t cap)
{
    const char *p = mangled, *last = NULL;
    size_t last_len = 0;
    if (*p == 'N')
        p++;
    while (*p >= '1' && *p <= '9') {
        size_t len = 0;
        while (*p >= '0' && *p <= '9')
            len = len * 10 + (size_t)(*p++ - '0');
        if (len > strlen(p))
            break;
        last = p;
        last_len = len;
        p += len;
    }
    if (last)
        cl_copy_span(out, cap, last, last_len);
    else
        snprintf(out, cap, "%s", mangled);
}

void cxx_class_text(const char *mangled, char *out, size_t cap)
{
    const char *p = mangled;
    size_t len = 0;
    bool nested = *p == 'N';
    out[0] = '\0';
    p += nested;
    while (*p >= '1' && *p <= '9') {
        size_t n = 0;
        while (*p >= '0' && *p <= '9')
            n = n * 10 + (size_t)(*p++ - '0');
        if (n > strlen(p) || (len && !cl_append(out, cap, &len, "::")) ||
            !cl_append_n(out, cap, &len, p, n))
            break;
        p += n;
    }
    if (!len || *p != (nested ? 'E' : '\0') || p[nested] != '\0')
        snprintf(out, cap, "%s", mangled); /* a template, a substitution: left as it is */
}

bool cxx_vector(struct cl_target *t, uint64_t at, uint64_t elem, uint64_t max, uint64_t v[3])
{
    return !cl_read(t, at, v, 3 * sizeof *v) && v[1] >= v[0] && v[2] >= v[1] &&
           (v[1] - v[0]) % elem == 0 && (v[1] - v[0]) / elem <= max;
}

bool cxx_vector_held(struct cl_target *t, uint64_t at, uint64_t elem, uint64_t max, uint64_t v[3])
{
    return cl_target_holds_range(t, at, 3 * sizeof *v) && cxx_vector(t, at, elem, max, v);
}

uint64_t cxx_malloc_size(struct cl_target *t, uint64_t ptr, uint64_t max)
{
    uint64_t head;
    if (!ptr || (ptr & 15) || cl_read_u64(t, ptr - 8, &head))
        return 0;
    uint64_t size = head & ~7ull;
    /* bit 1: IS_MMAPPED (the header then counts two words); bit 2: NON_MAIN_ARENA */
    uint64_t overhead = (head & 2) ? 16 : 8;
    if (size < 32 || size <= overhead || size - overhead > max)
        return 0;
    return size - overhead;
}

static enum cxx_kind kind_of(const char *mangled)
{
    if (strstr(mangled, "UndefinedTensorImpl"))
        return CXX_UNDEFINED_TENSOR;
    if (strstr(mangled, "TensorImpl"))
        return CXX_TENSOR;
    if (strstr(mangled, "DifferentiableViewMeta"))
        return CXX_VIEW_META;
    if (strcmp(mangled, "N3c1011StorageImplE") == 0)
        return CXX_STORAGE;
    /* torch::autograd's nodes; its other polymorphic classes (metadata, hooks, views) are not */
    if (strncmp(mangled, "N5torch8autograd", 16) == 0 && !strstr(mangled, "Meta") &&
        !strstr(mangled, "SavedVariable") && !strstr(mangled, "ViewInfo") &&
        !strstr(mangled, "ForwardGrad") && !strstr(mangled, "Hook"))
        return CXX_NODE;
    return CXX_OTHER;
}

/* What the classifier knows of obj's vtable (enum cxx_kind | name index << 8), read once a
 * vtable; CXX_OTHER for no vtable. */
static uint32_t class_of(struct cxx_classifier *c, uint64_t obj)
{
    uint64_t vptr = obj && !(obj & 7) ? cl_read_ptr_or_0(c->t, obj) : 0;
    if (!vptr)
        return CXX_OTHER;
    uint32_t known = cl_addrmap_get(&c->kinds, vptr);
    if (known != UINT32_MAX)
        return known;
    char mangled[160];
    uint32_t k = CXX_OTHER;
    if (cxx_class_name(c->t, obj, mangled, sizeof mangled)) {
        k = kind_of(mangled);
        if (c->nnames < UINT32_MAX >> 8 && CL_VEC_RESERVE(c->names, c->nnames + 1, c->names_cap)) {
            if (!c->nnames)
                c->names[c->nnames++][0] = '\0'; /* entry 0: none */
            cxx_short_name(mangled, c->names[c->nnames], CXX_SHORT_NAME);
            k |= (uint32_t)c->nnames++ << 8;
        }
    }
    bool inserted;
    (void)cl_addrmap_put(&c->kinds, vptr, k, &inserted); /* a miss only costs a lookup again */
    return k;
}

enum cxx_kind cxx_classify(struct cxx_classifier *c, uint64_t obj)
{
    return (enum cxx_kind)(class_of(c, obj) & 0xff);
}

const char *cxx_short_class(struct cxx_classifier *c, uint64_t obj)
{
    uint32_t name = class_of(c, obj) >> 8;
    return name ? c->names[name] : NULL;
}

void cxx_classifier_free(struct cxx_classifier *c)
{
    cl_addrmap_free(&c->kinds);
    free(c->names);
}
