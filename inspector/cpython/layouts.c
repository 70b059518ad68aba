/* Per-version CPython layouts (x86-64, default build). Transcribed from DWARF of the pyenv builds
 * 3.9.18, 3.10.13, 3.11.7, 3.12.1 and 3.13.0, of Debian's 3.13.5 (trixie), 3.13.18 and 3.14.10
 * (sid; their -dbg packages), and re-checked against DWARF by `py_layout_check_dwarf` in the
 * tests. A minor may have several variants (patch releases moved fields): py_runtime_open tells
 * them apart on the target by structure. Data only. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cpython/layout.h"
#include "util/text.h"

/* clang-format off */
#define N PY_NONE

/* Fields that are the same in every supported version. */
#define COMMON_TYPE                                                                               \
    .tp_name = 24, .tp_doc = 176, .tp_basicsize = 32, .tp_itemsize = 40, .tp_flags = 168, .tp_members = 240,     \
    .tp_base = 256, .tp_dict = 264, .tp_dictoffset = 288, .tp_weaklistoffset = 208, .tp_bases = 336, .tp_mro = 344,         \
    .tp_subclasses = 360,                                                                         \
    .gc_generation_size = 24, .gc_head_size = 16, .bytes_data = 32, .ts_next = 8,                 \
    .ts_interp = 16, .lru_cache = 72, .lru_func = 88,                                             \
    .ob_type = 8, .ob_size = 16, .list_items = 24, .dict_keys = 32,           \
    .dict_values = 40,                                                                            \
    .set_mask = 32, .set_table = 40, .cell_ref = 16, .method_func = 16, .method_self = 24,        \
    .cfunc_ml = 16, .cfunc_self = 24, .cfunc_class = 56, .prop_get = 16, .prop_set = 24, .prop_del = 32, .sm_callable = 16,          \
    .tb_next = 16, .tb_frame = 24, .weakref_callback = 24, .exc_args = 24, .partial_fn = 16,      \
    .partial_args = 24, .partial_kw = 32, .lru_elem_key = 40, .lru_elem_result = 48, .lru_elem_next = 24,              \
    .odict_first = 48, .odict_node_next = 16,                                                     \
    .module_dict = 16, .moduledef_size = 56, .deque_leftblock = 24, .deque_leftindex = 40, .deque_block_data = 8,      \
    .deque_block_next = 520, .str_length = 16, .str_state = 32, .long_digits = 24,             \
    .float_value = 16, .set_entry_size = 16, .member_type = 8, .member_offset = 16,             \
    .member_flags = 24, .member_size = 40

/* Up to 3.14: a module's def and state (3.15 keeps the state's size in the module, md_token in
 * place of md_def), and the first frame state of a finished generator (FRAME_COMPLETED; 3.15
 * numbers the states from 0 and has FRAME_CLEARED only). */
#define BEFORE_315                                                                                \
    .module_name = 48, .module_def = 24, .module_state = 32, .module_state_size = N,              \
    .gen_completed = 1

/* Up to 3.13: the GC state, tuples and frames before 3.14 moved them. */
#define BEFORE_314                                                                                \
    BEFORE_315,                                                                            \
    .gc_generation0 = 96, .gc_permanent = 104, .gc_collecting = 200, .gc_garbage = 208,            \
    .tuple_items = 24, .if_stackpointer = N, .owner_interpreter = 0xff, .stackref_tag_mask = 0

/* Core C types that are the same in every supported version. */
#define COMMON_CORE_TYPES                                                                         \
    .proxy_mapping = 16, .ctx_prev = 16, .ctx_vars = 24, .cv_default = 24, .tok_ctx = 16,         \
    .tok_var = 24, .tok_oldval = 32, .hamt_root = 16, .hamt_count = 32, .hamt_bitmap_items = 32,  \
    .hamt_array_nodes = 16, .hamt_array_count = 272, .hamt_collision_items = 32,                  \
    .seqiter_seq = 24, .enum_sit = 24, .enum_result = 32, .enum_longindex = 40,                   \
    .zip_ittuple = 24, .zip_result = 32, .map_iters = 16, .map_func = 24, .funcit_func = 16,      \
    .funcit_it = 24, .cycle_it = 16, .cycle_saved = 24, .dictiter_dict = 16,                     \
    .dictiter_result = 40, .dictview_dict = 16, .setiter_set = 16, .chain_source = 16,           \
    .chain_active = 24, .islice_it = 16, .compress_data = 16, .compress_selectors = 24,          \
    .acc_total = 16, .acc_it = 24, .acc_binop = 32, .acc_initial = 40, .calliter_callable = 16,  \
    .calliter_sentinel = 24, .tee_dataobj = 16, .teedata_it = 16, .teedata_numread = 24,         \
    .teedata_nextlink = 32, .teedata_values = 40, .teedata_size = 496, .groupby_it = 16,         \
    .groupby_keyfunc = 24, .groupby_tgtkey = 32, .groupby_currkey = 40, .groupby_currvalue = 48, \
    .grouper_parent = 16, .grouper_tgtkey = 24, .grouper_size = 32, .product_pools = 16,         \
    .product_result = 32, .product_size = 48, .mc_name = 16, .mc_args = 24, .mc_kwds = 32,       \
    .attrgetter_attr = 24, .itemgetter_item = 24

/* Extension-module structs that are the same in every supported version, read off the DWARF of
 * lib-dynload/_asyncio and _elementtree of the pyenv builds 3.9.18, 3.10.13, 3.11.7, 3.12.1 and
 * 3.13.0 with gdb `ptype /o` (check-layout does not reach extension modules; the referents
 * test does). */
#define COMMON_EXTENSIONS                                                                         \
    .fut_loop = 16, .fut_callback0 = 24, .fut_context0 = 32, .fut_callbacks = 40,                 \
    .fut_exception = 48, .step_size = 32, .step_task = 16, .step_arg = 24, .wakeup_task = 16,     \
    .futiter_size = 24, .futiter_future = 16, .et_size = 56, .et_tag = 16, .et_text = 24,         \
    .et_tail = 32, .et_extra = 40, .etx_attrib = 0, .etx_length = 8, .etx_children = 24

/* _thread._local up to 3.12: {key, args, kw, weakreflist, dummies, wr_callback}. */
#define LOCAL_39_312                                                                              \
    .local_size = 64, .local_key = 16, .local_args = 24, .local_kw = 32, .local_dicts = 48,       \
    .local_wr_callback = 56, .local_watchdogs = N

/* _sqlite3 in 3.9 and 3.10 (the same structs; lib-dynload/_sqlite3 of 3.9.18 and 3.10.13). */
#define SQLITE_39_310                                                                             \
    .sq_conn_size = 240, .sq_conn_text_factory = 120, .sq_conn_statement_cache = 80, .sq_conn_cursors = 96,                    \
    .sq_conn_blobs = N, .sq_conn_statements = 88, .sq_conn_collations = 152,                      \
    .sq_conn_isolation_level = 48, .sq_cache_size = 64, .sq_cache_mapping = 24,                   \
    .sq_node_size = 56, .sq_node_key = 16, .sq_node_data = 24, .sq_stmt_size = 56,                \
    .sq_stmt_sql = 32

/* _sqlite3 from 3.11: the statement cache is an lru_cache, statements keep no sql. */
#define SQLITE_311_LATER                                                                          \
    .sq_conn_statements = N, .sq_conn_collations = N, .sq_conn_isolation_level = N,               \
    .sq_cache_size = N, .sq_cache_mapping = N, .sq_node_size = N, .sq_node_key = N,               \
    .sq_node_data = N, .sq_stmt_size = 32, .sq_stmt_sql = N

static const struct py_layout py39 = {
    BEFORE_314, .gc_generations = 24, .rt_debug_offsets = false,
    .tee_size = 40, .groupby_size = 64, .mc_size = 40, .mc_kwnames = N, .mc_vcargs = N, .attrgetter_size = 32,
    .itemgetter_size = 40, .sq_list = 32, .sq_ring = N, .sq_size = 56,
    .ts_c_profileobj = 72, .ts_c_traceobj = 80, .is_codec_search_path = 912,
    .is_codec_search_cache = 920, .is_codec_error_registry = 928, .is_audit_hooks = 3536,
    .is_importlib = 888, .is_interp_dict = 1376, .is_builtins_copy = 1384, .is_import_func = 1392, .is_modules_by_index = 864, .is_forkers = 3456,
    .is_monitoring_callables = N, .monitoring_callables = 0, .is_atexit_callbacks = N,
    .is_atexit_ncallbacks = N, .rt_signal_handlers = N,
    .is_type_cache = N, .is_typing_types = N, .typing_types = 0, .is_warnings = 3504, .is_gc_callbacks = 832,
    .is_errnomap = N, .is_exception_group = N, .is_ast = N, .ast_state_size = N, .ast_first = N,
    .is_unicode_ids = N, .is_small_ints = 3552, .id_object = 16,
    .type_object_size = 408, .slotdef_size = 56, .slotdef_name = 48, .rt_arg_parsers = N, .rt_arg_parsers_alt = N, .argparser_format = 0, .argparser_fname = 16, .argparser_kwtuple = 48, .argparser_next = 56,
    .is_unicode_cache = N, .is_bytes_cache = N,
    .name = "3.9", .major = 3, .minor = 9, .frames = PY_FRAMES_OBJECTS, .dicts = PY_DICT_OFFSET,
    .keys = PY_KEYS_310, COMMON_TYPE, .lines = PY_LINES_LNOTAB,
    .rt_interpreters_head = 32, .rt_main_thread = 72, .rt_main_interpreter = N,
    .is_next = 0, .is_threads_head = 8, .is_gc = 616, .is_modules = 856, .is_sysdict = 872,
    .is_builtins = 880, .is_static_types = N, .is_static_ext_types = N, .is_interned = N, .static_type_size = N,
    .static_type_dict = N, .static_type_subclasses = N,
    .ts_frame = 24, .ts_cframe = N, .ts_current_frame = N, .ts_thread_id = 176,
    .ts_native_thread_id = N, .ts_dict = 152, .ts_curexc_type = 88, .ts_curexc_value = 96,
    .ts_curexc_traceback = 104, .ts_current_exception = N, .ts_exc_info = 144, .ts_context = 240, .ts_on_delete_data = 208,
    .ei_exc_type = 0, .ei_exc_value = 8, .ei_exc_traceback = 16,
    .cf_current_frame = N,
    .if_code = N, .if_previous = N, .if_funcobj = N, .if_globals = N, .if_locals = N,
    .if_instr = N, .if_frame_obj = N, .if_stacktop = N, .if_owner = N, .if_localsplus = N,
    .owner_cstack = 0xff, .owner_generator = 0xff, .owner_frame_object = 0xff,
    .f_back = 24, .f_frame = N, .f_code = 32, .f_globals = 48, .f_locals = 56, .f_trace = 80,
    .f_localsplus = 360, .f_lasti = 104, .f_stacktop = 72, .f_lineno = 108,
    .f_valuestack = 64, .f_stackdepth = N,
    .co_nlocals = 28, .co_nlocalsplus = N, .co_stacksize = 32, .co_firstlineno = 40, .co_consts = 56, .co_names = 64,
    .co_varnames = 72, .co_freevars = 80, .co_cellvars = 88, .co_localsplusnames = N,
    .co_localspluskinds = N, .co_filename = 104, .co_name = 112, .co_qualname = N,
    .co_linetable = 120, .co_code_adaptive = N, .co_code = 48, .co_exceptiontable = N, .co_extra = 144,
    .ht_cached_keys = 864, .ht_qualname = 856, .ht_name = 840, .ht_slots = 848,
    .ht_module = 872,
    .dk_size = 8, .dk_log2_size = N, .dk_log2_index_bytes = N, .dk_kind = N, .dk_nentries = 32,
    .dk_indices = 40, .dv_values = N, .dv_valid = N, .dv_embedded = N,
    .fn_globals = 24, .fn_code = 16, .fn_defaults = 32, .fn_kwdefaults = 40, .fn_closure = 48,
    .fn_dict = 72, .fn_module = 88, .fn_qualname = 104, .fn_name = 64,
    .fn_annotations = 96, .fn_annotate = N, .fn_typeparams = N, .fn_doc = 56,
    .gen_frame = 16, .gen_frame_state = N, .gen_iframe = N,
    .lru_dict = 120, .lru_kwd_mark = N, .lru_elem_type = N, .lru_info_type = 112, .prop_name = N,
    .gen_name = 48, .gen_qualname = 56, .gen_origin = N,
    .exc_traceback = 32, .exc_context = 40, .exc_cause = 48,
    .ascii_data = 48, .compact_data = 72, .unicode_legacy_data = 72, .long_tagged = 0,
    COMMON_CORE_TYPES, COMMON_EXTENSIONS, LOCAL_39_312, SQLITE_39_310,
    /* lib-dynload/_asyncio of 3.9.18 */
    .fut_size = 144, .fut_exception_tb = N, .fut_result = 56, .fut_source_tb = 64,
    .fut_cancel_msg = 72, .fut_cancelled_exc = N, .fut_cancelled_exc_state = 112, .fut_awaited_by = N,
    .task_size = 184, .task_fut_waiter = 144, .task_coro = 152, .task_name = 160,
    .task_context = 168, .wakeup_size = 24,
    .managed_dict_offset = 0, .managed_values_offset = 0,
};

static const struct py_layout py310 = {
    BEFORE_314, .gc_generations = 24, .rt_debug_offsets = false,
    .tee_size = 40, .groupby_size = 64, .mc_size = 40, .mc_kwnames = N, .mc_vcargs = N, .attrgetter_size = 32,
    .itemgetter_size = 40, .sq_list = 32, .sq_ring = N, .sq_size = 56,
    .ts_c_profileobj = 72, .ts_c_traceobj = 80, .is_codec_search_path = 912,
    .is_codec_search_cache = 920, .is_codec_error_registry = 928, .is_audit_hooks = 3504,
    .is_importlib = 888, .is_interp_dict = 1344, .is_builtins_copy = 1352, .is_import_func = 1360, .is_modules_by_index = 864, .is_forkers = 3424,
    .is_monitoring_callables = N, .monitoring_callables = 0, .is_atexit_callbacks = 3488,
    .is_atexit_ncallbacks = 3496, .rt_signal_handlers = N,
    .is_type_cache = 15216, .is_typing_types = N, .typing_types = 0, .is_warnings = 3456, .is_gc_callbacks = 832,
    .is_errnomap = 13312, .is_exception_group = N, .is_ast = 13336, .ast_state_size = 1880,
    .ast_first = 8, .is_unicode_ids = 9760, .is_small_ints = 3512, .id_object = N,
    .type_object_size = 408, .slotdef_size = 56, .slotdef_name = 48, .rt_arg_parsers = N, .rt_arg_parsers_alt = N, .argparser_format = 0, .argparser_fname = 16, .argparser_kwtuple = 48, .argparser_next = 56,
    .is_unicode_cache = 7664, .is_bytes_cache = 5608,
    .name = "3.10", .major = 3, .minor = 10, .frames = PY_FRAMES_OBJECTS, .dicts = PY_DICT_OFFSET,
    .keys = PY_KEYS_310, COMMON_TYPE, .lines = PY_LINES_LINETABLE,
    .rt_interpreters_head = 32, .rt_main_thread = 72, .rt_main_interpreter = N,
    .is_next = 0, .is_threads_head = 8, .is_gc = 616, .is_modules = 856, .is_sysdict = 872,
    .is_builtins = 880, .is_static_types = N, .is_static_ext_types = N, .is_interned = N, .static_type_size = N,
    .static_type_dict = N, .static_type_subclasses = N,
    .ts_frame = 24, .ts_cframe = 48, .ts_current_frame = N, .ts_thread_id = 176,
    .ts_native_thread_id = N, .ts_dict = 152, .ts_curexc_type = 88, .ts_curexc_value = 96,
    .ts_curexc_traceback = 104, .ts_current_exception = N, .ts_exc_info = 144, .ts_context = 240, .ts_on_delete_data = 208,
    .ei_exc_type = 0, .ei_exc_value = 8, .ei_exc_traceback = 16,
    .cf_current_frame = N,
    .if_code = N, .if_previous = N, .if_funcobj = N, .if_globals = N, .if_locals = N,
    .if_instr = N, .if_frame_obj = N, .if_stacktop = N, .if_owner = N, .if_localsplus = N,
    .owner_cstack = 0xff, .owner_generator = 0xff, .owner_frame_object = 0xff,
    .f_back = 24, .f_frame = N, .f_code = 32, .f_globals = 48, .f_locals = 56, .f_trace = 72,
    .f_localsplus = 352, .f_lasti = 96, .f_stacktop = N, .f_lineno = 100,
    .f_valuestack = 64, .f_stackdepth = 80,
    .co_nlocals = 28, .co_nlocalsplus = N, .co_stacksize = 32, .co_firstlineno = 40, .co_consts = 56, .co_names = 64,
    .co_varnames = 72, .co_freevars = 80, .co_cellvars = 88, .co_localsplusnames = N,
    .co_localspluskinds = N, .co_filename = 104, .co_name = 112, .co_qualname = N,
    .co_linetable = 120, .co_code_adaptive = N, .co_code = 48, .co_exceptiontable = N, .co_extra = 144,
    .ht_cached_keys = 872, .ht_qualname = 864, .ht_name = 848, .ht_slots = 856,
    .ht_module = 880,
    .dk_size = 8, .dk_log2_size = N, .dk_log2_index_bytes = N, .dk_kind = N, .dk_nentries = 32,
    .dk_indices = 40, .dv_values = N, .dv_valid = N, .dv_embedded = N,
    .fn_globals = 16, .fn_code = 48, .fn_defaults = 56, .fn_kwdefaults = 64, .fn_closure = 72,
    .fn_dict = 88, .fn_module = 104, .fn_qualname = 40, .fn_name = 32,
    .fn_annotations = 112, .fn_annotate = N, .fn_typeparams = N, .fn_doc = 80,
    .gen_frame = 16, .gen_frame_state = N, .gen_iframe = N,
    .lru_dict = 136, .lru_kwd_mark = 112, .lru_elem_type = 120, .lru_info_type = 128,
    .prop_name = 48, .gen_name = 40, .gen_qualname = 48, .gen_origin = N,
    .exc_traceback = 32, .exc_context = 40, .exc_cause = 48,
    .ascii_data = 48, .compact_data = 72, .unicode_legacy_data = 72, .long_tagged = 0,
    COMMON_CORE_TYPES, COMMON_EXTENSIONS, LOCAL_39_312, SQLITE_39_310,
    /* lib-dynload/_asyncio of 3.10.13 */
    .fut_size = 152, .fut_exception_tb = 56, .fut_result = 64, .fut_source_tb = 72,
    .fut_cancel_msg = 80, .fut_cancelled_exc = N, .fut_cancelled_exc_state = 120, .fut_awaited_by = N,
    .task_size = 192, .task_fut_waiter = 152, .task_coro = 160, .task_name = 168,
    .task_context = 176, .wakeup_size = N,
    .managed_dict_offset = 0, .managed_values_offset = 0,
};

static const struct py_layout py311 = {
    BEFORE_314, .gc_generations = 24, .rt_debug_offsets = false,
    .tee_size = 40, .groupby_size = 64, .mc_size = 40, .mc_kwnames = N, .mc_vcargs = N, .attrgetter_size = 40,
    .itemgetter_size = 48, .sq_list = 32, .sq_ring = N, .sq_size = 56,
    .ts_c_profileobj = 80, .ts_c_traceobj = 88, .is_codec_search_path = 936,
    .is_codec_search_cache = 944, .is_codec_error_registry = 952, .is_audit_hooks = 3552,
    .is_importlib = 920, .is_interp_dict = 1400, .is_builtins_copy = 1408, .is_import_func = 1416, .is_modules_by_index = 896, .is_forkers = 3480,
    .is_monitoring_callables = N, .monitoring_callables = 0, .is_atexit_callbacks = 3536,
    .is_atexit_ncallbacks = 3544, .rt_signal_handlers = N,
    .is_type_cache = 9056, .is_typing_types = N, .typing_types = 0, .is_warnings = 3504, .is_gc_callbacks = 864,
    .is_errnomap = 7128, .is_exception_group = 7152, .is_ast = 7160, .ast_state_size = 1896,
    .ast_first = 16, .is_unicode_ids = 3592, .is_small_ints = N, .id_object = N,
    .type_object_size = 408, .slotdef_size = 56, .slotdef_name = 48, .rt_arg_parsers = N, .rt_arg_parsers_alt = N, .argparser_format = 0, .argparser_fname = 16, .argparser_kwtuple = 48, .argparser_next = 56,
    .is_unicode_cache = N, .is_bytes_cache = N,
    .name = "3.11", .major = 3, .minor = 11, .frames = PY_FRAMES_CFRAME,
    .dicts = PY_DICT_MANAGED_311,
    .keys = PY_KEYS_311, COMMON_TYPE, .lines = PY_LINES_LOCATIONS,
    .rt_interpreters_head = 40, .rt_main_thread = 80, .rt_main_interpreter = 58936,
    .is_next = 0, .is_threads_head = 16, .is_gc = 648, .is_modules = 888, .is_sysdict = 904,
    .is_builtins = 912, .is_static_types = N, .is_static_ext_types = N, .is_interned = N, .static_type_size = N,
    .static_type_dict = N, .static_type_subclasses = N,
    .ts_frame = N, .ts_cframe = 56, .ts_current_frame = N, .ts_thread_id = 152,
    .ts_native_thread_id = 160, .ts_dict = 128, .ts_curexc_type = 96, .ts_curexc_value = 104,
    .ts_curexc_traceback = 112, .ts_current_exception = N, .ts_exc_info = 120, .ts_context = 224, .ts_on_delete_data = 192,
    .ei_exc_type = N, .ei_exc_value = 0, .ei_exc_traceback = N,
    .cf_current_frame = 8,
    .if_code = 32, .if_previous = 48, .if_funcobj = 0, .if_globals = 8, .if_locals = 24,
    .if_instr = 56, .if_frame_obj = 40, .if_stacktop = 64, .if_owner = 69, .if_localsplus = 72,
    .owner_cstack = 0xff, .owner_generator = 1, .owner_frame_object = 2,
    .f_back = 16, .f_frame = 24, .f_code = N, .f_globals = N, .f_locals = N, .f_trace = 32,
    .f_localsplus = 48, .f_lasti = N, .f_stacktop = N, .f_lineno = 40,
    .f_valuestack = N, .f_stackdepth = N,
    .co_nlocals = 80, .co_nlocalsplus = 76, .co_stacksize = 68, .co_firstlineno = 72, .co_consts = 24, .co_names = 32,
    .co_varnames = N, .co_freevars = N, .co_cellvars = N, .co_localsplusnames = 96,
    .co_localspluskinds = 104, .co_filename = 112, .co_name = 120, .co_qualname = 128,
    .co_linetable = 136, .co_code_adaptive = 184, .co_code = 152, .co_exceptiontable = 40, .co_extra = 176,
    .ht_cached_keys = 872, .ht_qualname = 864, .ht_name = 848, .ht_slots = 856,
    .ht_module = 880,
    .dk_size = N, .dk_log2_size = 8, .dk_log2_index_bytes = 9, .dk_kind = 10, .dk_nentries = 24,
    .dk_indices = 32, .dv_values = 0, .dv_valid = N, .dv_embedded = N,
    .fn_globals = 16, .fn_code = 48, .fn_defaults = 56, .fn_kwdefaults = 64, .fn_closure = 72,
    .fn_dict = 88, .fn_module = 104, .fn_qualname = 40, .fn_name = 32,
    .fn_annotations = 112, .fn_annotate = N, .fn_typeparams = N, .fn_doc = 80,
    .gen_frame = N, .gen_frame_state = 75, .gen_iframe = 80,
    .lru_dict = 136, .lru_kwd_mark = 112, .lru_elem_type = 120, .lru_info_type = 128,
    .prop_name = 48, .gen_name = 32, .gen_qualname = 40, .gen_origin = 64,
    .exc_traceback = 40, .exc_context = 48, .exc_cause = 56,
    .ascii_data = 48, .compact_data = 72, .unicode_legacy_data = 72, .long_tagged = 0,
    COMMON_CORE_TYPES, COMMON_EXTENSIONS, LOCAL_39_312, SQLITE_311_LATER,
    /* lib-dynload/_asyncio and _sqlite3 of 3.11.7 */
    .fut_size = 128, .fut_exception_tb = 56, .fut_result = 64, .fut_source_tb = 72,
    .fut_cancel_msg = 80, .fut_cancelled_exc = 120, .fut_cancelled_exc_state = N, .fut_awaited_by = N,
    .task_size = 176, .task_fut_waiter = 128, .task_coro = 136, .task_name = 144,
    .task_context = 152, .wakeup_size = N,
    .sq_conn_size = 216, .sq_conn_text_factory = 104, .sq_conn_statement_cache = 64, .sq_conn_cursors = 72,
    .sq_conn_blobs = 80,
    .managed_dict_offset = -24, .managed_values_offset = -32,
};

static const struct py_layout py312 = {
    BEFORE_314, .gc_generations = 24, .rt_debug_offsets = false,
    .tee_size = 48, .groupby_size = 72, .mc_size = 40, .mc_kwnames = N, .mc_vcargs = N, .attrgetter_size = 40,
    .itemgetter_size = 48, .sq_list = 32, .sq_ring = N, .sq_size = 56,
    .ts_c_profileobj = 80, .ts_c_traceobj = 88, .is_codec_search_path = 1248,
    .is_codec_search_cache = 1256, .is_codec_error_registry = 1264, .is_audit_hooks = 267208,
    .is_importlib = 960, .is_interp_dict = 1720, .is_builtins_copy = 1736, .is_import_func = 984, .is_modules_by_index = 952, .is_forkers = 3872,
    .is_monitoring_callables = 381784, .monitoring_callables = 136, .is_atexit_callbacks = 3944,
    .is_atexit_ncallbacks = 3952, .rt_signal_handlers = 464,
    .is_type_cache = 275392, .is_typing_types = 383048, .typing_types = 6, .is_warnings = 3896, .is_gc_callbacks = 328,
    .is_errnomap = 273400, .is_exception_group = 273424, .is_ast = 273432,
    .ast_state_size = 1952, .ast_first = 16, .is_unicode_ids = 267392, .is_small_ints = N, .id_object = N,
    .type_object_size = 416, .slotdef_size = N, .slotdef_name = N, .rt_arg_parsers = 2584, .rt_arg_parsers_alt = N, .argparser_format = 8, .argparser_fname = 24, .argparser_kwtuple = 56, .argparser_next = 64,
    .is_unicode_cache = N, .is_bytes_cache = N,
    .name = "3.12", .major = 3, .minor = 12, .frames = PY_FRAMES_CFRAME,
    .dicts = PY_DICT_MANAGED_312,
    .keys = PY_KEYS_311, COMMON_TYPE, .lines = PY_LINES_LOCATIONS,
    .rt_interpreters_head = 40, .rt_main_thread = 64, .rt_main_interpreter = 76392,
    .is_next = 0, .is_threads_head = 72, .is_gc = 112, .is_modules = 944, .is_sysdict = 352,
    .is_builtins = 360, .is_static_types = 373704, .is_static_ext_types = N, .is_interned = 382936, .static_type_size = 40,
    .static_type_dict = 16, .static_type_subclasses = 24,
    .ts_frame = N, .ts_cframe = 56, .ts_current_frame = N, .ts_thread_id = 136,
    .ts_native_thread_id = 144, .ts_dict = 112, .ts_curexc_type = N, .ts_curexc_value = N,
    .ts_curexc_traceback = N, .ts_current_exception = 96, .ts_exc_info = 104, .ts_context = 208, .ts_on_delete_data = 176,
    .ei_exc_type = N, .ei_exc_value = 0, .ei_exc_traceback = N,
    .cf_current_frame = 0,
    .if_code = 0, .if_previous = 8, .if_funcobj = 16, .if_globals = 24, .if_locals = 40,
    .if_instr = 56, .if_frame_obj = 48, .if_stacktop = 64, .if_owner = 70, .if_localsplus = 72,
    .owner_cstack = 3, .owner_generator = 1, .owner_frame_object = 2,
    .f_back = 16, .f_frame = 24, .f_code = N, .f_globals = N, .f_locals = N, .f_trace = 32,
    .f_localsplus = 48, .f_lasti = N, .f_stacktop = N, .f_lineno = 40,
    .f_valuestack = N, .f_stackdepth = N,
    .co_nlocals = 80, .co_nlocalsplus = 72, .co_stacksize = 64, .co_firstlineno = 68, .co_consts = 24, .co_names = 32,
    .co_varnames = N, .co_freevars = N, .co_cellvars = N, .co_localsplusnames = 96,
    .co_localspluskinds = 104, .co_filename = 112, .co_name = 120, .co_qualname = 128,
    .co_linetable = 136, .co_code_adaptive = 192, .co_code = N, .co_exceptiontable = 40, .co_extra = 184,
    .ht_cached_keys = 880, .ht_qualname = 872, .ht_name = 856, .ht_slots = 864,
    .ht_module = 888,
    .dk_size = N, .dk_log2_size = 8, .dk_log2_index_bytes = 9, .dk_kind = 10, .dk_nentries = 24,
    .dk_indices = 32, .dv_values = 0, .dv_valid = N, .dv_embedded = N,
    .fn_globals = 16, .fn_code = 48, .fn_defaults = 56, .fn_kwdefaults = 64, .fn_closure = 72,
    .fn_dict = 88, .fn_module = 104, .fn_qualname = 40, .fn_name = 32,
    .fn_annotations = 112, .fn_annotate = N, .fn_typeparams = 120, .fn_doc = 80,
    .gen_frame = N, .gen_frame_state = 67, .gen_iframe = 72,
    .lru_dict = 136, .lru_kwd_mark = 112, .lru_elem_type = 120, .lru_info_type = 128,
    .prop_name = 48, .gen_name = 24, .gen_qualname = 32, .gen_origin = 56,
    .exc_traceback = 40, .exc_context = 48, .exc_cause = 56,
    .ascii_data = 40, .compact_data = 56, .unicode_legacy_data = 56, .long_tagged = 1,
    COMMON_CORE_TYPES, COMMON_EXTENSIONS, LOCAL_39_312, SQLITE_311_LATER,
    /* lib-dynload/_asyncio and _sqlite3 of 3.12.1 */
    .fut_size = 128, .fut_exception_tb = 56, .fut_result = 64, .fut_source_tb = 72,
    .fut_cancel_msg = 80, .fut_cancelled_exc = 120, .fut_cancelled_exc_state = N, .fut_awaited_by = N,
    .task_size = 176, .task_fut_waiter = 128, .task_coro = 136, .task_name = 144,
    .task_context = 152, .wakeup_size = N,
    .sq_conn_size = 224, .sq_conn_text_factory = 112, .sq_conn_statement_cache = 72, .sq_conn_cursors = 80,
    .sq_conn_blobs = 88,
    .managed_dict_offset = -24, .managed_values_offset = 0,
};

/* 3.13: what every patch release has in common. */
#define PY313_COMMON                                                                               \
    .rt_debug_offsets = true, .frames = PY_FRAMES_CURRENT, .dicts = PY_DICT_MANAGED_313,         \
    .gc_visits_inline_values = true,                                                               \
    .keys = PY_KEYS_311,                                                                           \
    COMMON_TYPE, .lines = PY_LINES_LOCATIONS, .rt_interpreters_head = 632,                         \
    .rt_main_thread = 656, .is_next = 7264, .is_threads_head = 7344, .is_gc = 7400,                \
    .is_modules = 7656, .is_sysdict = 7640, .is_builtins = 7648, .is_static_types = 182968, .is_static_ext_types = 192584,        \
    .is_interned = 194328,                                                                         \
    .tee_size = 48, .groupby_size = 72, .mc_size = 64, .mc_kwnames = N, .mc_vcargs = N, .attrgetter_size = 40,    \
    .itemgetter_size = 48, .sq_list = N, .sq_ring = 24, .sq_size = 72,                             \
    .ts_c_profileobj = 96, .ts_c_traceobj = 104, .is_codec_search_path = 7960,                     \
    .is_codec_search_cache = 7968, .is_codec_error_registry = 7976, .is_audit_hooks = 10808,       \
    .is_importlib = 7672, .is_interp_dict = 8448, .is_builtins_copy = 8464, .is_import_func = 7696, .is_modules_by_index = 7664, .is_forkers = 10632,                        \
    .is_monitoring_callables = 193176, .monitoring_callables = 136,                                \
    .is_atexit_callbacks = 10712, .is_atexit_ncallbacks = 10720, .rt_signal_handlers = 1080,       \
    .is_type_cache = 84656, .is_typing_types = 194440, .typing_types = 6, .is_warnings = 10656, .is_gc_callbacks = 7616,                         \
    .is_errnomap = 82640, .is_exception_group = 82664, .is_ast = 82696, .ast_state_size = 1952,  \
    .ast_first = 8, .is_unicode_ids = 14536, .is_small_ints = N, .id_object = N,                   \
    .type_object_size = 416, .slotdef_size = N, .slotdef_name = N, .argparser_format = 0, .argparser_fname = 16, .argparser_kwtuple = 56, .argparser_next = 64,                                                          \
    .is_unicode_cache = N, .is_bytes_cache = N,                                                    \
    .static_type_size = 48, .static_type_dict = 24, .static_type_subclasses = 32,                  \
    .ts_frame = N, .ts_cframe = N,                                                                 \
    .ts_current_frame = 72, .ts_thread_id = 152, .ts_native_thread_id = 160, .ts_dict = 128,       \
    .ts_curexc_type = N, .ts_curexc_value = N, .ts_curexc_traceback = N,                           \
    .ts_current_exception = 112, .ts_exc_info = 120, .ts_context = 208, .ts_on_delete_data = N, .ei_exc_type = N,          \
    .ei_exc_value = 0, .ei_exc_traceback = N, .cf_current_frame = N, .if_code = 0,                 \
    .if_previous = 8, .if_funcobj = 16, .if_globals = 24, .if_locals = 40, .if_instr = 56,         \
    .if_frame_obj = 48, .if_stacktop = 64, .if_owner = 70, .if_localsplus = 72,                    \
    .owner_cstack = 3, .owner_generator = 1, .owner_frame_object = 2, .f_back = 16, .f_frame = 24, .f_code = N, .f_globals = N, .f_locals = N,    \
    .f_trace = 32, .f_localsplus = 64, .f_lasti = N, .f_stacktop = N, .f_lineno = 40,              \
    .f_valuestack = N, .f_stackdepth = N,                                                          \
    .co_nlocals = 80, .co_nlocalsplus = 72, .co_stacksize = 64, .co_firstlineno = 68, .co_consts = 24,                 \
    .co_names = 32, .co_varnames = N, .co_freevars = N, .co_cellvars = N,                          \
    .co_localsplusnames = 96, .co_localspluskinds = 104, .co_filename = 112, .co_name = 120,       \
    .co_qualname = 128, .co_linetable = 136, .co_code_adaptive = 200, .co_code = N, .co_exceptiontable = 40, .co_extra = 192, .ht_cached_keys = 880,       \
    .ht_qualname = 872, .ht_name = 856, .ht_slots = 864, .ht_module = 888,                         \
    .dk_size = N, .dk_log2_size = 8, .dk_log2_index_bytes = 9,                                     \
    .dk_kind = 10, .dk_nentries = 24, .dk_indices = 32, .dv_values = 8, .dv_valid = 3, .dv_embedded = 2,             \
    .fn_globals = 16,                                                                              \
    .fn_code = 48, .fn_defaults = 56, .fn_kwdefaults = 64, .fn_closure = 72, .fn_dict = 88,        \
    .fn_module = 104, .fn_qualname = 40, .fn_name = 32, .fn_annotations = 112,                     \
    .fn_annotate = N, .fn_typeparams = 120, .fn_doc = 80, .gen_frame = N, .gen_frame_state = 67,                 \
    .gen_iframe = 72, .lru_dict = 136, .exc_traceback = 40, .exc_context = 48, .exc_cause = 56,    \
    .lru_kwd_mark = 112, .lru_elem_type = 120, .lru_info_type = 128, .prop_name = 48,              \
    .gen_name = 24, .gen_qualname = 32, .gen_origin = 56,                                          \
    .ascii_data = 40, .compact_data = 56, .unicode_legacy_data = 56, .long_tagged = 1,             \
    COMMON_CORE_TYPES, COMMON_EXTENSIONS, SQLITE_311_LATER,                                        \
    /* {args, kw, weakreflist, localdicts, thread_watchdogs} */                                    \
    .local_size = 56, .local_key = N, .local_args = 16, .local_kw = 24, .local_dicts = 40,         \
    .local_wr_callback = N, .local_watchdogs = 48,                                                 \
    /* lib-dynload/_asyncio and _sqlite3 of 3.13.0, 3.13.5, 3.13.18 (instance dicts managed) */   \
    .fut_size = 104, .fut_exception_tb = 56, .fut_result = 64, .fut_source_tb = 72,                \
    .fut_cancel_msg = 80, .fut_cancelled_exc = 88, .fut_cancelled_exc_state = N, .fut_awaited_by = N,                   \
    .task_size = 144, .task_fut_waiter = 112, .task_coro = 120, .task_name = 128,                  \
    .task_context = 136, .wakeup_size = N, .sq_conn_size = 224, .sq_conn_text_factory = 112, .sq_conn_statement_cache = 72,     \
    .sq_conn_cursors = 80, .sq_conn_blobs = 88, .managed_dict_offset = -24,                        \
    .managed_values_offset = 0

/* 3.13.0 (pyenv). */
static const struct py_layout py313 = {
    .name = "3.13.0", .major = 3, .minor = 13, PY313_COMMON, BEFORE_314,
    .gc_generations = 24, .rt_main_interpreter = 88352, .rt_arg_parsers = 9896,
    .rt_arg_parsers_alt = N,
};

/* Later 3.13 releases (read off Debian's 3.13.5 and 3.13.18): struct gc_generation is 4-byte
 * aligned, so the generation lists start at +20, and _PyRuntimeState grew in front of the
 * embedded main interpreter (3.13.5: +88400, 3.13.18: +88424; py_runtime_open takes it from the
 * target, this value is what the scan for a stripped runtime tries). The argument parsers'
 * list is 3.13.18's, 24 bytes past 3.13.5's, which is 3.13.0's (3.13.18's _ceval_runtime_state
 * grew); cpython/heap.c takes the one whose first parser fits. */
static const struct py_layout py313_5 = {
    .name = "3.13.5", .major = 3, .minor = 13, PY313_COMMON, BEFORE_314,
    .gc_generations = 20, .rt_main_interpreter = 88400, .rt_arg_parsers = 9920,
    .rt_arg_parsers_alt = 9896,
};

/* What 3.14 and 3.15 have in common: the stack-reference frames, the embedded main interpreter,
 * the C types' structs. */
#define PY314_COMMON                                                                           \
    .major = 3, .rt_debug_offsets = true, .tee_size = 48, .groupby_size = 72, .mc_size = 64,   \
    .mc_kwnames = 48, .mc_vcargs = 40, .attrgetter_size = 40, .itemgetter_size = 48,           \
    .sq_list = N, .sq_ring = 24, .sq_size = 72, .monitoring_callables = 152,                   \
    .is_atexit_ncallbacks = N, .typing_types = 7, .ast_first = 8, .is_small_ints = N,          \
    .id_object = N, .slotdef_size = N, .slotdef_name = N, .rt_arg_parsers_alt = N,             \
    .argparser_format = 0, .argparser_fname = 16, .argparser_kwtuple = 56,                     \
    .argparser_next = 64, .is_unicode_cache = N, .is_bytes_cache = N,                          \
    .frames = PY_FRAMES_CURRENT, .dicts = PY_DICT_MANAGED_313, .keys = PY_KEYS_311,            \
    COMMON_TYPE, .lines = PY_LINES_LOCATIONS, .static_type_size = 48, .static_type_dict = 24,  \
    .static_type_subclasses = 32, .ts_frame = N, .ts_cframe = N, .ts_current_frame = 72,       \
    .ts_curexc_type = N, .ts_curexc_value = N, .ts_curexc_traceback = N, .ei_exc_type = N,     \
    .ei_exc_value = 0, .ei_exc_traceback = N, .cf_current_frame = N, .if_code = 0,             \
    .if_previous = 8, .if_funcobj = 16, .if_globals = 24, .if_locals = 40, .if_instr = 56,     \
    .if_frame_obj = 48, .if_stacktop = N, .if_owner = 74, .if_localsplus = 80,                 \
    .owner_generator = 1, .owner_frame_object = 2, .f_back = 16, .f_frame = 24, .f_code = N,   \
    .f_globals = N, .f_locals = N, .f_trace = 32, .f_localsplus = 72, .f_lasti = N,            \
    .f_stacktop = N, .f_lineno = 40, .f_valuestack = N, .f_stackdepth = N, .co_nlocals = 80,   \
    .co_nlocalsplus = 72, .co_stacksize = 64, .co_firstlineno = 68, .co_consts = 24,           \
    .co_names = 32, .co_varnames = N, .co_freevars = N, .co_cellvars = N,                      \
    .co_localsplusnames = 96, .co_localspluskinds = 104, .co_filename = 112, .co_name = 120,   \
    .co_qualname = 128, .co_linetable = 136, .co_code_adaptive = 208, .co_code = N,            \
    .co_exceptiontable = 40, .co_extra = 200, .dk_size = N, .dk_log2_size = 8, .dk_log2_index_bytes = 9,        \
    .dk_kind = 10, .dk_nentries = 24, .dk_indices = 32, .dv_values = 8, .dv_valid = 3,         \
    .dv_embedded = 2, .fn_globals = 16, .fn_code = 48, .fn_defaults = 56, .fn_kwdefaults = 64, \
    .fn_closure = 72, .fn_dict = 88, .fn_module = 104, .fn_qualname = 40, .fn_name = 32,       \
    .fn_annotations = 112, .fn_annotate = 120, .fn_typeparams = 128, .fn_doc = 80,             \
    .gen_frame = N, .gen_frame_state = 67, .gen_iframe = 72, .lru_dict = 136,                  \
    .exc_traceback = 40, .exc_context = 48, .exc_cause = 56, .lru_kwd_mark = 112,              \
    .lru_elem_type = 120, .lru_info_type = 128, .prop_name = 48, .gen_name = 24,               \
    .gen_qualname = 32, .gen_origin = 56, .ascii_data = 40, .compact_data = 56,                \
    .unicode_legacy_data = 56, .long_tagged = 1, COMMON_CORE_TYPES, COMMON_EXTENSIONS,         \
    SQLITE_311_LATER,                                                                          \
    /* {args, kw, weakreflist, localdicts, thread_watchdogs} */                                \
    .local_size = 56, .local_key = N, .local_args = 16, .local_kw = 24, .local_dicts = 40,     \
    .local_wr_callback = N, .local_watchdogs = 48,                                             \
    /* lib-dynload/_asyncio of 3.14.10 and 3.15.2 (their _sqlite3 differs: each table has it) */    \
    .fut_size = 112, .fut_exception_tb = 56, .fut_result = 64, .fut_source_tb = 72,            \
    .fut_cancel_msg = 80, .fut_cancelled_exc = 88, .fut_cancelled_exc_state = N,               \
    .fut_awaited_by = 96, .task_size = 168, .task_fut_waiter = 120, .task_coro = 128,          \
    .task_name = 136, .task_context = 144, .wakeup_size = N, .sq_conn_statement_cache = 72,    \
    .managed_dict_offset = -24, .managed_values_offset = 0, .tuple_items = 32,                 \
    .if_stackpointer = 64, .owner_interpreter = 3, .stackref_tag_mask = 3

/* 3.14.10 (Debian sid, python3.14-dbg): tuples cache their hash (items at +32), frames hold
 * _PyStackRefs and a stack pointer, FRAME_OWNED_BY_INTERPRETER comes before CSTACK, and the GC
 * keeps three generation lists with generation0 at the end of its state. A 3.14 release whose
 * GC state is laid out otherwise fails the generation-0 check on open and is refused. */
static const struct py_layout py314 = {
    .name = "3.14", .minor = 14, BEFORE_315, .ts_c_profileobj = 96, .ts_c_traceobj = 104,
    .is_codec_search_path = 8000, .is_codec_search_cache = 8008, .is_codec_error_registry = 8016,
    .is_audit_hooks = 10912, .is_importlib = 7704, .is_interp_dict = 8496,
    .is_builtins_copy = 8512, .is_import_func = 7728, .is_modules_by_index = 7696,
    .is_forkers = 10696, .is_monitoring_callables = 223280, .is_atexit_callbacks = 10792,
    .rt_signal_handlers = 1256, .is_type_cache = 81928, .is_typing_types = 224728,
    .is_warnings = 10720, .is_gc_callbacks = 7616, .is_errnomap = 79888,
    .is_exception_group = 79912, .is_ast = 79944, .ast_state_size = 1976, .is_unicode_ids = 11792,
    .type_object_size = 416, .rt_arg_parsers = 10104, .rt_interpreters_head = 808,
    .rt_main_thread = 832, .is_next = 7272, .is_threads_head = 7344, .is_gc = 7408,
    .is_modules = 7688, .is_sysdict = 7672, .is_builtins = 7680, .is_static_types = 180240,
    .is_static_ext_types = 189856, .is_interned = 224624, .ts_thread_id = 152,
    .ts_native_thread_id = 160, .ts_dict = 128, .ts_current_exception = 112, .ts_exc_info = 120,
    .ts_context = 208, .ts_on_delete_data = N, .owner_cstack = 4, .ht_cached_keys = 880, .ht_qualname = 872,
    .ht_name = 856, .ht_slots = 864, .ht_module = 888, .sq_conn_size = 224,
    .sq_conn_text_factory = 112, .sq_conn_cursors = 80, .sq_conn_blobs = 88,
    .rt_main_interpreter = 90752, .gc_generations = 24, .gc_generation0 = 256, .gc_permanent = 96,
    .gc_collecting = 192, .gc_garbage = 200,
    PY314_COMMON,
};

/* 3.15.2 (Debian sid, python3.15-dbg): 3.14's frames and objects, with the interpreter's and the
 * threads' state moved, the GC's three generation lists back at +8 (generation0 at its end), a
 * module's state size in the module (md_token in place of md_def), frame states numbered from 0
 * with FRAME_CLEARED the first finished one, no FRAME_OWNED_BY_CSTACK, and PyTypeObject a word
 * longer. */
static const struct py_layout py315 = {
    .name = "3.15", .minor = 15, .module_name = 40, .module_def = N, .module_state = 24,
    .module_state_size = 56, .gen_completed = 5, .ts_c_profileobj = 120, .ts_c_traceobj = 128,
    .is_codec_search_path = 7952, .is_codec_search_cache = 7960, .is_codec_error_registry = 7968,
    .is_audit_hooks = 10888, .is_importlib = 7608, .is_interp_dict = 8448,
    .is_builtins_copy = 8464, .is_import_func = 7632, .is_modules_by_index = 7600,
    .is_forkers = 10672, .is_monitoring_callables = 223552, .is_atexit_callbacks = 10768,
    .rt_signal_handlers = 1384, .is_type_cache = 81952, .is_typing_types = 224912,
    .is_warnings = 10696, .is_gc_callbacks = 7536, .is_errnomap = 79896,
    .is_exception_group = 79920, .is_ast = 79952, .ast_state_size = 1992, .is_unicode_ids = 11800,
    .type_object_size = 424, .rt_arg_parsers = 10224, .rt_interpreters_head = 936,
    .rt_main_thread = 960, .is_next = 7264, .is_threads_head = 7336, .is_gc = 7400,
    .is_modules = 7592, .is_sysdict = 7576, .is_builtins = 7584, .is_static_types = 180264,
    .is_static_ext_types = 190024, .is_interned = 224896, .ts_thread_id = 176,
    .ts_native_thread_id = 184, .ts_dict = 152, .ts_current_exception = 136, .ts_exc_info = 144,
    .ts_context = 232, .ts_on_delete_data = N, .owner_cstack = 0xff, .ht_cached_keys = 888, .ht_qualname = 880,
    .ht_name = 864, .ht_slots = 872, .ht_module = 896, .sq_conn_size = 208,
    .sq_conn_text_factory = 96, .sq_conn_cursors = N, .sq_conn_blobs = 80,
    .rt_main_interpreter = 120328, .gc_generations = 8, .gc_generation0 = 168, .gc_permanent = 80,
    .gc_collecting = 112, .gc_garbage = 128,
    PY314_COMMON,
};

static const struct py_layout *const all[] = {&py39, &py310, &py311, &py312, &py313, &py313_5,
                                              &py314, &py315};
#define NLAYOUTS (sizeof all / sizeof *all)
/* clang-format on */

const struct py_layout *const *py_layouts(size_t *n)
{
    *n = NLAYOUTS;
    return all;
}

const struct py_layout *py_layout_for(unsigned major, unsigned minor)
{
    for (size_t i = 0; i < NLAYOUTS; i++)
        if (all[i]->major == major && all[i]->minor == minor)
            return all[i];
    return NULL;
}

const struct py_layout *py_layout_named(const char *name)
{
    for (size_t i = 0; i < NLAYOUTS; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

static const char *table_name(size_t i)
{
    return all[i]->name;
}

const char *py_layout_names(char *buf, size_t cap)
{
    return cl_join_names(buf, cap, NLAYOUTS, table_name);
}
