# `dtsim tune` from the command line, without a GPU (a GPU machine times for real): a budgeted search
# that enumerates, checks and reports; every schedule it prints passes `run --check`; the exhaustive
# search of a tiny kernel; CSV/JSON; shards, --merge and --gpus with check-only workers; usage errors
# (label errors).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(c budget printed_schedules_check exhaustive csv_json shards merge gpus bad_flags)
  add_test(NAME tune/${c}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_tune.py $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} ${c})
  set_tests_properties(tune/${c} PROPERTIES LABELS e2e TIMEOUT 600)
endforeach()
set_tests_properties(tune/bad_flags PROPERTIES LABELS errors)
# bench/tune_experiment.py's pieces that need no GPU: the Triton tutorials' loader, the table.
foreach(c tutorial_loader table)
  add_test(NAME tune/experiment_${c} COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_experiment.py ${CMAKE_SOURCE_DIR} ${c})
  set_tests_properties(tune/experiment_${c} PROPERTIES LABELS e2e TIMEOUT 120)
endforeach()
if(DTSIM_HAVE_CUDA)
  add_test(NAME tune/gpu COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_tune.py $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} gpu)
  set_tests_properties(tune/gpu PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
