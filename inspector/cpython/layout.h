/* Where CPython keeps what culeak reads, per minor version. The tables (layouts.c) are data; the
 * walkers never test a version number, they read the table. Offsets are bytes, x86-64, default
 * (GIL) builds. A field a version lacks is NONE. */
#ifndef CULEAK_CPYTHON_LAYOUT_H
#define CULEAK_CPYTHON_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PY_NONE UINT16_MAX

/* How a thread's frames are chained. */
enum py_frame_model {
    PY_FRAMES_OBJECTS,        /* 3.9/3.10: tstate->frame, PyFrameObject.f_back */
    PY_FRAMES_CFRAME,         /* 3.11/3.12: tstate->cframe->current_frame, iframe->previous */
    PY_FRAMES_CURRENT,        /* 3.13+: tstate->current_frame, iframe->previous */
};

/* How instance attributes of classes without an explicit tp_dictoffset are stored. */
enum py_dict_model {
    PY_DICT_OFFSET,           /* 3.9/3.10: tp_dictoffset only */
    PY_DICT_MANAGED_311,      /* dict at obj-24, else values at obj-32 */
    PY_DICT_MANAGED_312,      /* obj-24 holds a dict, or values-1 tagged with bit 0 */
    PY_DICT_MANAGED_313,      /* dict at obj-24, else inline values at obj+basicsize */
};

/* How a code object maps instruction offsets to line numbers. */
enum py_line_model {
    PY_LINES_LNOTAB, /* 3.9: co_lnotab (byte delta, line delta) pairs, f_lasti in bytes */
    PY_LINES_LINETABLE, /* 3.10: co_linetable (byte delta, line delta), f_lasti in code
                                 units */
    PY_LINES_LOCATIONS, /* 3.11+: the PEP 657 location table, frame instruction pointers */
};

enum py_dictkeys_model {
    PY_KEYS_310, /* dk_size (ssize), 40-byte header, 24-byte entries */
    PY_KEYS_311, /* dk_log2_size, dk_kind, 32-byte header, 16-byte unicode entries */
};

struct py_layout {
    const char *name; /* "3.11", or "3.13.5" for a patch-release variant */
    unsigned major, minor; /* the release the table was read off: 3.minor */
    enum py_frame_model frames;
    enum py_dict_model dicts;
    enum py_dictkeys_model keys;
    enum py_line_model lines;

    /* _PyRuntimeState */
    bool rt_debug_offsets; /* 3.13+: it opens with _Py_DebugOffsets, cookie "xdebugpy" */
    uint16_t rt_interpreters_head, rt_main_thread;
    uint32_t rt_main_interpreter; /* 3.11+: the main interpreter is embedded in _PyRuntime */
    /* PyInterpreterState */
    uint16_t is_next, is_threads_head, is_gc, is_modules, is_sysdict, is_builtins;
    /* 3.12+: static builtin types keep their dicts in the interpreter, in an array indexed by
     * tp_subclasses - 1 */
    uint32_t is_static_types;
    /* 3.13+: types.for_extensions.initialized, the stdlib extensions' static types (_datetime's),
     * whose slots are laid out as the builtin ones'; a type's index is into the builtin ones when
     * that slot names it, else into these (Objects/typeobject.c: managed_static_type_state_get) */
    uint32_t is_static_ext_types;
    /* 3.12+: cached_objects.interned_strings, the interned dict, whose references to mortal
     * interned strs are not counted (cpython/balance.h); NONE before (a static variable) */
    uint32_t is_interned;
    uint16_t static_type_size, static_type_dict, static_type_subclasses;
    /* sizeof(PyTypeObject): a static type's own memory (a heap type's is PyHeapTypeObject's, the
     * metatype's basicsize) */
    uint16_t type_object_size;
    /* What the interpreter holds in C for a program (cpython/heap.c names a root for each):
     * the codec registry, audit hooks, importlib, the interpreter's dict, builtins' copy,
     * builtins.__import__ (import_func), the list of single-phase modules by their def's index
     * (PyState_FindModule's); is_forkers: os.register_at_fork's three lists (before,
     * after_in_parent, after_in_child) */
    uint32_t is_codec_search_path, is_codec_search_cache, is_codec_error_registry, is_audit_hooks,
        is_importlib, is_interp_dict, is_builtins_copy, is_import_func, is_modules_by_index,
        is_forkers;
    /* 3.12+: sys.monitoring's callables, [tool][event], monitoring_callables of them */
    uint32_t is_monitoring_callables;
    uint16_t monitoring_callables;
    /* atexit's callbacks: 3.10-3.13 an array of ncallbacks pointers to {func, args, kwargs};
     * 3.14 a list (is_atexit_ncallbacks NONE) */
    uint32_t is_atexit_callbacks, is_atexit_ncallbacks;
    /* 3.12+: _PyRuntime.signals.handlers[NSIG], each {tripped, func} */
    uint32_t rt_signal_handlers;
    /* 3.12+: cached_objects' C types of typing (generic_type, typevar_type, ...), typing_types of
     * them, a reference each */
    uint32_t is_typing_types;
    uint8_t typing_types;
    /* warnings' filters, once registry and default action, one word each from is_warnings;
     * gc.callbacks; the errno-to-OSError-subclass dict and ExceptionGroup (3.11+) */
    uint32_t is_warnings, is_gc_callbacks, is_errnomap, is_exception_group;
    /* 3.10+: the ast module's state (struct ast_state) at is_ast, ast_state_size bytes, its
     * object references (types, singletons, names) from ast_first on */
    uint32_t is_ast;
    uint16_t ast_state_size, ast_first;
    /* 3.10+: the strs _Py_IDENTIFIER's made (struct _Py_unicode_ids {size, array}); each a
     * reference of the array's until 3.12 makes them immortal */
    uint32_t is_unicode_ids;
    /* 3.9-3.10: interp->small_ints, the ints -5..256, each a reference of the array's (3.11
     * made them static); 3.9: _Py_Identifier's object (a reference; the list is the symbol
     * static_strings, linked by next, the first word) */
    uint32_t is_small_ints;
    uint16_t id_object;
    /* 3.9-3.11: typeobject.c's slotdefs[] (sizeof slotdef each), whose name_strobj at
     * slotdef_name holds each slot's dunder name (3.12+: immortal, N) */
    uint16_t slotdef_size, slotdef_name;
    /* Argument Clinic's parsers (struct _PyArg_Parser), linked by next from the symbol
     * static_arg_parsers (3.9-3.11) or _PyRuntime.getargs.static_parsers (3.12+,
     * rt_arg_parsers): each keeps its keyword names in the tuple kwtuple, a reference
     * (Python/getargs.c: parser_init); the function is named by fname, or in format after ':'.
     * rt_arg_parsers_alt: where another patch release of the variant keeps it (N for none) */
    uint32_t rt_arg_parsers, rt_arg_parsers_alt;
    uint16_t argparser_format, argparser_fname, argparser_kwtuple, argparser_next;
    /* 3.10: the one-character caches, each its empty string then 256 single characters, a
     * reference each: interp->unicode {empty_string, latin1[256]} and interp->bytes
     * {empty_string, characters[256]} (3.9 keeps them in statics, 3.11 makes them static) */
    uint32_t is_unicode_cache, is_bytes_cache;
    /* 3.10+: the type attribute cache, 4096 entries of {version, name, value} (3.9: a static of
     * typeobject.c, cpython/heap.c) */
    uint32_t is_type_cache;
    /* PyThreadState */
    uint16_t ts_c_profileobj, ts_c_traceobj;
    uint16_t ts_next, ts_interp, ts_frame, ts_cframe, ts_current_frame, ts_thread_id,
        ts_native_thread_id, ts_dict, ts_curexc_type, ts_curexc_value, ts_curexc_traceback,
        ts_current_exception, ts_exc_info, ts_context;
    /* 3.9-3.12: on_delete_data, the weak reference to its lock that _thread._set_sentinel
     * gives a thread state to drop when it is deleted (threading's Thread._tstate_lock) */
    uint16_t ts_on_delete_data;
    /* _PyErr_StackItem (what exc_info points to) */
    uint16_t ei_exc_type, ei_exc_value, ei_exc_traceback;
    /* _PyCFrame */
    uint16_t cf_current_frame;
    /* _PyInterpreterFrame (3.11+) */
    uint16_t if_code, if_previous, if_funcobj, if_globals, if_locals, if_frame_obj, if_instr,
        if_stacktop, if_stackpointer, if_owner, if_localsplus;
    /* Owners of frames that run no Python code: FRAME_OWNED_BY_CSTACK (3.12+), and 3.14's
     * FRAME_OWNED_BY_INTERPRETER; 0xff where a version has no such value. */
    uint8_t owner_cstack, owner_interpreter;
    /* FRAME_OWNED_BY_GENERATOR and FRAME_OWNED_BY_FRAME_OBJECT (3.11+): who holds the references
     * in a frame's slots, so that a frame walked from a thread, a generator and a frame object
     * counts them once (cpython/balance.h) */
    uint8_t owner_generator, owner_frame_object;
    /* 3.14: frame slots, f_executable and f_funcobj are _PyStackRefs, whose low bits are tags:
     * all of them set is a tagged int (no object), and bits & ~mask is the object (NULL reads 1).
     * 0 where frames hold plain PyObject pointers. */
    uint8_t stackref_tag_mask;
    /* PyFrameObject */
    uint16_t f_back, f_frame, f_code, f_globals, f_locals, f_trace, f_localsplus, f_lasti,
        f_stacktop, f_lineno;
    /* 3.9/3.10: the value stack, and its depth while the frame is suspended (3.9: the pointer
     * f_stacktop, NULL while it runs; 3.10: f_stackdepth, -1 while it runs) */
    uint16_t f_valuestack, f_stackdepth;
    /* PyCodeObject */
    uint16_t co_nlocals, co_nlocalsplus, co_stacksize, co_firstlineno, co_consts, co_names,
        co_varnames, co_freevars, co_cellvars, co_localsplusnames, co_localspluskinds, co_filename,
        co_name, co_qualname, co_linetable, co_code_adaptive, co_code, co_exceptiontable, co_extra;
    /* _gc_runtime_state (relative to interp + is_gc); generation0 points at generations[0]'s head,
     * which tells apart variants whose lists sit elsewhere (3.13.0: +24, later 3.13: +20) */
    uint16_t gc_generations, gc_generation0, gc_permanent, gc_collecting, gc_garbage;
    uint16_t gc_generation_size; /* sizeof(struct gc_generation): the lists' stride */
    uint16_t gc_head_size; /* sizeof(PyGC_Head), in front of every GC object */
#define PY_GC_GENERATIONS 3 /* NUM_GENERATIONS, then the permanent generation's list */
    /* PyTypeObject / PyHeapTypeObject */
    uint16_t tp_name, tp_doc, tp_basicsize, tp_itemsize, tp_flags, tp_members, tp_base, tp_dict,
        tp_weaklistoffset, tp_dictoffset, tp_bases, tp_mro, tp_subclasses, ht_cached_keys,
        ht_qualname, ht_name, ht_slots, ht_module;
    /* containers */
    uint16_t tuple_items;
    uint16_t dk_size, dk_log2_size, dk_log2_index_bytes, dk_kind, dk_nentries, dk_indices;
    uint16_t dv_values; /* PyDictValues.values */
    uint16_t dv_valid; /* 3.13+: PyDictValues.valid: the inline values are in use */
    uint16_t dv_embedded; /* 3.13+: PyDictValues.embedded: in their object */
    /* 3.13: the collector visits an object's valid inline values from the object, not from
     * its materialized __dict__ (3.14 visits the dict, and the dict its values) */
    bool gc_visits_inline_values;
    /* functions, generators, exceptions */
    uint16_t fn_globals, fn_code, fn_defaults, fn_kwdefaults, fn_closure, fn_dict, fn_module,
        fn_qualname, fn_name, fn_annotations, fn_annotate, fn_typeparams;
    uint16_t fn_doc; /* read as a field since 3.14 made __doc__ no member */
    uint16_t gen_frame, gen_frame_state, gen_iframe, gen_name, gen_qualname;
    /* 3.11+: an async generator's finalizer (a coroutine's origin, a generator's nothing);
     * 3.9/3.10 keep it in the async generator's own struct only, where culeak does not read it */
    uint16_t gen_origin;
    int8_t gen_completed; /* frame states >= this have no live locals */
    uint16_t exc_traceback, exc_context, exc_cause;
    uint16_t lru_cache, lru_func, lru_dict, lru_kwd_mark, lru_elem_type, lru_info_type;
    uint16_t prop_name; /* 3.10+ */
    /* the same in every supported version, kept here so that every offset is data and checked */
    uint16_t ob_type, ob_size, list_items, dict_keys, dict_values, set_mask, set_table, cell_ref,
        method_func, method_self, cfunc_ml, cfunc_self, cfunc_class, prop_get, prop_set, prop_del,
        sm_callable, tb_next, tb_frame, weakref_callback, exc_args, partial_fn, partial_args,
        partial_kw, lru_elem_key, lru_elem_next, lru_elem_result, odict_first, odict_node_next,
        module_dict, module_name, module_def, module_state, moduledef_size, deque_leftblock,
        deque_leftindex, deque_block_data, deque_block_next;
    /* 3.15+: PyModuleObject.md_state_size, the state's size, which earlier versions read from
     * the module's def (module_def, moduledef_size) */
    uint16_t module_state_size;
    uint16_t set_entry_size; /* setentry: key, hash */
    uint16_t member_type, member_offset, member_flags, member_size; /* PyMemberDef (name @0) */
    /* str */
    uint16_t str_length, str_state, ascii_data, compact_data, unicode_legacy_data;
    uint16_t long_digits; /* int: digits follow ob_size (lv_tag from 3.12) */
    uint16_t float_value; /* float: its double (ob_fval) */
    uint16_t bytes_data; /* bytes: its first byte (ob_sval) */
    /* int: 3.12+ uses lv_tag, earlier a signed digit count */
    uint8_t long_tagged;
    /* Core C types without a builtin family of their own (DWARF-checked like the rest):
     * mappingproxy; _thread._local (3.9-3.12: key, dummies {weakref to dummy: dict},
     * wr_callback; 3.13: localdicts {dummy: dict}, thread_watchdogs); contextvars' Context,
     * ContextVar, Token and the HAMT (Python/hamt.c) that holds a Context's variables. */
    uint16_t proxy_mapping;
    uint16_t local_size, local_key, local_args, local_kw, local_dicts, local_wr_callback,
        local_watchdogs;
    uint16_t ctx_prev, ctx_vars, cv_default, tok_ctx, tok_var, tok_oldval;
    uint16_t hamt_root, hamt_count, hamt_bitmap_items, hamt_array_nodes, hamt_array_count,
        hamt_collision_items;
    /* Iterators and dict views: what each walks, and what it keeps of it (enumerate's and
     * zip's reused result tuples, cycle's saved items). seqiter_seq is it_seq of the list,
     * reversed-list, tuple and sequence iterators and reversed()'s seq: one offset, each struct
     * DWARF-checked. */
    uint16_t seqiter_seq, enum_sit, enum_result, enum_longindex, zip_ittuple, zip_result, map_iters,
        map_func, funcit_func, funcit_it, cycle_it, cycle_saved, dictiter_dict, dictiter_result,
        dictview_dict, setiter_set;
    /* funcit_*: filter's, and itertools' takewhile, dropwhile, starmap and filterfalse (each
     * {func, it}); the rest of itertools and callable_iterator: */
    uint16_t chain_source, chain_active, islice_it, compress_data, compress_selectors, acc_total,
        acc_it, acc_binop, acc_initial, calliter_callable, calliter_sentinel;
    /* itertools' tee (its shared data: the iterator, the next link and the first numread of
     * values[]), groupby and its groups, product; operator's callables; and _queue.SimpleQueue,
     * whose struct is in lib-dynload/_queue (read off its DWARF with gdb `ptype /o`, like the
     * extension modules below): 3.9-3.12 a list (sq_list), 3.13+ a RingBuf (sq_ring: put_idx,
     * get_idx, items, items_cap, num_items). Each *_size is the type's tp_basicsize, which
     * object.c checks before it walks one. mc_vcargs and mc_kwnames are 3.14's vectorcall
     * tuples; 3.13 has fields of those names too, but its vectorcall_args is a C array of
     * borrowed references and its vectorcall_kwnames is not always set (a word left from a
     * former object was read there), so neither is read on 3.13, and check-layout, which
     * cannot tell the two apart, checks neither: test_referents checks them against
     * gc.get_referents. */
    uint16_t tee_dataobj, tee_size, teedata_it, teedata_numread, teedata_nextlink, teedata_values,
        teedata_size, groupby_it, groupby_keyfunc, groupby_tgtkey, groupby_currkey,
        groupby_currvalue, groupby_size, grouper_parent, grouper_tgtkey, grouper_size,
        product_pools, product_result, product_size, mc_name, mc_args, mc_kwds, mc_kwnames,
        mc_vcargs, mc_size, attrgetter_attr, attrgetter_size, itemgetter_item, itemgetter_size,
        sq_list, sq_ring, sq_size;
    /* Extension modules (_asyncio, _elementtree, _sqlite3). Their structs are in the modules'
     * own DWARF, which check-layout (it reads the runtime's module only) does not reach: read
     * off each pyenv build's lib-dynload modules with gdb `ptype /o` (layouts.c says which), and
     * kept honest by tests/integration/test_referents.py against gc.get_referents. Each type's
     * *_size is its tp_basicsize: a type whose size differs is not walked (object.c). */
    /* _asyncio FutureObj; TaskObj begins with the same fields (FutureObj_HEAD). 3.9/3.10 keep
     * the cancellation as a _PyErr_StackItem (ei_* above), 3.11+ as one exception. */
    uint16_t fut_size, fut_loop, fut_callback0, fut_context0, fut_callbacks, fut_exception,
        fut_exception_tb, fut_result, fut_source_tb, fut_cancel_msg, fut_cancelled_exc,
        fut_cancelled_exc_state, fut_awaited_by;
    uint16_t task_size, task_fut_waiter, task_coro, task_name, task_context;
    /* TaskStepMethWrapper, TaskWakeupMethWrapper (3.9), _asyncio.FutureIter */
    uint16_t step_size, step_task, step_arg, wakeup_size, wakeup_task, futiter_size, futiter_future;
    /* _elementtree ElementObject and its ElementObjectExtra (text and tail carry a flag in bit 0:
     * PY_ET_JOIN_FLAG) */
    uint16_t et_size, et_tag, et_text, et_tail, et_extra, etx_attrib, etx_length, etx_children;
    /* _sqlite3: pysqlite_Connection; 3.9/3.10's own statement cache (pysqlite_Cache, whose
     * mapping dict holds pysqlite_Nodes) and pysqlite_Statement.sql; 3.11+ cache statements in
     * a functools lru_cache (PY_F_LRU_CACHE). */
    uint16_t sq_conn_size, sq_conn_statement_cache, sq_conn_cursors, sq_conn_blobs,
        sq_conn_statements, sq_conn_collations, sq_conn_isolation_level,
        sq_conn_text_factory; /* a member, but a getset in Debian's 3.13.18 and 3.14 */
    uint16_t sq_cache_size, sq_cache_mapping, sq_node_size, sq_node_key, sq_node_data, sq_stmt_size,
        sq_stmt_sql;
    /* Pre-header: bytes in front of a GC object for a managed dict (3.11+). */
    int8_t managed_dict_offset; /* -24 where managed dicts exist, else 0 */
    int8_t managed_values_offset; /* 3.11: -32 */
};

/* The first table for a minor version (a minor may have several variants, told apart on the
 * target by py_runtime_open), or NULL when culeak has none. */
const struct py_layout *py_layout_for(unsigned major, unsigned minor);
/* The table of that name ("3.13.5"), or NULL. */
const struct py_layout *py_layout_named(const char *name);
/* Every table, oldest first; *n is their number. */
const struct py_layout *const *py_layouts(size_t *n);
/* The table names, comma-separated, into buf (truncated to cap); returns buf. */
const char *py_layout_names(char *buf, size_t cap);

/* _elementtree: Element.text and .tail are stored with this bit set when the text is to be
 * joined from a list (JOIN_OBJ in Modules/_elementtree.c, the same in 3.9-3.13). */
#define PY_ET_JOIN_FLAG 1u

/* The interpreter's slots for static types (3.12+): _Py_MAX_MANAGED_STATIC_BUILTIN_TYPES and
 * _Py_MAX_MANAGED_STATIC_EXT_TYPES (3.12: _Py_MAX_STATIC_BUILTIN_TYPES). Each array is preceded by
 * its count of slots in use, a size_t (the extensions': 16 bytes before, then the next index). */
#define PY_STATIC_TYPES 200u
#define PY_STATIC_EXT_TYPES 10u

/* Flags (tp_flags). */
#define PY_TPFLAGS_STATIC_BUILTIN (1ul << 1)
#define PY_TPFLAGS_INLINE_VALUES (1ul << 2)
#define PY_TPFLAGS_MANAGED_DICT (1ul << 4)
#define PY_TPFLAGS_HEAPTYPE (1ul << 9)
#define PY_TPFLAGS_HAVE_GC (1ul << 14)
#define PY_TPFLAGS_LONG_SUBCLASS (1ul << 24)
#define PY_TPFLAGS_LIST_SUBCLASS (1ul << 25)
#define PY_TPFLAGS_TUPLE_SUBCLASS (1ul << 26)
#define PY_TPFLAGS_BYTES_SUBCLASS (1ul << 27)
#define PY_TPFLAGS_UNICODE_SUBCLASS (1ul << 28)
#define PY_TPFLAGS_DICT_SUBCLASS (1ul << 29)
#define PY_TPFLAGS_BASE_EXC_SUBCLASS (1ul << 30)
#define PY_TPFLAGS_TYPE_SUBCLASS (1ul << 31)

#endif
