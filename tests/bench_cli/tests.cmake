# `dtsim bench` from the command line (label bench; bad flags under errors): report formats, JSON,
# FLOP counting, the SKIPPED message without a GPU.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(c interp_text interp_json cuda_or_skip bad_flags)
  add_test(NAME bench_cli/${c}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_bench_cli.py $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} ${c})
  set_tests_properties(bench_cli/${c} PROPERTIES LABELS bench TIMEOUT 300)
endforeach()
set_tests_properties(bench_cli/bad_flags PROPERTIES LABELS errors)
