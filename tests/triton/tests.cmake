# `dtsim emit --triton` without Triton: every example's module is valid Python (label e2e), golden
# modules for add.tile, softmax.tile and mm.dt (label golden; DTSIM_UPDATE_GOLDEN=1 rewrites them),
# and constructs with no Triton form are located errors (label errors).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(DTSIM_TRITON_TEST ${CMAKE_CURRENT_LIST_DIR}/test_triton.py)
file(GLOB DTSIM_TRITON_EXAMPLES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.tile ${CMAKE_SOURCE_DIR}/examples/*.dt)
foreach(ex ${DTSIM_TRITON_EXAMPLES})
  get_filename_component(name ${ex} NAME)
  add_test(NAME triton_py/${name}
           COMMAND ${Python3_EXECUTABLE} ${DTSIM_TRITON_TEST} $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} compile examples/${name})
  set_tests_properties(triton_py/${name} PROPERTIES LABELS e2e TIMEOUT 120)
endforeach()
foreach(name add.tile softmax.tile mm.dt)
  add_test(NAME golden/triton/${name}
           COMMAND ${Python3_EXECUTABLE} ${DTSIM_TRITON_TEST} $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} golden
                   examples/${name} tests/golden/triton/${name}.py.expected)
  set_tests_properties(golden/triton/${name} PROPERTIES LABELS golden TIMEOUT 120)
endforeach()
add_test(NAME errors/triton_no_form
         COMMAND ${Python3_EXECUTABLE} ${DTSIM_TRITON_TEST} $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} errors)
set_tests_properties(errors/triton_no_form PROPERTIES LABELS errors TIMEOUT 120)
