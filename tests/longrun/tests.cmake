# Long runs (label e2e): --max-steps and --timeout bound a runaway kernel, --out paths are checked
# before the run, and Ctrl-C through a pseudo-terminal stops a run (exit 130, no output file) or
# returns the debugger to its prompt; the progress line appears on a terminal.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(DTSIM_LONGRUN_CASES max_steps timeout out_checked_first ctrl_c_run ctrl_c_debugger ctrl_c_difftest viz_bench_limits
    ctrl_c_viz_bench)
foreach(c ${DTSIM_LONGRUN_CASES})
  add_test(NAME longrun/${c}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_longrun.py $<TARGET_FILE:dtsim>
                   ${CMAKE_SOURCE_DIR} ${c})
  set_tests_properties(longrun/${c} PROPERTIES LABELS e2e TIMEOUT 300 SKIP_RETURN_CODE 77)
endforeach()

# Stopping in every phase, and memory independent of the grid (test_stop.py; label e2e).
set(DTSIM_STOP_CASES huge_grid_memory signal_inside_loop stop_while_filling stop_while_reading stop_while_writing
    outputs_never_replace)
foreach(c ${DTSIM_STOP_CASES})
  add_test(NAME longrun/stop_${c}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_stop.py $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} ${c})
  set_tests_properties(longrun/stop_${c} PROPERTIES LABELS e2e TIMEOUT 300)
endforeach()
# Their bounds are wall-clock (a stop within 0.5 s of its trigger): measured with no other test
# competing for the cores.
set_tests_properties(longrun/stop_stop_while_reading longrun/stop_signal_inside_loop PROPERTIES RUN_SERIAL TRUE)
