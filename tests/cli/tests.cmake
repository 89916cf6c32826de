# End-to-end tests of the dtsim command line (label `e2e`): one CTest per case of test_cli.py.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(DTSIM_CLI_CASES run_default flags_before_file out_npy_matches_summary in_round_trip threads_identical
    seed_changes_data help_texts usage_errors bad_npy_inputs finding_writes_nothing emit_tile_round_trip
    cuda_backend_unavailable_is_clean dt_examples_check dt_emit_tile_runs_alike debug_restart_and_quit
    dt_in_out_check emit_layouts int_range narrow_types machine_readings undefined_lanes equal_stores
    equal_stores_option py_package_helpers)
foreach(c ${DTSIM_CLI_CASES})
  add_test(NAME cli/${c}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_cli.py $<TARGET_FILE:dtsim>
                   ${CMAKE_SOURCE_DIR} ${c})
  set_tests_properties(cli/${c} PROPERTIES LABELS e2e TIMEOUT 300)
endforeach()
