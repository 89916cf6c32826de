# Must-fail inputs: one CTest per tests/errors/**/*.tile|*.dt|*.py (label `errors`). Each file's first line
# says what dtsim must report: `# expect-error: LINE:COL: MESSAGE-SUBSTRING` (see check_error.py).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
file(GLOB_RECURSE DTSIM_ERROR_CASES CONFIGURE_DEPENDS
     ${CMAKE_CURRENT_SOURCE_DIR}/errors/*.tile ${CMAKE_CURRENT_SOURCE_DIR}/errors/*.dt ${CMAKE_CURRENT_SOURCE_DIR}/errors/triton/*.py)
foreach(f ${DTSIM_ERROR_CASES})
  file(RELATIVE_PATH rel ${CMAKE_CURRENT_SOURCE_DIR}/errors ${f})
  add_test(NAME errors/${rel}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/errors/check_error.py $<TARGET_FILE:dtsim> ${f})
  set_tests_properties(errors/${rel} PROPERTIES LABELS errors TIMEOUT 150)
endforeach()
