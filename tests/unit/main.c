/* The unit-test runner: each *_test.c file under tests/unit registers one suite here. Exits 1
 * test or assertion failed. */
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "suites.h"

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "unit_tests: %s\n", CU_get_error_msg());
        return 1;
    }
    register_target_corenotes_tests();
    register_target_mappings_tests();
    register_target_freeze_tests();
    register_target_libdata_tests();
    register_target_pagecache_tests();
    register_target_target_tests();
    register_target_core_tests();
    register_target_live_tests();
    register_target_dump_tests();
    register_target_procstat_tests();
    register_target_spool_tests();
    register_symbols_record_tests();
    register_symbols_tests();
    register_symbols_names_tests();
    register_runtime_python_tests();
    register_runtime_torch_tests();
    register_report_json_tests();
    register_report_pickle_tests();
    register_report_text_tests();
    register_report_blocks_tests();
    register_report_pools_tests();
    register_torch_cxx_tests();
    register_util_error_tests();
    register_util_addrmap_tests();
    register_util_nodemap_tests();
    register_util_notes_tests();
    register_util_ranges_tests();
    register_util_output_tests();
    register_util_text_tests();
    register_util_spill_tests();
    register_util_strings_tests();
    register_util_rankset_tests();
    register_util_progress_tests();
    register_util_jsonread_tests();
    register_cpython_linetable_tests();
    register_cpython_runtime_scan_tests();
    register_cpython_gclist_tests();
    register_cpython_runtime_variant_tests();
    register_cpython_debug_offsets_tests();
    register_cpython_heap_tests();
    register_cpython_balance_tests();
    register_cpython_fixed_types_tests();
    register_cpython_path_tests();
    register_cpython_referents_tests();
    register_cpython_frames_tests();
    register_cpython_object_tests();
    register_cpython_strkeys_tests();
    register_cudacache_walk_tests();
    register_cudacache_trace_tests();
    register_torch_layouts_tests();
    register_torch_tensors_tests();
    register_graph_dominators_tests();
    register_graph_reach_tests();
    register_holders_tests();
    register_holders_drill_tests();
    register_engine_values_tests();
    register_engine_snapshot_tests();
    register_engine_ranks_tests();
    register_engine_table_tests();

    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_ErrorCode rc = CU_basic_run_tests();
    unsigned tests_failed = CU_get_number_of_tests_failed();
    unsigned failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    return rc != CUE_SUCCESS || tests_failed || failures ? 1 : 0;
}
