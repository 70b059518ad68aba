#include "cpython/runtime.h"

#include "cpython/gclist.h"
#include "util/notes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    enum py_family f;
    const char *symbol;
    unsigned since; /* the first 3.minor that has it: an older one's dump never looked it up */
} family_symbols[] = {
    {PY_F_TYPE, "PyType_Type", 0},
    {PY_F_DICT, "PyDict_Type", 0},
    {PY_F_DICT, "PyFrozenDict_Type", 15}, /* a dict with its hash after it */
    {PY_F_LIST, "PyList_Type", 0},
    {PY_F_TUPLE, "PyTuple_Type", 0},
    {PY_F_STR, "PyUnicode_Type", 0},
    {PY_F_INT, "PyLong_Type", 0},
    {PY_F_FLOAT, "PyFloat_Type", 0},
    {PY_F_BYTES, "PyBytes_Type", 0},
    {PY_F_SET, "PySet_Type", 0},
    {PY_F_CELL, "PyCell_Type", 0},
    {PY_F_SET, "PyFrozenSet_Type", 0},
    {PY_F_GEN, "PyCoro_Type", 0},
    {PY_F_GEN, "PyAsyncGen_Type", 0},
    {PY_F_FUNCTION, "PyFunction_Type", 0},
    {PY_F_METHOD, "PyMethod_Type", 0},
    {PY_F_MODULE, "PyModule_Type", 0},
    {PY_F_CODE, "PyCode_Type", 0},
    {PY_F_FRAME, "PyFrame_Type", 0},
    {PY_F_GEN, "PyGen_Type", 0},
    {PY_F_PROPERTY, "PyProperty_Type", 0},
    {PY_F_STATICMETHOD, "PyStaticMethod_Type", 0},
    {PY_F_CLASSMETHOD, "PyClassMethod_Type", 0},
    {PY_F_TRACEBACK, "PyTraceBack_Type", 0},
    {PY_F_CFUNCTION, "PyCFunction_Type", 0},
    {PY_F_WEAKREF, "_PyWeakref_RefType", 0},
    {PY_F_EXCEPTION, "PyExc_BaseException", 0},
    {PY_F_OBJECT, "PyBaseObject_Type", 0},
    {PY_F_MAPPINGPROXY, "PyDictProxy_Type", 0},
    {PY_F_CONTEXT, "PyContext_Type", 0},
    {PY_F_CONTEXTVAR, "PyContextVar_Type", 0},
    {PY_F_CONTEXT_TOKEN, "PyContextToken_Type", 0},
    {PY_F_SEQ_ITER, "PyListIter_Type", 0},
    {PY_F_SEQ_ITER, "PyListRevIter_Type", 0},
    {PY_F_SEQ_ITER, "PyTupleIter_Type", 0},
    {PY_F_SEQ_ITER, "PySeqIter_Type", 0},
    {PY_F_SEQ_ITER, "PyReversed_Type", 0},
    {PY_F_ENUMERATE, "PyEnum_Type", 0},
    {PY_F_ZIP, "PyZip_Type", 0},
    {PY_F_MAP, "PyMap_Type", 0},
    {PY_F_FUNC_ITER, "PyFilter_Type", 0},
    {PY_F_CALL_ITER, "PyCallIter_Type", 0},
    {PY_F_DICT_ITER, "PyDictIterKey_Type", 0},
    {PY_F_DICT_ITER, "PyDictIterValue_Type", 0},
    {PY_F_DICT_ITER, "PyDictIterItem_Type", 0},
    {PY_F_DICT_ITER, "PyDictRevIterKey_Type", 0},
    {PY_F_DICT_ITER, "PyDictRevIterValue_Type", 0},
    {PY_F_DICT_ITER, "PyDictRevIterItem_Type", 0},
    {PY_F_DICT_VIEW, "PyDictKeys_Type", 0},
    {PY_F_DICT_VIEW, "PyDictValues_Type", 0},
    {PY_F_DICT_VIEW, "PyDictItems_Type", 0},
    {PY_F_SET_ITER, "PySetIter_Type", 0},
};

static int find_families(struct py_runtime *rt, const struct py_runtime_site *py, unsigned minor,
                         struct cl_error *err)
{
    for (size_t i = 0; i < sizeof family_symbols / sizeof *family_symbols; i++) {
        uint64_t a;
        /* optional: a dump from before a family was read still opens */
        if (minor < family_symbols[i].since ||
            !cl_module_symbol_optional(py->module, family_symbols[i].symbol, &a, NULL))
            continue;
        /* PyExc_BaseException is a pointer variable; the others are the type objects. */
        if (family_symbols[i].f == PY_F_EXCEPTION && cl_read_u64(rt->t, a, &a) != 0)
            continue;
        if (!rt->family_type[family_symbols[i].f])
            rt->family_type[family_symbols[i].f] = a;
        if (rt->nknown < sizeof rt->known / sizeof *rt->known) {
            rt->known[rt->nknown].type = a;
            rt->known[rt->nknown++].family = family_symbols[i].f;
        }
    }
    (void)cl_module_symbol(py->module, "_Py_NoneStruct", &rt->none, NULL);   /* 0: no None */
    (void)cl_module_symbol_optional(py->module, "Handlers", &rt->signal_handlers, NULL);
    (void)cl_module_symbol_optional(py->module, "PyODict_Type", &rt->odict_type, NULL);
    if (!rt->family_type[PY_F_TYPE] || !rt->family_type[PY_F_DICT])
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "%s does not export PyType_Type and "
                            "PyDict_Type; cannot identify objects",
                            py->module->path);
    return 0;
}

#define MAIN_INTERPRETER_MAX (1u << 20)   /* _PyRuntimeState is under 100 KiB in 3.11-3.14 */

/* The interpreter, its first thread and sys.modules as layout l says. */
static int threads_fit(struct py_runtime *rt, const struct py_layout *l, struct cl_error *err)
{
    struct cl_target *t = rt->t;
    uint64_t ts, back, modules, modules_type;
    if (cl_read_u64(t, rt->runtime + l->rt_interpreters_head, &rt->interp) || !rt->interp)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "no interpreter in _PyRuntime (the process has "
                            "not initialised Python, or is finalising)");
    if (l->rt_main_interpreter != PY_NONE &&
        (rt->interp < rt->runtime || rt->interp - rt->runtime > MAIN_INTERPRETER_MAX))
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the %s layout does not fit this runtime: its "
                            "main interpreter is not inside _PyRuntime",
                            l->name);
    if (cl_read_u64(t, rt->interp + l->is_threads_head, &ts) != 0 ||
        (ts && (cl_read_u64(t, ts + l->ts_interp, &back) != 0 || back != rt->interp)))
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the %s layout does not fit this runtime: its "
                            "thread state does not point back to the interpreter",
                            l->name);
    if (cl_read_u64(t, rt->interp + l->is_modules, &modules) || !modules ||
        cl_read_u64(t, modules + l->ob_type, &modules_type) ||
        modules_type != rt->family_type[PY_F_DICT])
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the %s layout does not fit this runtime: "
                            "sys.modules is not a dict",
                            l->name);
    return 0;
}

/* Whether the object at obj has a type whose type's type is `type` (a metaclass's type is). */
static bool is_object(struct py_runtime *rt, const struct py_layout *l, uint64_t obj)
{
    uint64_t ty, meta, top;
    return cl_read_u64(rt->t, obj + l->ob_type, &ty) == 0 && ty &&
           cl_read_u64(rt->t, ty + l->ob_type, &meta) == 0 && meta &&
           cl_read_u64(rt->t, meta + l->ob_type, &top) == 0 && top == rt->family_type[PY_F_TYPE];
}

/* The GC state as layout l says: generation0 points at the first list's head (what tells 3.13.0
 * from later 3.13 releases), and each list is empty or starts with an object. A list that breaks
 * at its first node means the layout is wrong, not the heap. */
static int gc_fits(struct py_runtime *rt, const struct py_layout *l, struct cl_error *err)
{
    uint64_t gc = rt->interp + l->is_gc, gen0;
    if (cl_read_u64(rt->t, gc + l->gc_generation0, &gen0) || gen0 != gc + l->gc_generations)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "the %s layout does not fit this runtime: the "
                            "GC's generation 0 pointer (0x%llx) is not its first list (0x%llx)",
                            l->name, (unsigned long long)gen0,
                            (unsigned long long)(gc + l->gc_generations));
    for (unsigned g = 0; g <= PY_GC_GENERATIONS; g++) {
        uint64_t head = py_gc_list_head(l, gc, g), first;
        if (cl_read_u64(rt->t, head, &first))
            return cl_error_set(err, CL_E_UNSUPPORTED,
                                "the %s layout does not fit this runtime: "
                                "GC list %u's head cannot be read",
                                l->name, g);
        first &= ~3ull;   /* 3.12+ keep flags in the low bits */
        if (first != head && !is_object(rt, l, first + l->gc_head_size))
            return cl_error_set(err, CL_E_UNSUPPORTED,
                                "the %s layout does not fit this runtime: "
                                "GC list %u breaks at its first node (0x%llx)",
                                l->name, g, (unsigned long long)first);
    }
    return 0;
}

/* Layout l, with the runtime's _Py_DebugOffsets filled in, checked on the target. */
static int variant_fits(struct py_runtime *rt, const struct py_layout *l, struct cl_error *err)
{
    rt->layout = *l;
    py_debug_offsets_fill(&rt->debug, &rt->layout);
    int rc = threads_fit(rt, &rt->layout, err);
    if (!rc)
        rc = gc_fits(rt, &rt->layout, err);
    if (rc)
        return rc;
    if (rt->layout.rt_main_interpreter != PY_NONE)   /* patch releases move it: as found */
        rt->layout.rt_main_interpreter = (uint32_t)(rt->interp - rt->runtime);
    rt->table = l;
    rt->l = &rt->layout;
    return 0;
}

/* The first of the minor's variants that fits; the first one's complaint when none does. */
static int choose_variant(struct py_runtime *rt, unsigned minor, struct cl_error *err)
{
    size_t n;
    const struct py_layout *const *all = py_layouts(&n);
    struct cl_error first = {0};
    unsigned tried = 0;
    for (size_t i = 0; i < n; i++) {
        if (all[i]->minor != minor)
            continue;
        struct cl_error e;
        if (variant_fits(rt, all[i], &e) == 0)
            return 0;
        if (!tried++)
            first = e;
    }
    *err = first;   /* the caller made sure the minor has a table */
    if (tried > 1)
        snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg),
                 " (and no other 3.%u variant fits either)", minor);
    return err->code;
}

int py_runtime_open(struct cl_target *t, const struct py_runtime_site *py, struct py_runtime *rt,
                    struct cl_error *err)
{
    return py_runtime_open_layout(t, py, NULL, rt, err);
}

int py_runtime_open_layout(struct cl_target *t, const struct py_runtime_site *py,
                           const struct py_layout *layout, struct py_runtime *rt,
                           struct cl_error *err)
{
    memset(rt, 0, sizeof *rt);
    rt->t = t;
    rt->module = py->module;
    rt->runtime = py->runtime;
    unsigned major = (unsigned)(py->version_hex >> 24);
    unsigned minor = (unsigned)(py->version_hex >> 16) & 0xff;
    if (py->free_threaded)
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "Python %s is a free-threaded build; culeak "
                            "walks only default (GIL) builds",
                            py->version);
    /* Debug builds (sys.abiflags "d": libpython3.12d.so, python3.12d) lay objects out otherwise. */
    const char *base = strrchr(py->module->path, '/');
    char tag[32];
    snprintf(tag, sizeof tag, "%u.%ud", major, minor);
    if (base && strstr(base, tag))
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "%s is a debug build of Python %s; culeak "
                            "walks only release builds",
                            py->module->path, py->version);
    const struct py_layout *any = py_layout_for(major, minor);
    if (!any) {
        char names[256];
        py_layout_names(names, sizeof names);
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "culeak has no object layout for Python %s "
                            "(its layouts: %s)",
                            py->version, names);
    }
    int rc = py_debug_offsets_read(t, rt->runtime, minor, &rt->debug, err);
    if (rc)
        return rc;
    if ((rc = find_families(rt, py, minor, err)))
        return rc;
    /* Structural checks: a wrong table fails here, before anything is reported. */
    uint64_t type_of_type;
    if (cl_read_u64(t, rt->family_type[PY_F_TYPE] + any->ob_type, &type_of_type) ||
        type_of_type != rt->family_type[PY_F_TYPE])
        return cl_error_set(err, CL_E_UNSUPPORTED,
                            "type(type) is not type: the runtime at 0x%llx "
                            "is not Python %s as detected",
                            (unsigned long long)rt->runtime, py->version);
    if (layout && layout->minor != minor)
        return cl_error_set(err, CL_E_UNSUPPORTED, "the %s layout is not one for Python %s",
                            layout->name, py->version);
    rc = layout ? variant_fits(rt, layout, err) : choose_variant(rt, minor, err);
    if (rc)
        return rc;
    unsigned checked, differ = py_debug_offsets_compare(&rt->debug, rt->table, NULL, &checked);
    if (differ)
        cl_note_add(&t->warnings,
                    "%u fields of culeak's %s layout differ from the runtime's "
                    "_Py_DebugOffsets (used instead): a build culeak has not seen; run "
                    "check-layout",
                    differ, rt->table->name);
    return 0;
}

#define SCAN_MAX (64u << 20)
#define SCAN_CHUNK (1u << 16)

/* Whether p is a _PyRuntime under layout l: the interpreter list's head and main agree (checked
 * by the caller), the interpreter's first thread points back to it, the runtime's main thread is
 * one of its threads, (3.11+) the main interpreter is embedded in the runtime, after p (patch
 * releases move it: 3.13.5 has it at +88400, 3.13.18 at +88424), and (3.13+) p opens with the
 * _Py_DebugOffsets cookie. */
static bool runtime_fits(struct cl_target *t, const struct py_layout *l, uint64_t p,
                         uint64_t interp)
{
    uint64_t ts, back, main_thread, id;
    char cookie[8];
    bool embedded = interp > p && interp - p <= MAIN_INTERPRETER_MAX;
    if (l->rt_debug_offsets &&
        (cl_read(t, p, cookie, sizeof cookie) || memcmp(cookie, "xdebugpy", sizeof cookie) != 0))
        return false;
    if ((interp & 7) || (l->rt_main_interpreter != PY_NONE && !embedded) ||
        cl_read_u64(t, interp + l->is_threads_head, &ts) || !ts || (ts & 7) ||
        cl_read_u64(t, ts + l->ts_interp, &back) || back != interp ||
        cl_read_u64(t, p + l->rt_main_thread, &main_thread) || !main_thread)
        return false;
    for (int i = 0; ts && i < 256; i++) {
        if (cl_read_u64(t, ts + l->ts_thread_id, &id) == 0 && id == main_thread)
            return true;
        if (cl_read_u64(t, ts + l->ts_next, &ts) != 0)
            return false;
    }
    return false;
}

static uint64_t scan_range(struct cl_target *t, uint64_t start, uint64_t end, unsigned only_minor,
                           uint64_t *buf)
{
    for (uint64_t at = start; at < end; at += SCAN_CHUNK - 1024) {
        size_t n = end - at < SCAN_CHUNK ? (size_t)(end - at) : SCAN_CHUNK;
        if (cl_read(t, at, buf, n) != 0)
            continue;
        size_t nl;
        const struct py_layout *const *all = py_layouts(&nl);
        for (size_t li = 0; li < nl; li++) {
            const struct py_layout *l = all[li];
            if (only_minor && l->minor != only_minor)
                continue;
            size_t head = l->rt_interpreters_head / 8; /* interpreters.main follows head */
            for (size_t w = 0; w + head + 1 < n / 8; w++) {
                uint64_t interp = buf[w + head];
                if (interp && interp == buf[w + head + 1] && runtime_fits(t, l, at + 8 * w, interp))
                    return at + 8 * w;
            }
        }
    }
    return 0;
}

int py_runtime_scan(struct cl_target *t, const struct cl_module *m, unsigned minor, uint64_t *addr)
{
    uint64_t scanned = 0, after = 0, found = 0;
    *addr = 0;
    uint64_t *buf = malloc(SCAN_CHUNK);
    if (!buf)
        return CL_E_INTERNAL;
    for (size_t i = 0; !found && i < t->maps.n && scanned < SCAN_MAX; i++) {
        const struct cl_mapping *map = &t->maps.v[i];
        bool mine = map->path && strcmp(map->path, m->path) == 0;
        bool bss = !map->path && map->start == after; /* anonymous, right after the module */
        if (mine)
            after = map->end;
        if (!(map->perms & CL_MAP_W) || (!mine && !bss))
            continue;
        found = scan_range(t, map->start, map->end, minor, buf);
        scanned += map->end - map->start;
    }
    free(buf);
    *addr = found;
    return 0;
}
