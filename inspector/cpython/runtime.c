#include "cpython/runtime.h"

#include "cpython/layout_check.h"

#include <string.h>

static const struct { enum py_family f; const char *symbol; } family_symbols[] = {
    {PY_F_TYPE, "PyType_Type"},         {PY_F_DICT, "PyDict_Type"},
    {PY_F_LIST, "PyList_Type"},         {PY_F_TUPLE, "PyTuple_Type"},
    {PY_F_STR, "PyUnicode_Type"},       {PY_F_INT, "PyLong_Type"},
    {PY_F_FLOAT, "PyFloat_Type"},       {PY_F_BYTES, "PyBytes_Type"},
    {PY_F_SET, "PySet_Type"},           {PY_F_CELL, "PyCell_Type"},
    {PY_F_FUNCTION, "PyFunction_Type"}, {PY_F_METHOD, "PyMethod_Type"},
    {PY_F_MODULE, "PyModule_Type"},     {PY_F_CODE, "PyCode_Type"},
    {PY_F_FRAME, "PyFrame_Type"},       {PY_F_GEN, "PyGen_Type"},
    {PY_F_PROPERTY, "PyProperty_Type"}, {PY_F_STATICMETHOD, "PyStaticMethod_Type"},
    {PY_F_CLASSMETHOD, "PyClassMethod_Type"}, {PY_F_TRACEBACK, "PyTraceBack_Type"},
    {PY_F_CFUNCTION, "PyCFunction_Type"}, {PY_F_WEAKREF, "_PyWeakref_RefType"},
    {PY_F_EXCEPTION, "PyExc_BaseException"}, {PY_F_OBJECT, "PyBaseObject_Type"},
};

int py_runtime_open(struct cl_target *t, const struct cl_python_info *py, struct py_runtime *rt,
                    struct cl_error *err)
{
    memset(rt, 0, sizeof *rt);
    rt->t = t;
    unsigned major = (unsigned)(py->version_hex >> 24), minor = (unsigned)(py->version_hex >> 16) & 0xff;
    if (py->free_threaded)
        return cl_error_set(err, CL_E_UNSUPPORTED, "Python %s is a free-threaded build; culeak "
                            "walks only default (GIL) builds", py->version);
    if (!(rt->l = py_layout_for(major, minor)))
        return cl_error_set(err, CL_E_UNSUPPORTED, "culeak has no object layout for Python %s "
                            "(supported: 3.9 to 3.13)", py->version);
    rt->runtime = py->runtime_addr;
    const struct py_layout *l = rt->l;
    unsigned checked;
    if (py_layout_check_debug_offsets(l, t, rt->runtime, NULL, &checked) > 0)
        return cl_error_set(err, CL_E_UNSUPPORTED, "the %s layout table disagrees with the "
                            "runtime's own _Py_DebugOffsets (run check-layout for the fields); "
                            "this build is not one culeak knows", l->name);
    for (size_t i = 0; i < sizeof family_symbols / sizeof *family_symbols; i++) {
        uint64_t a;
        if (!cl_module_symbol(py->module, family_symbols[i].symbol, &a, NULL))
            continue;
        /* PyExc_BaseException is a pointer variable; the others are the type objects. */
        if (family_symbols[i].f == PY_F_EXCEPTION && cl_read_u64(t, a, &a) != 0)
            continue;
        rt->family_type[family_symbols[i].f] = a;
    }
    cl_module_symbol(py->module, "_Py_NoneStruct", &rt->none, NULL);
    cl_module_symbol(py->module, "PyCoro_Type", &rt->coro_type, NULL);
    cl_module_symbol(py->module, "PyAsyncGen_Type", &rt->asyncgen_type, NULL);
    if (!rt->family_type[PY_F_TYPE] || !rt->family_type[PY_F_DICT])
        return cl_error_set(err, CL_E_UNSUPPORTED, "%s does not export PyType_Type and "
                            "PyDict_Type; cannot identify objects", py->module->path);

    /* Structural checks: a wrong table fails here, before anything is reported. */
    uint64_t type_of_type, ts, back, modules, modules_type;
    if (cl_read_u64(t, rt->family_type[PY_F_TYPE] + 8, &type_of_type) ||
        type_of_type != rt->family_type[PY_F_TYPE])
        return cl_error_set(err, CL_E_UNSUPPORTED, "type(type) is not type: the runtime at 0x%llx "
                            "is not Python %s as detected", (unsigned long long)rt->runtime,
                            py->version);
    if (cl_read_u64(t, rt->runtime + l->rt_interpreters_head, &rt->interp) || !rt->interp)
        return cl_error_set(err, CL_E_UNSUPPORTED, "no interpreter in _PyRuntime (the process has "
                            "not initialised Python, or is finalising)");
    if (cl_read_u64(t, rt->interp + l->is_threads_head, &ts) != 0 ||
        (ts && (cl_read_u64(t, ts + l->ts_interp, &back) != 0 || back != rt->interp)))
        return cl_error_set(err, CL_E_UNSUPPORTED, "the %s layout does not fit this runtime: its "
                            "thread state does not point back to the interpreter", l->name);
    if (cl_read_u64(t, rt->interp + l->is_modules, &modules) || !modules ||
        cl_read_u64(t, modules + 8, &modules_type) || modules_type != rt->family_type[PY_F_DICT])
        return cl_error_set(err, CL_E_UNSUPPORTED, "the %s layout does not fit this runtime: "
                            "sys.modules is not a dict", l->name);
    return 0;
}
