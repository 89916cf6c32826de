# Every example through the dtsim command line (label `e2e`): examples/*.tile run clean,
# examples/bugs/* report their planted finding (exit 1; or a warning, exit 0), examples/*.dt pass
# `--check`.
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
# (copy_nopid and overlap: their instances store equal values to the elements they share, a
# warning, not a finding: docs/triton.md, "Stores of equal values")
foreach(f ${DTSIM_E2E_BUGS})
  get_filename_component(bug ${f} NAME)
  if(bug STREQUAL "copy_nopid.tile" OR bug STREQUAL "overlap.tile")
    dtsim_e2e_example(${f} warn "example/bugs/")
  else()
    dtsim_e2e_example(${f} bug "example/bugs/")
  endif()
endforeach()
# Every .dt example at sizes given at run time (DTSIM_SIZE_SETS sets through --arg, 1 through --in
# shapes), each with --check. The sanitizer build runs 1 --arg set (the GCC build the full 5): under
# ASan the sweep of the larger examples took minutes (scripts/long.sh runs the full one there).
if(DTSIM_SANITIZE)
  set(DTSIM_SIZE_SETS 1 CACHE STRING "size sets through --arg per .dt example (example-sizes/*)")
else()
  set(DTSIM_SIZE_SETS 5 CACHE STRING "size sets through --arg per .dt example (example-sizes/*)")
endif()
foreach(f ${DTSIM_E2E_DT})
  get_filename_component(name ${f} NAME)
  add_test(NAME example-sizes/${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/e2e/dt_sizes.py --sets ${DTSIM_SIZE_SETS} $<TARGET_FILE:dtsim> ${f})
  # COST: started before the short tests (a clean build has no timings yet), so that none of these
  # (up to 1.5 min under ASan) is left running alone at the end of `ctest -j2`.
  set_tests_properties(example-sizes/${name} PROPERTIES LABELS e2e TIMEOUT 600 COST 40)
endforeach()
