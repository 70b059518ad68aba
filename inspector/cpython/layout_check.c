#include "cpython/layout_check.h"

#include <stddef.h>
#include <string.h>

#include "symbols/dwarf.h"

/* One table field and where DWARF has it: "type" and member path(s), alternatives separated by
 * '|' for fields renamed across versions. A NULL member means sizeof(type). */
struct field {
    size_t at;
    const char *type, *member;
    bool wide;                 /* a uint32_t field rather than uint16_t */
    size_t alt;                /* a (wide) table field with another patch release's place, which
                                  DWARF may give instead; 0: none */
};

#define F(field, type, member) {offsetof(struct py_layout, field), type, member, false, 0}
#define W(field, type, member) {offsetof(struct py_layout, field), type, member, true, 0}

static const struct field fields[] = {
    F(rt_interpreters_head, "_PyRuntimeState", "interpreters.head"),
    F(rt_main_thread, "_PyRuntimeState", "main_thread"),
    W(rt_main_interpreter, "_PyRuntimeState", "_main_interpreter"),
    F(is_next, "PyInterpreterState", "next"),
    F(is_threads_head, "PyInterpreterState", "tstate_head|threads.head"),
    F(is_gc, "PyInterpreterState", "gc"),
    F(is_modules, "PyInterpreterState", "modules|imports.modules"),
    F(is_sysdict, "PyInterpreterState", "sysdict"),
    F(is_builtins, "PyInterpreterState", "builtins"),
    W(is_static_types, "PyInterpreterState", "types.builtins.initialized|types.builtins"),
    W(is_static_ext_types, "PyInterpreterState", "types.for_extensions.initialized"),
    W(is_interned, "PyInterpreterState", "cached_objects.interned_strings"),
    W(is_codec_search_path, "PyInterpreterState", "codec_search_path|codecs.search_path"),
    W(is_codec_search_cache, "PyInterpreterState", "codec_search_cache|codecs.search_cache"),
    W(is_codec_error_registry, "PyInterpreterState", "codec_error_registry|codecs.error_registry"),
    W(is_audit_hooks, "PyInterpreterState", "audit_hooks"),
    W(is_importlib, "PyInterpreterState", "importlib|imports.importlib"),
    W(is_interp_dict, "PyInterpreterState", "dict"),
    W(is_builtins_copy, "PyInterpreterState", "builtins_copy"),
    W(is_import_func, "PyInterpreterState", "import_func|imports.import_func"),
    W(is_modules_by_index, "PyInterpreterState", "modules_by_index|imports.modules_by_index"),
    W(is_forkers, "PyInterpreterState", "before_forkers"),
    W(is_monitoring_callables, "PyInterpreterState", "monitoring_callables"),
    W(is_atexit_callbacks, "PyInterpreterState", "atexit.callbacks"),
    W(is_atexit_ncallbacks, "PyInterpreterState", "atexit.ncallbacks"),
    W(rt_signal_handlers, "_PyRuntimeState", "signals.handlers"),
    W(is_type_cache, "PyInterpreterState", "type_cache|types.type_cache"),
    W(is_typing_types, "PyInterpreterState", "cached_objects.generic_type"),
    W(is_warnings, "PyInterpreterState", "warnings.filters"),
    W(is_gc_callbacks, "PyInterpreterState", "gc.callbacks"),
    W(is_errnomap, "PyInterpreterState", "exc_state.errnomap"),
    W(is_exception_group, "PyInterpreterState", "exc_state.PyExc_ExceptionGroup"),
    W(is_ast, "PyInterpreterState", "ast"),
    W(is_unicode_ids, "PyInterpreterState", "unicode.ids"),
    W(is_small_ints, "PyInterpreterState", "small_ints"),
    F(id_object, "_Py_Identifier", "object"),
    F(type_object_size, "PyTypeObject", NULL),
    F(slotdef_size, "slotdef", NULL),
    F(slotdef_name, "slotdef", "name_strobj"),
    {offsetof(struct py_layout, rt_arg_parsers), "_PyRuntimeState", "getargs.static_parsers", true,
     offsetof(struct py_layout, rt_arg_parsers_alt)},
    F(argparser_format, "_PyArg_Parser", "format"),
    F(argparser_fname, "_PyArg_Parser", "fname"),
    F(argparser_kwtuple, "_PyArg_Parser", "kwtuple"),
    F(argparser_next, "_PyArg_Parser", "next"),
    W(is_unicode_cache, "PyInterpreterState", "unicode.empty_string"),
    W(is_bytes_cache, "PyInterpreterState", "bytes.empty_string"),
    F(ast_state_size, "ast_state", NULL),
    F(ast_first, "ast_state", "AST_type"),
    F(static_type_size, "static_builtin_state|managed_static_type_state", NULL),
    F(static_type_dict, "static_builtin_state|managed_static_type_state", "tp_dict"),
    F(static_type_subclasses, "static_builtin_state|managed_static_type_state", "tp_subclasses"),
    F(ts_next, "PyThreadState", "next"),
    F(ts_interp, "PyThreadState", "interp"),
    F(ts_frame, "PyThreadState", "frame"),
    F(ts_cframe, "PyThreadState", "cframe"),
    F(ts_current_frame, "PyThreadState", "current_frame"),
    F(ts_thread_id, "PyThreadState", "thread_id"),
    F(ts_native_thread_id, "PyThreadState", "native_thread_id"),
    F(ts_dict, "PyThreadState", "dict"),
    F(ts_c_profileobj, "PyThreadState", "c_profileobj"),
    F(ts_c_traceobj, "PyThreadState", "c_traceobj"),
    F(ts_curexc_type, "PyThreadState", "curexc_type"),
    F(ts_curexc_value, "PyThreadState", "curexc_value"),
    F(ts_curexc_traceback, "PyThreadState", "curexc_traceback"),
    F(ts_current_exception, "PyThreadState", "current_exception"),
    F(ts_exc_info, "PyThreadState", "exc_info"),
    F(ts_context, "PyThreadState", "context"),
    F(ts_on_delete_data, "PyThreadState", "on_delete_data"),
    F(ei_exc_type, "_PyErr_StackItem", "exc_type"),
    F(ei_exc_value, "_PyErr_StackItem", "exc_value"),
    F(ei_exc_traceback, "_PyErr_StackItem", "exc_traceback"),
    F(cf_current_frame, "_PyCFrame", "current_frame"),
    F(if_code, "_PyInterpreterFrame", "f_code|f_executable"),
    F(if_previous, "_PyInterpreterFrame", "previous"),
    F(if_funcobj, "_PyInterpreterFrame", "f_func|f_funcobj"),
    F(if_globals, "_PyInterpreterFrame", "f_globals"),
    F(if_locals, "_PyInterpreterFrame", "f_locals"),
    F(if_frame_obj, "_PyInterpreterFrame", "frame_obj"),
    F(if_stacktop, "_PyInterpreterFrame", "stacktop"),
    F(if_stackpointer, "_PyInterpreterFrame", "stackpointer"),
    F(if_instr, "_PyInterpreterFrame", "prev_instr|instr_ptr"),
    F(if_owner, "_PyInterpreterFrame", "owner"),
    F(if_localsplus, "_PyInterpreterFrame", "localsplus"),
    F(f_back, "PyFrameObject", "f_back"),
    F(f_frame, "PyFrameObject", "f_frame"),
    F(f_code, "PyFrameObject", "f_code"),
    F(f_globals, "PyFrameObject", "f_globals"),
    F(f_locals, "PyFrameObject", "f_locals"),
    F(f_trace, "PyFrameObject", "f_trace"),
    F(f_localsplus, "PyFrameObject", "f_localsplus|_f_frame_data"),
    F(f_lasti, "PyFrameObject", "f_lasti"),
    F(f_stacktop, "PyFrameObject", "f_stacktop"),
    F(f_valuestack, "PyFrameObject", "f_valuestack"),
    F(f_stackdepth, "PyFrameObject", "f_stackdepth"),
    F(f_lineno, "PyFrameObject", "f_lineno"),
    F(co_nlocals, "PyCodeObject", "co_nlocals"),
    F(co_nlocalsplus, "PyCodeObject", "co_nlocalsplus"),
    F(co_stacksize, "PyCodeObject", "co_stacksize"),
    F(co_code, "PyCodeObject", "co_code|_co_code"),
    F(co_exceptiontable, "PyCodeObject", "co_exceptiontable"),
    F(co_extra, "PyCodeObject", "co_extra"),
    F(co_firstlineno, "PyCodeObject", "co_firstlineno"),
    F(co_consts, "PyCodeObject", "co_consts"),
    F(co_names, "PyCodeObject", "co_names"),
    F(co_varnames, "PyCodeObject", "co_varnames"),
    F(co_freevars, "PyCodeObject", "co_freevars"),
    F(co_cellvars, "PyCodeObject", "co_cellvars"),
    F(co_localsplusnames, "PyCodeObject", "co_localsplusnames"),
    F(co_localspluskinds, "PyCodeObject", "co_localspluskinds"),
    F(co_filename, "PyCodeObject", "co_filename"),
    F(co_name, "PyCodeObject", "co_name"),
    F(co_qualname, "PyCodeObject", "co_qualname"),
    F(co_linetable, "PyCodeObject", "co_lnotab|co_linetable"),
    F(co_code_adaptive, "PyCodeObject", "co_code_adaptive"),
    F(gc_generations, "_gc_runtime_state", "generations"),
    F(gc_generation0, "_gc_runtime_state", "generation0"),
    F(gc_generation_size, "gc_generation", NULL),
    F(gc_head_size, "PyGC_Head", NULL),
    F(gc_permanent, "_gc_runtime_state", "permanent_generation"),
    F(gc_collecting, "_gc_runtime_state", "collecting"),
    F(gc_garbage, "_gc_runtime_state", "garbage"),
    F(tp_name, "PyTypeObject", "tp_name"),
    F(tp_basicsize, "PyTypeObject", "tp_basicsize"),
    F(tp_itemsize, "PyTypeObject", "tp_itemsize"),
    F(tp_flags, "PyTypeObject", "tp_flags"),
    F(tp_members, "PyTypeObject", "tp_members"),
    F(tp_base, "PyTypeObject", "tp_base"),
    F(tp_dict, "PyTypeObject", "tp_dict"),
    F(tp_weaklistoffset, "PyTypeObject", "tp_weaklistoffset"),
    F(tp_doc, "PyTypeObject", "tp_doc"),
    F(ht_name, "PyHeapTypeObject", "ht_name"),
    F(ht_slots, "PyHeapTypeObject", "ht_slots"),
    F(ht_module, "PyHeapTypeObject", "ht_module"),
    F(tp_dictoffset, "PyTypeObject", "tp_dictoffset"),
    F(tp_bases, "PyTypeObject", "tp_bases"),
    F(tp_mro, "PyTypeObject", "tp_mro"),
    F(tp_subclasses, "PyTypeObject", "tp_subclasses"),
    F(ht_cached_keys, "PyHeapTypeObject", "ht_cached_keys"),
    F(ht_qualname, "PyHeapTypeObject", "ht_qualname"),
    F(tuple_items, "PyTupleObject", "ob_item"),
    F(dk_size, "PyDictKeysObject", "dk_size"),
    F(dk_log2_size, "PyDictKeysObject", "dk_log2_size"),
    F(dk_log2_index_bytes, "PyDictKeysObject", "dk_log2_index_bytes"),
    F(dk_kind, "PyDictKeysObject", "dk_kind"),
    F(dk_nentries, "PyDictKeysObject", "dk_nentries"),
    F(dk_indices, "PyDictKeysObject", "dk_indices"),
    F(dv_values, "PyDictValues", "values"),
    F(dv_valid, "PyDictValues", "valid"),
    F(dv_embedded, "PyDictValues", "embedded"),
    F(fn_globals, "PyFunctionObject", "func_globals"),
    F(fn_code, "PyFunctionObject", "func_code"),
    F(fn_defaults, "PyFunctionObject", "func_defaults"),
    F(fn_kwdefaults, "PyFunctionObject", "func_kwdefaults"),
    F(fn_closure, "PyFunctionObject", "func_closure"),
    F(fn_dict, "PyFunctionObject", "func_dict"),
    F(fn_module, "PyFunctionObject", "func_module"),
    F(fn_qualname, "PyFunctionObject", "func_qualname"),
    F(fn_name, "PyFunctionObject", "func_name"),
    F(fn_annotations, "PyFunctionObject", "func_annotations"),
    F(fn_annotate, "PyFunctionObject", "func_annotate"),
    F(fn_typeparams, "PyFunctionObject", "func_typeparams"),
    F(fn_doc, "PyFunctionObject", "func_doc"),
    F(gen_frame, "PyGenObject", "gi_frame"),
    F(gen_frame_state, "PyGenObject", "gi_frame_state"),
    F(gen_iframe, "PyGenObject", "gi_iframe"),
    F(gen_name, "PyGenObject", "gi_name"),
    F(gen_qualname, "PyGenObject", "gi_qualname"),
    F(gen_origin, "PyGenObject", "gi_origin_or_finalizer"),
    /* coroutines and async generators are walked as generators: the same head */
    F(gen_frame, "PyCoroObject", "cr_frame"),
    F(gen_frame_state, "PyCoroObject", "cr_frame_state"),
    F(gen_iframe, "PyCoroObject", "cr_iframe"),
    F(gen_name, "PyCoroObject", "cr_name"),
    F(gen_qualname, "PyCoroObject", "cr_qualname"),
    F(gen_origin, "PyCoroObject", "cr_origin_or_finalizer"),
    F(gen_frame, "PyAsyncGenObject", "ag_frame"),
    F(gen_frame_state, "PyAsyncGenObject", "ag_frame_state"),
    F(gen_iframe, "PyAsyncGenObject", "ag_iframe"),
    F(gen_name, "PyAsyncGenObject", "ag_name"),
    F(gen_qualname, "PyAsyncGenObject", "ag_qualname"),
    F(gen_origin, "PyAsyncGenObject", "ag_origin_or_finalizer"),
    F(exc_traceback, "PyBaseExceptionObject", "traceback"),
    F(exc_context, "PyBaseExceptionObject", "context"),
    F(exc_cause, "PyBaseExceptionObject", "cause"),
    F(lru_cache, "lru_cache_object", "cache"),
    F(lru_func, "lru_cache_object", "func"),
    F(lru_dict, "lru_cache_object", "dict"),
    F(lru_kwd_mark, "lru_cache_object", "kwd_mark"),
    F(lru_elem_type, "lru_cache_object", "lru_list_elem_type"),
    F(lru_info_type, "lru_cache_object", "cache_info_type"),
    F(prop_name, "propertyobject", "prop_name"),
    F(ob_type, "PyObject", "ob_type"),
    F(ob_size, "PyVarObject", "ob_size"),
    F(list_items, "PyListObject", "ob_item"),
    F(dict_keys, "PyDictObject", "ma_keys"),
    F(dict_values, "PyDictObject", "ma_values"),
    F(set_mask, "PySetObject", "mask"),
    F(set_table, "PySetObject", "table"),
    F(set_entry_size, "setentry", NULL),
    F(member_type, "PyMemberDef", "type"),
    F(member_offset, "PyMemberDef", "offset"),
    F(member_flags, "PyMemberDef", "flags"),
    F(member_size, "PyMemberDef", NULL),
    F(cell_ref, "PyCellObject", "ob_ref"),
    F(method_func, "PyMethodObject", "im_func"),
    F(method_self, "PyMethodObject", "im_self"),
    F(cfunc_ml, "PyCFunctionObject", "m_ml"),
    F(cfunc_self, "PyCFunctionObject", "m_self"),
    F(cfunc_class, "PyCMethodObject", "mm_class"),
    F(prop_get, "propertyobject", "prop_get"),
    F(prop_set, "propertyobject", "prop_set"),
    F(prop_del, "propertyobject", "prop_del"),
    F(sm_callable, "staticmethod", "sm_callable"),
    F(tb_next, "PyTracebackObject", "tb_next"),
    F(tb_frame, "PyTracebackObject", "tb_frame"),
    F(weakref_callback, "PyWeakReference|_PyWeakReference", "wr_callback"),
    F(exc_args, "PyBaseExceptionObject", "args"),
    F(partial_fn, "partialobject", "fn"),
    F(partial_args, "partialobject", "args"),
    F(partial_kw, "partialobject", "kw"),
    F(lru_elem_key, "lru_list_elem", "key"),
    F(lru_elem_next, "lru_list_elem", "next"),
    F(odict_first, "PyODictObject", "od_first"),
    F(odict_node_next, "_ODictNode|_odictnode", "next"),
    F(lru_elem_result, "lru_list_elem", "result"),
    F(module_dict, "PyModuleObject", "md_dict"),
    F(module_name, "PyModuleObject", "md_name"),
    F(module_def, "PyModuleObject", "md_def"),
    F(module_state, "PyModuleObject", "md_state"),
    F(moduledef_size, "PyModuleDef", "m_size"),
    F(module_state_size, "PyModuleObject", "md_state_size"),
    F(deque_leftblock, "dequeobject", "leftblock"),
    F(deque_leftindex, "dequeobject", "leftindex"),
    F(deque_block_data, "BLOCK", "data"),
    F(deque_block_next, "BLOCK", "rightlink"),
    F(proxy_mapping, "mappingproxyobject", "mapping"),
    F(local_size, "localobject", NULL),
    F(local_key, "localobject", "key"),
    F(local_args, "localobject", "args"),
    F(local_kw, "localobject", "kw"),
    F(local_dicts, "localobject", "dummies|localdicts"),
    F(local_wr_callback, "localobject", "wr_callback"),
    F(local_watchdogs, "localobject", "thread_watchdogs"),
    F(ctx_prev, "PyContext", "ctx_prev"),
    F(ctx_vars, "PyContext", "ctx_vars"),
    F(cv_default, "PyContextVar", "var_default"),
    F(tok_ctx, "PyContextToken", "tok_ctx"),
    F(tok_var, "PyContextToken", "tok_var"),
    F(tok_oldval, "PyContextToken", "tok_oldval"),
    F(hamt_root, "PyHamtObject", "h_root"),
    F(hamt_count, "PyHamtObject", "h_count"),
    F(hamt_bitmap_items, "PyHamtNode_Bitmap", "b_array"),
    F(hamt_array_nodes, "PyHamtNode_Array", "a_array"),
    F(hamt_array_count, "PyHamtNode_Array", "a_count"),
    F(hamt_collision_items, "PyHamtNode_Collision", "c_array"),
    F(seqiter_seq, "listiterobject|_PyListIterObject", "it_seq"),
    F(seqiter_seq, "listreviterobject|_PyListIterObject", "it_seq"),
    F(seqiter_seq, "tupleiterobject|_PyTupleIterObject", "it_seq"),
    F(seqiter_seq, "seqiterobject", "it_seq"),
    F(seqiter_seq, "reversedobject", "seq"),
    F(enum_sit, "enumobject", "en_sit"),
    F(enum_result, "enumobject", "en_result"),
    F(enum_longindex, "enumobject", "en_longindex"),
    F(zip_ittuple, "zipobject", "ittuple"),
    F(zip_result, "zipobject", "result"),
    F(map_iters, "mapobject", "iters"),
    F(map_func, "mapobject", "func"),
    F(funcit_func, "filterobject", "func"),
    F(funcit_it, "filterobject", "it"),
    F(funcit_func, "takewhileobject", "func"),
    F(funcit_it, "takewhileobject", "it"),
    F(funcit_func, "dropwhileobject", "func"),
    F(funcit_it, "dropwhileobject", "it"),
    F(funcit_func, "starmapobject", "func"),
    F(funcit_it, "starmapobject", "it"),
    F(funcit_func, "filterfalseobject", "func"),
    F(funcit_it, "filterfalseobject", "it"),
    F(chain_source, "chainobject", "source"),
    F(chain_active, "chainobject", "active"),
    F(islice_it, "isliceobject", "it"),
    F(compress_data, "compressobject", "data"),
    F(compress_selectors, "compressobject", "selectors"),
    F(acc_total, "accumulateobject", "total"),
    F(acc_it, "accumulateobject", "it"),
    F(acc_binop, "accumulateobject", "binop"),
    F(acc_initial, "accumulateobject", "initial"),
    F(calliter_callable, "calliterobject", "it_callable"),
    F(calliter_sentinel, "calliterobject", "it_sentinel"),
    F(cycle_it, "cycleobject", "it"),
    F(cycle_saved, "cycleobject", "saved"),
    F(dictiter_dict, "dictiterobject", "di_dict"),
    F(dictiter_result, "dictiterobject", "di_result"),
    F(dictview_dict, "_PyDictViewObject", "dv_dict"),
    F(setiter_set, "setiterobject", "si_set"),
    F(tee_dataobj, "teeobject", "dataobj"),
    F(tee_size, "teeobject", NULL),
    F(teedata_it, "teedataobject", "it"),
    F(teedata_numread, "teedataobject", "numread"),
    F(teedata_nextlink, "teedataobject", "nextlink"),
    F(teedata_values, "teedataobject", "values"),
    F(teedata_size, "teedataobject", NULL),
    F(groupby_it, "groupbyobject", "it"),
    F(groupby_keyfunc, "groupbyobject", "keyfunc"),
    F(groupby_tgtkey, "groupbyobject", "tgtkey"),
    F(groupby_currkey, "groupbyobject", "currkey"),
    F(groupby_currvalue, "groupbyobject", "currvalue"),
    F(groupby_size, "groupbyobject", NULL),
    F(grouper_parent, "_grouperobject", "parent"),
    F(grouper_tgtkey, "_grouperobject", "tgtkey"),
    F(grouper_size, "_grouperobject", NULL),
    F(product_pools, "productobject", "pools"),
    F(product_result, "productobject", "result"),
    F(product_size, "productobject", NULL),
    F(mc_name, "methodcallerobject", "name"),
    F(mc_args, "methodcallerobject", "args|xargs"),
    F(mc_kwds, "methodcallerobject", "kwds"),
    F(mc_size, "methodcallerobject", NULL),
    F(attrgetter_attr, "attrgetterobject", "attr"),
    F(attrgetter_size, "attrgetterobject", NULL),
    F(itemgetter_item, "itemgetterobject", "item"),
    F(itemgetter_size, "itemgetterobject", NULL),
    /* The _asyncio, _elementtree and _sqlite3 fields are not here: their structs are in the
     * extension modules' DWARF, not the runtime's (see layout.h). */
    F(str_length, "PyASCIIObject", "length"),
    F(str_state, "PyASCIIObject", "state"),
    F(long_digits, "PyLongObject", "ob_digit|long_value.ob_digit"),
    F(float_value, "PyFloatObject", "ob_fval"),
    F(bytes_data, "PyBytesObject", "ob_sval"),
    F(ascii_data, "PyASCIIObject", NULL),
    F(compact_data, "PyCompactUnicodeObject", NULL),
    F(unicode_legacy_data, "PyUnicodeObject", "data"),
};

/* One alternative: skipped where a dump's culeak never asked it, else looked up. */
static bool try_alternative(const struct cl_module *m, const char *type, const char *member,
                            uint64_t *v, bool *asked)
{
    if (cl_dwarf_unasked(m, type, member))
        return false;
    *asked = true;
    return member ? cl_dwarf_member_offset(m, type, member, v) : cl_dwarf_type_size(m, type, v);
}

/* Tries each '|'-separated alternative of the type and member names; *asked is false where a
 * dump's (older) culeak looked up none of them. */
static bool dwarf_value(const struct cl_module *m, const struct field *f, uint64_t *v, bool *asked)
{
    char types[128], members[128];
    char *ts, *ms;
    *asked = false;
    snprintf(types, sizeof types, "%s", f->type);
    for (char *type = strtok_r(types, "|", &ts); type; type = strtok_r(NULL, "|", &ts)) {
        if (!f->member) {
            if (try_alternative(m, type, NULL, v, asked))
                return true;
            continue;
        }
        snprintf(members, sizeof members, "%s", f->member);
        for (char *alt = strtok_r(members, "|", &ms); alt; alt = strtok_r(NULL, "|", &ms))
            if (try_alternative(m, type, alt, v, asked))
                return true;
    }
    return false;
}

bool py_layout_check_dwarf(const struct py_layout *l, const struct cl_module *runtime, FILE *out,
                           bool verbose, struct py_layout_check *r)
{
    memset(r, 0, sizeof *r);
    if (!cl_module_has_dwarf(runtime))
        return false;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        const struct field *f = &fields[i];
        uint32_t want;
        uint16_t narrow;
        if (f->wide) {
            memcpy(&want, (const char *)l + f->at, sizeof want);
        } else {
            memcpy(&narrow, (const char *)l + f->at, sizeof narrow);
            want = narrow == PY_NONE ? PY_NONE : narrow;
        }
        uint64_t have;
        bool asked;
        bool found = dwarf_value(runtime, f, &have, &asked);
        uint32_t alt = PY_NONE;
        if (f->alt)
            memcpy(&alt, (const char *)l + f->alt, sizeof alt);
        if (found && want != PY_NONE && have != want && alt != PY_NONE && have == alt)
            want = alt; /* the variant's other patch release */
        const char *what = f->member ? f->member : "sizeof";
        if (!asked) {
            r->unasked++;
            if (verbose)
                fprintf(out, "unasked   %s.%s: not in this dump (an older culeak wrote it)\n",
                        f->type, what);
            continue;
        }
        if (!found && want == PY_NONE) {
            continue;   /* absent in this version, and the table agrees */
        } else if (!found) {
            r->missing++;
            fprintf(out, "missing   %s.%s: table says %u, DWARF has no such field\n", f->type, what,
                    want);
        } else if (want == PY_NONE || have != want) {
            r->mismatched++;
            fprintf(out, "MISMATCH  %s.%s: table %s%u, DWARF %llu\n", f->type, what,
                    want == PY_NONE ? "none " : "", want == PY_NONE ? 0 : want,
                    (unsigned long long)have);
        } else if (verbose) {
            fprintf(out, "ok        %s.%s = %llu\n", f->type, what, (unsigned long long)have);
        }
        r->checked++;
    }
    return true;
}
