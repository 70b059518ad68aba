/* A C extension that keeps Python objects in its static data, as extensions do (an interned name,
 * a cache, a registry): `kept` holds a reference of its own, `borrowed` only the address,
 * `kept_untracked` an object on no GC list (a tuple of strs, untracked by the collector), and
 * `after_type.kept` a reference right after a static type (within a heap type's size of it),
 * `far.kept` one 64 KiB into .bss, past the file's last page (an anonymous mapping). Its
 * module state holds one more, as a multi-phase module keeps its types and caches. `in_heap` is a
 * list of malloc'ed cells, as a C library's own structures are: hold_new(cls) makes an instance
 * and keeps it in a cell that holds its reference, which no static or object leads to. Built by
 * tests/integration/test_statics.py for the interpreter under test. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *kept;     /* a reference: keep(obj), released by keep(None) */
static PyObject *borrowed; /* an address only: borrow(obj) */
static PyObject *kept_untracked; /* a reference: keep_untracked(obj) */

/* A static type, and a reference in the word after it (keep_after_type(obj)): a type with
 * instances, which culeak knows as a type. */
static struct {
    PyTypeObject type;
    PyObject *kept;
} after_type = {{PyVarObject_HEAD_INIT(NULL, 0).tp_name = "static_refs.Plain",
                 .tp_basicsize = sizeof(PyObject), .tp_flags = Py_TPFLAGS_DEFAULT,
                 .tp_new = PyType_GenericNew}};

/* A static past the pages the file maps: the loader maps the rest of .bss anonymously. */
static struct {
    char pad[1 << 16];
    PyObject *kept;
} far;

/* A cell of the C heap, which no static points at directly, nor any object. */
struct cell {
    struct cell *next;
    PyObject *obj;
};
static struct cell *in_heap;

struct state {
    PyObject *in_state; /* a reference: keep_in_state(obj) */
};

static PyObject *keep(PyObject *self, PyObject *obj)
{
    (void)self;
    Py_XDECREF(kept);
    kept = obj == Py_None ? NULL : obj;
    Py_XINCREF(kept);
    Py_RETURN_NONE;
}

static PyObject *borrow(PyObject *self, PyObject *obj)
{
    (void)self;
    borrowed = obj;
    Py_RETURN_NONE;
}

static PyObject *keep_untracked(PyObject *self, PyObject *obj)
{
    (void)self;
    Py_INCREF(obj);
    Py_XSETREF(kept_untracked, obj);
    Py_RETURN_NONE;
}

static PyObject *keep_in_state(PyObject *self, PyObject *obj)
{
    struct state *st = PyModule_GetState(self);
    Py_INCREF(obj);
    Py_XSETREF(st->in_state, obj);
    Py_RETURN_NONE;
}

static PyObject *keep_after_type(PyObject *self, PyObject *obj)
{
    (void)self;
    Py_INCREF(obj);
    Py_XSETREF(after_type.kept, obj);
    Py_RETURN_NONE;
}

static PyObject *keep_far(PyObject *self, PyObject *obj)
{
    (void)self;
    Py_INCREF(obj);
    Py_XSETREF(far.kept, obj);
    Py_RETURN_NONE;
}

static int add_cell(PyObject *obj)
{
    struct cell *c = malloc(sizeof *c);
    if (!c)
        return -1;
    *c = (struct cell){in_heap, obj};
    in_heap = c;
    return 0;
}

/* A new instance of cls that only a cell holds (the call's reference); returns its id. */
static PyObject *hold_new(PyObject *self, PyObject *cls)
{
    (void)self;
    PyObject *obj = PyObject_CallNoArgs(cls);
    if (!obj || add_cell(obj))
        return obj ? PyErr_NoMemory() : NULL;
    return PyLong_FromVoidPtr(obj);
}

static int traverse(PyObject *self, visitproc visit, void *arg)
{
    struct state *st = PyModule_GetState(self);
    Py_VISIT(st ? st->in_state : NULL);
    return 0;
}

static PyMethodDef methods[] = {
    {"keep", keep, METH_O, "Keep a reference to obj in a static (None releases it)."},
    {"borrow", borrow, METH_O, "Keep obj's address in a static, with no reference."},
    {"keep_untracked", keep_untracked, METH_O, "Keep a reference to obj in another static."},
    {"keep_in_state", keep_in_state, METH_O, "Keep a reference to obj in the module's state."},
    {"keep_after_type", keep_after_type, METH_O, "Keep a reference to obj after a static type."},
    {"keep_far", keep_far, METH_O, "Keep a reference to obj 64 KiB into .bss."},
    {"hold_new", hold_new, METH_O, "A new cls() only a malloc'ed cell holds; its id."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "static_refs", NULL, sizeof(struct state),
                                    methods, NULL, traverse};

PyMODINIT_FUNC PyInit_static_refs(void)
{
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Py_INCREF(&after_type.type); /* 3.9 has no Py_NewRef */
    if (PyType_Ready(&after_type.type) ||
        PyModule_AddObject(m, "Plain", (PyObject *)&after_type.type)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
