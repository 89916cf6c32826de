# `dtsim emit --triton` without Triton: every example's module is valid Python (label e2e), golden
# modules for add.tile, softmax.tile and mm.dt (label golden; DTSIM_UPDATE_GOLDEN=1 rewrites them),
# and constructs with no Triton form are located errors (label errors).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(DTSIM_TRITON_TEST ${CMAKE_CURRENT_LIST_DIR}/test_triton.py)
file(GLOB DTSIM_TRITON_EXAMPLES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.tile ${CMAKE_SOURCE_DIR}/examples/*.dt
     ${CMAKE_SOURCE_DIR}/bench/gpu/*.tile ${CMAKE_SOURCE_DIR}/bench/gpu/*.dt)
foreach(ex ${DTSIM_TRITON_EXAMPLES})
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${ex})
  add_test(NAME triton_py/${rel}
           COMMAND ${Python3_EXECUTABLE} ${DTSIM_TRITON_TEST} $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} compile ${rel})
  set_tests_properties(triton_py/${rel} PROPERTIES LABELS e2e TIMEOUT 120)
endforeach()
add_test(NAME triton_py/bench/gpu_table.py
         COMMAND ${Python3_EXECUTABLE} -c "import py_compile, sys, tempfile; py_compile.compile(sys.argv[1], cfile=tempfile.mktemp(), doraise=True)"
                 ${CMAKE_SOURCE_DIR}/bench/gpu_table.py)
set_tests_properties(triton_py/bench/gpu_table.py PROPERTIES LABELS e2e TIMEOUT 60)
foreach(name add.tile softmax.tile mm.dt)
  add_test(NAME golden/triton/${name}
           COMMAND ${Python3_EXECUTABLE} ${DTSIM_TRITON_TEST} $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} golden
                   examples/${name} tests/golden/triton/${name}.py.expected)
  set_tests_properties(golden/triton/${name} PROPERTIES LABELS golden TIMEOUT 120)
endforeach()
add_test(NAME errors/triton_no_form
         COMMAND ${Python3_EXECUTABLE} ${DTSIM_TRITON_TEST} $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} errors)
set_tests_properties(errors/triton_no_form PROPERTIES LABELS errors TIMEOUT 120)
# Schedule options in Triton's spellings (tests/triton/sched.tile): the golden module, and where the
# compatibility venv has Triton and torch, the module under TRITON_INTERPRET=1 against the interpreter
# (difftest --oracle=triton; label e2e).
add_test(NAME golden/triton/sched.tile
         COMMAND ${Python3_EXECUTABLE} ${DTSIM_TRITON_TEST} $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} golden
                 tests/triton/sched.tile tests/golden/triton/sched.tile.py.expected)
set_tests_properties(golden/triton/sched.tile PROPERTIES LABELS golden TIMEOUT 120)
set(DTSIM_COMPAT_BIN "${CMAKE_SOURCE_DIR}/.cache/compat-venv/bin")
if(EXISTS ${DTSIM_COMPAT_BIN}/python3)
  add_test(NAME triton_interpret/sched.tile
           COMMAND ${CMAKE_COMMAND} -E env "PATH=${DTSIM_COMPAT_BIN}:$ENV{PATH}" TRITON_INTERPRET=1
                   $<TARGET_FILE:dtsim> difftest ${CMAKE_SOURCE_DIR}/tests/triton/sched.tile --oracle=triton --trials 3)
  set_tests_properties(triton_interpret/sched.tile PROPERTIES LABELS e2e TIMEOUT 600
                       FAIL_REGULAR_EXPRESSION "SKIPPED;mismatch;MISMATCH")
endif()
