# The compile driver's pass list (label e2e): `dtsim emit --after=STAGE` for every stage on a .tile,
# a .dt and a .py example (test_emit_after.py), and the unknown-stage usage error.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(c tile_stages dt_stages py_stages bad_stage)
  add_test(NAME driver/${c}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/driver/test_emit_after.py $<TARGET_FILE:dtsim>
                   ${CMAKE_SOURCE_DIR} ${c})
  set_tests_properties(driver/${c} PROPERTIES LABELS e2e TIMEOUT 300)
endforeach()
