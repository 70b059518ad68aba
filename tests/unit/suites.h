/* One registration function per test file; main.c calls them all. */
#ifndef CULEAK_TESTS_UNIT_SUITES_H
#define CULEAK_TESTS_UNIT_SUITES_H

void register_target_corenotes_tests(void);
void register_target_mappings_tests(void);
void register_target_freeze_tests(void);
void register_target_pagecache_tests(void);
void register_target_target_tests(void);
void register_target_core_tests(void);
void register_target_live_tests(void);
void register_target_dump_tests(void);
void register_symbols_record_tests(void);
void register_symbols_tests(void);
void register_symbols_names_tests(void);
void register_runtime_python_tests(void);
void register_runtime_torch_tests(void);
void register_report_json_tests(void);
void register_report_pickle_tests(void);
void register_report_text_tests(void);
void register_util_error_tests(void);
void register_util_addrmap_tests(void);
void register_util_nodemap_tests(void);
void register_util_notes_tests(void);
void register_util_text_tests(void);
void register_util_spill_tests(void);
void register_util_strings_tests(void);
void register_util_rankset_tests(void);
void register_util_progress_tests(void);
void register_util_jsonread_tests(void);
void register_cpython_linetable_tests(void);
void register_cpython_runtime_scan_tests(void);
void register_cpython_gclist_tests(void);
void register_cpython_runtime_variant_tests(void);
void register_cpython_debug_offsets_tests(void);
void register_cpython_heap_tests(void);
void register_cpython_path_tests(void);
void register_cpython_referents_tests(void);
void register_cpython_frames_tests(void);
void register_cpython_object_tests(void);
void register_cpython_strkeys_tests(void);
void register_cudacache_walk_tests(void);
void register_graph_dominators_tests(void);
void register_graph_reach_tests(void);
void register_engine_values_tests(void);
void register_engine_ranks_tests(void);

#endif
