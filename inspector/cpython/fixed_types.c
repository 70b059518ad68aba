#include "cpython/fixed_types.h"

#include <stddef.h>
#include <string.h>

/* Read off the DWARF of the pyenv builds 3.9.18-3.13.0 (libpython and lib-dynload) and of sid's
 * python3.14 (and its lib-dynload) with gdb `ptype /o STRUCT` (the struct is named after the label's comment), each
 * field one that the type's tp_traverse visits; tp_basicsize is the struct's size (var-sized:
 * the items' offset). tests/integration/test_c_types.py compares every row with
 * gc.get_referents on each interpreter. A field Python exposes as an attribute carries its
 * name; the rest print culeak's <name>. */
/* clang-format off */
static const struct py_fixed_type rows[] = {
    /* wrapperobject: a slot wrapper bound to an object, (1).__add__ */
    {"method-wrapper", 9, 15, 32, {{16, ".<descriptor>"}, {24, ".__self__"}}},
    /* striterobject, bytesiterobject, unicodeiterobject: {it_index, it_seq} */
    {"bytes_iterator", 9, 15, 32, {{24, ".<seq>"}}},
    {"bytearray_iterator", 9, 15, 32, {{24, ".<seq>"}}},
    {"str_iterator", 9, 15, 32, {{24, ".<seq>"}}},
    {"str_ascii_iterator", 11, 15, 32, {{24, ".<seq>"}}},
    /* memoryiterobject; PyMemoryViewObject (its managed buffer); _PyManagedBufferObject (the
     * exporter, master.obj); PyPickleBufferObject (view.obj) */
    {"memory_iterator", 10, 15, 48, {{24, ".<seq>"}}},
    {"memoryview", 9, 15, 144, {{24, ".<buffer>"}}},
    {"managedbuffer", 9, 15, 112, {{40, ".obj"}}},
    {"pickle.PickleBuffer", 9, 15, 104, {{24, ".<obj>"}}},
    /* gaobject (3.11 added starred and vectorcall), gaiterobject */
    {"types.GenericAlias", 9, 10, 48,
     {{16, ".__origin__"}, {24, ".__args__"}, {32, ".__parameters__"}}},
    {"types.GenericAlias", 11, 15, 64,
     {{16, ".__origin__"}, {24, ".__args__"}, {32, ".__parameters__"}}},
    {"generic_alias_iterator", 11, 15, 24, {{16, ".<alias>"}}},
    /* odictiterobject: the dict, the current key, the reused result tuple */
    {"odict_iterator", 9, 15, 64, {{24, ".<dict>"}, {48, ".<current key>"}, {56, ".<result>"}}},
    {"odict_keyiterator", 9, 15, 64, {{24, ".<dict>"}, {48, ".<current key>"}, {56, ".<result>"}}},
    {"odict_valueiterator", 9, 15, 64,
     {{24, ".<dict>"}, {48, ".<current key>"}, {56, ".<result>"}}},
    {"odict_itemiterator", 9, 15, 64, {{24, ".<dict>"}, {48, ".<current key>"}, {56, ".<result>"}}},
    /* dequeiterobject, either way; 3.12 renamed the module */
    {"_collections._deque_iterator", 9, 11, 56, {{32, ".<deque>"}}},
    {"_collections._deque_reverse_iterator", 9, 11, 56, {{32, ".<deque>"}}},
    {"collections._deque_iterator", 12, 15, 56, {{32, ".<deque>"}}},
    {"collections._deque_reverse_iterator", 12, 15, 56, {{32, ".<deque>"}}},
    /* PyHamtIterator: a Context's keys(), values(), items() iterators */
    {"keys", 9, 15, 168, {{16, ".<vars>"}}},
    {"values", 9, 15, 168, {{16, ".<vars>"}}},
    {"items", 9, 15, 168, {{16, ".<vars>"}}},
    /* genobject.c: PyCoroWrapper, PyAsyncGenASend, PyAsyncGenAThrow; iterobject.c's
     * anextawaitableobject; frameobject.c's PyFrameLocalsProxyObject */
    {"coroutine_wrapper", 9, 15, 24, {{16, ".<coroutine>"}}},
    {"async_generator_asend", 9, 15, 40, {{16, ".<generator>"}, {24, ".<value>"}}},
    {"async_generator_athrow", 9, 14, 40, {{16, ".<generator>"}, {24, ".<args>"}}},
    {"async_generator_athrow", 15, 15, 56,
     {{16, ".<generator>"}, {24, ".<type>"}, {32, ".<traceback>"}, {40, ".<value>"}}},
    {"anext_awaitable", 10, 15, 32, {{16, ".<iterator>"}, {24, ".<default>"}}},
    {"FrameLocalsProxy", 13, 15, 24, {{16, ".<frame>"}}},
    /* _functools' keyobject: cmp_to_key(f)(obj) */
    {"functools.KeyWrapper", 9, 15, 32, {{16, ".<cmp>"}, {24, ".obj"}}},
    /* itertools */
    {"itertools.batched", 12, 12, 32, {{16, ".<iterator>"}}},
    {"itertools.batched", 13, 15, 40, {{16, ".<iterator>"}}},
    {"itertools.combinations", 9, 15, 56, {{16, ".<pool>"}, {32, ".<result>"}}},
    {"itertools.combinations_with_replacement", 9, 15, 56, {{16, ".<pool>"}, {32, ".<result>"}}},
    {"itertools.permutations", 9, 15, 64, {{16, ".<pool>"}, {40, ".<result>"}}},
    {"itertools.pairwise", 10, 12, 32, {{16, ".<iterator>"}, {24, ".<previous>"}}},
    {"itertools.pairwise", 13, 15, 40,
     {{16, ".<iterator>"}, {24, ".<previous>"}, {32, ".<result>"}}},
    {"itertools.repeat", 9, 15, 32, {{16, ".<element>"}}},
    {"itertools.zip_longest", 9, 15, 56,
     {{32, ".<iterators>"}, {40, ".<result>"}, {48, ".<fillvalue>"}}},
    {"itertools.count", 9, 15, 40, {{24, ".<count>"}, {32, ".<step>"}}},
    /* typevarobject.c (3.12+; 3.13 added defaults) */
    {"typing.TypeVar", 12, 12, 64,
     {{16, ".__name__"}, {24, ".__bound__"}, {32, ".<evaluate_bound>"},
      {40, ".__constraints__"}, {48, ".<evaluate_constraints>"}}},
    {"typing.TypeVar", 13, 15, 80,
     {{16, ".__name__"}, {24, ".__bound__"}, {32, ".<evaluate_bound>"},
      {40, ".__constraints__"}, {48, ".<evaluate_constraints>"}, {56, ".__default__"},
      {64, ".<evaluate_default>"}}},
    {"typing.ParamSpec", 12, 12, 40, {{16, ".__name__"}, {24, ".__bound__"}}},
    {"typing.ParamSpec", 13, 15, 56,
     {{16, ".__name__"}, {24, ".__bound__"}, {32, ".__default__"}, {40, ".<evaluate_default>"}}},
    {"typing.TypeVarTuple", 12, 12, 24, {{16, ".__name__"}}},
    {"typing.TypeVarTuple", 13, 14, 40,
     {{16, ".__name__"}, {24, ".__default__"}, {32, ".<evaluate_default>"}}},
    {"typing.TypeVarTuple", 15, 15, 56,
     {{16, ".__name__"}, {24, ".__bound__"}, {32, ".__default__"}, {40, ".<evaluate_default>"}}},
    {"typing.TypeAliasType", 12, 14, 56,
     {{16, ".__name__"}, {24, ".__type_params__"}, {32, ".<compute_value>"}, {40, ".<value>"},
      {48, ".__module__"}}},
    {"typing.TypeAliasType", 15, 15, 64,
     {{16, ".__name__"}, {24, ".__qualname__"}, {32, ".__type_params__"}, {40, ".<compute_value>"},
      {48, ".<value>"}, {56, ".__module__"}}},
    /* 3.15's unicodedata.iter_graphemes: the iterator and each segment keep the str */
    {"unicodedata.GraphemeBreakIterator", 15, 15, 64, {{16, ".<string>"}}},
    {"unicodedata.Segment", 15, 15, 40, {{16, ".<string>"}}},
    /* 3.15's lazy imports (PEP 810): what `lazy import` binds until first use */
    {"lazy_import", 15, 15, 56,
     {{16, ".<builtins>"}, {24, ".<from>"}, {32, ".<attr>"}, {40, ".<code>"}}},
    /* _io (built into libpython): bytesio, stringio, textio, rwpair, nldecoder_object; the
     * instance dict is the type's tp_dictoffset, read for every object */
    {"_io.BytesIO", 9, 15, 64, {{16, ".<buffer>"}}},
    {"_io.StringIO", 9, 11, 120, {{80, ".<decoder>"}, {88, ".<readnl>"}, {96, ".<writenl>"}}},
    {"_io.StringIO", 12, 13, 168, {{120, ".<decoder>"}, {128, ".<readnl>"}, {136, ".<writenl>"}}},
    {"_io.StringIO", 14, 15, 120, {{72, ".<decoder>"}, {80, ".<readnl>"}, {88, ".<writenl>"}}},
    {"_io.TextIOWrapper", 9, 11, 192,
     {{32, ".buffer"}, {40, ".encoding"}, {48, ".<encoder>"}, {56, ".<decoder>"},
      {64, ".<readnl>"}, {72, ".errors"}, {120, ".<decoded chars>"}, {136, ".<pending bytes>"},
      {152, ".<snapshot>"}, {168, ".<raw>"}}},
    {"_io.TextIOWrapper", 12, 15, 200,
     {{32, ".buffer"}, {40, ".encoding"}, {48, ".<encoder>"}, {56, ".<decoder>"},
      {64, ".<readnl>"}, {72, ".errors"}, {120, ".<decoded chars>"}, {136, ".<pending bytes>"},
      {152, ".<snapshot>"}, {168, ".<raw>"}}},
    {"_io.BufferedRWPair", 9, 15, 48, {{16, ".<reader>"}, {24, ".<writer>"}}},
    {"_io.IncrementalNewlineDecoder", 9, 15, 40, {{16, ".<decoder>"}, {24, ".<errors>"}}},
    /* _pickle's memo proxies (pickler.memo); _struct's PyStructObject and unpackiterobject
     * (its Py_buffer's obj at 32); array's arrayiterobject */
    {"_pickle.PicklerMemoProxy", 9, 15, 24, {{16, ".<pickler>"}}},
    {"_pickle.UnpicklerMemoProxy", 9, 15, 24, {{16, ".<unpickler>"}}},
    {"_struct.Struct", 9, 15, 56, {{40, ".format"}}},
    {"_struct.unpack_iterator", 9, 15, 112, {{16, ".<struct>"}, {32, ".<buffer>"}}},
    {"array.arrayiterator", 9, 15, 40, {{24, ".<array>"}}},
    /* _csv: DialectObj, ReaderObj, WriterObj (3.10 added the module's Error class) */
    {"_csv.Dialect", 9, 15, 48, {{40, ".lineterminator"}}},
    {"_csv.reader", 9, 15, 88, {{16, ".<iterator>"}, {24, ".dialect"}, {32, ".<fields>"}}},
    {"_csv.writer", 9, 9, 64, {{16, ".<write>"}, {24, ".dialect"}}},
    {"_csv.writer", 10, 15, 72, {{16, ".<write>"}, {24, ".dialect"}, {64, ".<error class>"}}},
    /* _sqlite3: pysqlite_Row, pysqlite_Blob (3.11+) */
    {"sqlite3.Row", 9, 15, 32, {{16, ".<data>"}, {24, ".<description>"}}},
    {"sqlite3.Blob", 11, 15, 48, {{16, ".<connection>"}}},
    /* _lsprof's ProfilerObject: the timer (3.12 added a sentinel) */
    {"_lsprof.Profiler", 9, 11, 64, {{48, ".<timer>"}}},
    {"_lsprof.Profiler", 12, 15, 80, {{48, ".<timer>"}, {72, ".<missing>"}}},
    /* _abc's _abc_data: the registry and the caches, sets of weak references */
    {"_abc._abc_data", 9, 15, 48,
     {{16, ".<registry>"}, {24, ".<cache>"}, {32, ".<negative cache>"}}},
    /* _sre's PatternObject (var-sized: its code follows) */
    {"re.Pattern", 9, 15, 96, {{32, ".<groupindex>"}, {40, ".<indexgroup>"}, {48, ".pattern"}}},
    /* _json's PyScannerObject (3.13 dropped its memo) */
    {"_json.Scanner", 9, 12, 72,
     {{24, ".object_hook"}, {32, ".object_pairs_hook"}, {40, ".parse_float"},
      {48, ".parse_int"}, {56, ".parse_constant"}, {64, ".<memo>"}}},
    {"_json.Scanner", 13, 15, 64,
     {{24, ".object_hook"}, {32, ".object_pairs_hook"}, {40, ".parse_float"},
      {48, ".parse_int"}, {56, ".parse_constant"}}},
    /* unionobject: int | str (3.14 made it typing.Union and split its arguments) */
    {"types.UnionType", 10, 13, 32, {{16, ".__args__"}, {24, ".<parameters>"}}},
    {"typing.Union", 14, 15, 56,
     {{16, ".__args__"}, {24, ".<hashable args>"}, {32, ".<unhashable args>"},
      {40, ".<parameters>"}}},
    /* _ctypes' CFieldObject: a Structure's field descriptor, its type (3.14 renamed it and
     * added its name) */
    {"_ctypes.CField", 9, 13, 72, {{40, ".<proto>"}}},
    {"ctypes.CField", 14, 15, 80, {{40, ".<proto>"}, {72, ".name"}}},
    /* _ctypes' PyCFuncPtrObject: its CDataObject's b_base and b_objects, then what calling it
     * uses (3.12+ also visits its heap type, the class edge) */
    {"_ctypes.CFuncPtr", 9, 15, 160,
     {{32, "._b_base_"}, {64, "._objects"}, {96, ".<thunk>"}, {104, ".<callable>"},
      {112, ".<converters>"}, {120, ".argtypes"}, {128, ".restype"}, {136, ".<checker>"},
      {144, ".errcheck"}, {152, ".<paramflags>"}}},
    /* _ctypes' DictRemoverObject: the callback of the weak proxies in ctypes' type caches
     * (PyDict_SetItemProxy), which holds the cache and the key to drop from it */
    {"_ctypes.DictRemover", 9, 15, 32, {{16, ".<key>"}, {24, ".<cache>"}}},
    /* templatelib's templateiterobject (3.14's t-strings) */
    {"string.templatelib.TemplateIter", 14, 15, 40, {{16, ".<strings>"}, {24, ".<interpolations>"}}},
};

/* C subclasses of dict: the fields each keeps beside its items. */
static const struct py_fixed_type dict_rows[] = {
    /* _ctypes' StgDictObject (tp_name "StgDict"), a ctypes class's tp_dict until 3.13 moved it
     * to StgInfo: beside its items, the pointed-to or element type, a function type's argument
     * types, their converters, its result type and checker */
    {"StgDict", 9, 12, 192,
     {{96, ".<proto>"}, {128, ".<argtypes>"}, {136, ".<converters>"}, {144, ".<restype>"},
      {152, ".<checker>"}}},
};
/* clang-format on */

const struct py_fixed_type *py_fixed_types(size_t *n)
{
    *n = sizeof rows / sizeof *rows;
    return rows;
}

static const struct py_fixed_type *find(const struct py_fixed_type *v, size_t n, const char *name,
                                        unsigned minor, int64_t size)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].since <= minor && minor <= v[i].until && v[i].size == size &&
            strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

const struct py_fixed_type *py_fixed_type(const char *name, unsigned minor, int64_t size)
{
    return find(rows, sizeof rows / sizeof *rows, name, minor, size);
}

const struct py_fixed_type *py_fixed_dict_fields(const char *name, unsigned minor, int64_t size)
{
    return find(dict_rows, sizeof dict_rows / sizeof *dict_rows, name, minor, size);
}
