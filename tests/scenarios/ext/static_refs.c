/* A C extension that keeps Python objects in its static data, as extensions do (an interned name,
 * a cache, a registry): `kept` holds a reference of its own, `borrowed` only the address. Built by
 * tests/integration/test_statics.py for the interpreter under test. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *kept;     /* a reference: keep(obj), released by keep(None) */
static PyObject *borrowed; /* an address only: borrow(obj) */

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

static PyMethodDef methods[] = {
    {"keep", keep, METH_O, "Keep a reference to obj in a static (None releases it)."},
    {"borrow", borrow, METH_O, "Keep obj's address in a static, with no reference."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "static_refs", NULL, -1, methods};

PyMODINIT_FUNC PyInit_static_refs(void)
{
    return PyModule_Create(&module);
}
