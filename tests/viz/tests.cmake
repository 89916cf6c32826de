# `dtsim viz` (labels golden and e2e): one CTest per case of test_viz.py.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(c well_formed golden_add golden_grouped_matmul bugs footprint html large errors repl)
  add_test(NAME viz/${c}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/viz/test_viz.py $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} ${c})
  if(c MATCHES "^golden|^bugs")
    set_tests_properties(viz/${c} PROPERTIES LABELS golden TIMEOUT 120)
  else()
    set_tests_properties(viz/${c} PROPERTIES LABELS e2e TIMEOUT 120)
  endif()
endforeach()
