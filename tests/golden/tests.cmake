# Golden printing of tiles (label golden): the golden case of tests/unit/interp/test_format.cpp,
# which compares format_value / format_summary with tests/golden/print/tiles.expected
# (DTSIM_UPDATE_GOLDEN=1 ./build/tests/unit_interp -tc='format golden*' rewrites it).
if(TARGET unit_interp)
  add_test(NAME golden/print COMMAND unit_interp "--test-case=format golden*")
  set_tests_properties(golden/print PROPERTIES LABELS golden)
endif()
