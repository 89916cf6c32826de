# Every example through the dtsim command line (label `e2e`): examples/*.tile run clean,
# examples/bugs/* report their planted finding (exit 1), examples/*.dt pass `--check`.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
file(GLOB DTSIM_E2E_TILE CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.tile)
file(GLOB DTSIM_E2E_DT CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.dt)
file(GLOB DTSIM_E2E_BUGS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/bugs/*.tile ${CMAKE_SOURCE_DIR}/examples/bugs/*.dt)
function(dtsim_e2e_example file kind prefix)
  get_filename_component(name ${file} NAME)
  add_test(NAME ${prefix}${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/run_example.py $<TARGET_FILE:dtsim> ${file} ${kind})
  set_tests_properties(${prefix}${name} PROPERTIES LABELS e2e TIMEOUT 600)
endfunction()
foreach(f ${DTSIM_E2E_TILE})
  dtsim_e2e_example(${f} ok "example/")
endforeach()
foreach(f ${DTSIM_E2E_DT})
  dtsim_e2e_example(${f} check "example/")
endforeach()
foreach(f ${DTSIM_E2E_BUGS})
  dtsim_e2e_example(${f} bug "example/bugs/")
endforeach()
# Every .dt example at sizes given at run time (5 through --arg, 1 through --in shapes), each with --check.
foreach(f ${DTSIM_E2E_DT})
  get_filename_component(name ${f} NAME)
  add_test(NAME example-sizes/${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/dt_sizes.py $<TARGET_FILE:dtsim> ${f})
  set_tests_properties(example-sizes/${name} PROPERTIES LABELS e2e TIMEOUT 600)
endforeach()
