/* The CPython runtime of a target, located and validated: the layout table, the main interpreter,
 * and the well-known static types by address, so walkers dispatch on addresses, not names. */
#ifndef CULEAK_CPYTHON_RUNTIME_H
#define CULEAK_CPYTHON_RUNTIME_H

#include "cpython/debug_offsets.h"
#include "cpython/layout.h"
#include "symbols/symbols.h"
#include "target/target.h"

/* The builtin type families whose instances have a referent rule of their own. */
enum py_family {
    PY_F_OTHER,
    PY_F_TYPE,
    PY_F_DICT,
    PY_F_LIST,
    PY_F_TUPLE,
    PY_F_STR,
    PY_F_INT,
    PY_F_FLOAT,
    PY_F_BYTES,
    PY_F_SET,
    PY_F_CELL,
    PY_F_FUNCTION,
    PY_F_METHOD,
    PY_F_MODULE,
    PY_F_CODE,
    PY_F_FRAME,
    PY_F_GEN,
    PY_F_PROPERTY,
    PY_F_STATICMETHOD,
    PY_F_CLASSMETHOD,
    PY_F_TRACEBACK,
    PY_F_CFUNCTION,
    PY_F_WEAKREF,
    PY_F_EXCEPTION,
    PY_F_DEQUE,
    PY_F_PARTIAL,
    PY_F_LRU_CACHE,
    PY_F_LRU_ELEM,
    /* C types whose referents only tp_traverse knows: core ones (mappingproxy, thread-local,
     * contextvars and the HAMT behind a Context), then extension-module ones found by name */
    PY_F_MAPPINGPROXY,
    PY_F_THREAD_LOCAL,
    PY_F_CONTEXT,
    PY_F_CONTEXTVAR,
    PY_F_CONTEXT_TOKEN,
    PY_F_SEQ_ITER,   /* list, reversed-list, tuple and sequence iterators; reversed() */
    PY_F_ENUMERATE,
    PY_F_ZIP,
    PY_F_MAP,
    PY_F_FUNC_ITER,  /* filter; itertools' takewhile, dropwhile, starmap, filterfalse */
    PY_F_CHAIN,
    PY_F_ISLICE,
    PY_F_COMPRESS,
    PY_F_ACCUMULATE,
    PY_F_CALL_ITER,  /* iter(callable, sentinel) */
    PY_F_CYCLE,      /* itertools.cycle; it and the itertools above found by name */
    PY_F_DICT_ITER,  /* over keys, values or items, either way */
    PY_F_DICT_VIEW,  /* keys(), values(), items() */
    PY_F_SET_ITER,
    PY_F_TEE,          /* itertools.tee's iterators, and the data they share: */
    PY_F_TEE_DATA,
    PY_F_GROUPBY,
    PY_F_GROUPER,      /* a group of itertools.groupby */
    PY_F_PRODUCT,
    PY_F_METHODCALLER, /* operator.methodcaller, attrgetter, itemgetter */
    PY_F_ATTRGETTER,
    PY_F_ITEMGETTER,
    PY_F_SIMPLE_QUEUE, /* _queue.SimpleQueue: 3.9-3.12 a list, 3.13+ a ring buffer */
    PY_F_HAMT,
    PY_F_HAMT_BITMAP,
    PY_F_HAMT_ARRAY,
    PY_F_HAMT_COLLISION,
    PY_F_FUTURE,
    PY_F_TASK,
    PY_F_TASK_STEP,
    PY_F_TASK_WAKEUP,
    PY_F_FUTURE_ITER,
    PY_F_ELEMENT,
    PY_F_SQLITE_CONN,
    PY_F_SQLITE_CACHE,
    PY_F_SQLITE_NODE,
    PY_F_SQLITE_STMT,
    PY_F_FIXED, /* a C type whose references are fields (cpython/fixed_types.h) */
    PY_F_READER, /* a library's C type its own reader knows (emit.h: py_type_reader) */
    PY_F_OBJECT,
    PY_F_COUNT
};

struct py_runtime {
    struct cl_target *t;
    const struct cl_module *module;     /* libpython, or the executable of a static build */
    const struct py_layout *l;          /* what the walkers read: points at layout */
    const struct py_layout *table;      /* the variant that fits this runtime */
    /* The table with what the runtime says of itself filled in: its _Py_DebugOffsets (3.13+)
     * and where its main interpreter is embedded (3.11+). */
    struct py_layout layout;
    struct py_debug_offsets debug;      /* debug.size is 0 before 3.13 */
    uint64_t runtime, interp;
    uint64_t family_type[PY_F_COUNT];   /* the main static type of each family, 0 if not found */
    struct {
        uint64_t type;
        enum py_family family;
    } known[64];   /* every builtin type found */
    size_t nknown;
    uint64_t none;                      /* _Py_NoneStruct */
    /* 3.9-3.11: signalmodule.c's static Handlers[NSIG], each {tripped, func}, where the runtime
     * has a symbol table (0 where not: a stripped build); 3.12+ keeps them in _PyRuntime */
    uint64_t signal_handlers;
    uint64_t odict_type; /* PyODict_Type, 0 where not found */
};

/* Where the runtime is and which release it is: what detection (runtime/python.h) found. */
struct py_runtime_site {
    const struct cl_module *module; /* libpython, or the executable of a static build */
    uint64_t runtime; /* _PyRuntime */
    uint32_t version_hex; /* PY_VERSION_HEX */
    const char *version; /* "3.11.2", for messages */
    bool free_threaded;
};

/* Selects the layout for the detected version and validates it on the target: of the minor's
 * variants, the first where `type` is its own type, the interpreter's first thread points back to
 * it, sys.modules is a dict, the GC's generation-0 pointer points at the first list's head and
 * every GC list's first node is an object. Fields _Py_DebugOffsets gives come from it. */
int py_runtime_open(struct cl_target *t, const struct py_runtime_site *py, struct py_runtime *rt,
                    struct cl_error *err);
/* The same with this table (py_layout_named gives one by name), which must fit; NULL: as above. */
int py_runtime_open_layout(struct cl_target *t, const struct py_runtime_site *py,
                           const struct py_layout *layout, struct py_runtime *rt,
                           struct cl_error *err);

/* Looks for _PyRuntime in the writable memory of module m (and the .bss mapping after it) when
 * neither its symbol nor its section is there: a word where the interpreter list's head and main
 * entries agree and that interpreter's first thread points back to it, under some layout table.
 * minor restricts the tables tried (0: all). *addr is the address, or 0 when none is found;
 * returns 0, or CL_E_INTERNAL when out of memory (not "no runtime"). */
int py_runtime_scan(struct cl_target *t, const struct cl_module *m, unsigned minor, uint64_t *addr);

#endif
