# The .py reader's whole-file syntax check (label fuzz): fuzz_syntax.py mutates the .py files of
# examples/triton and tests/ and compares the reader's accept/reject with Python's own parser.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_executable(py_syntax_check ${CMAKE_CURRENT_LIST_DIR}/syntax_check.cpp)
target_include_directories(py_syntax_check PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(py_syntax_check PRIVATE dtsim_core)
add_test(NAME fuzz/py_syntax_vs_python
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/fuzz_syntax.py $<TARGET_FILE:py_syntax_check> ${CMAKE_SOURCE_DIR} 40)
set_tests_properties(fuzz/py_syntax_vs_python PROPERTIES LABELS fuzz TIMEOUT 600)
# Only the launched kernel and what it calls must be in the subset (label e2e).
add_test(NAME pyfront/reader_subset_on_use COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_reader.py $<TARGET_FILE:dtsim>)
set_tests_properties(pyfront/reader_subset_on_use PROPERTIES LABELS e2e TIMEOUT 300)
# match statements and \N{...} escapes against Python 3.11's verdicts (label e2e).
add_test(NAME pyfront/syntax_match_and_names
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_match.py $<TARGET_FILE:py_syntax_check> $<TARGET_FILE:dtsim>)
set_tests_properties(pyfront/syntax_match_and_names PROPERTIES LABELS e2e TIMEOUT 300)
# The \N{NAME} lookup, name by name, against the parser of the python3 its table was generated from.
add_test(NAME pyfront/syntax_unicode_names
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/test_unicode_names.py $<TARGET_FILE:py_syntax_check> ${CMAKE_SOURCE_DIR})
set_tests_properties(pyfront/syntax_unicode_names PROPERTIES LABELS e2e TIMEOUT 300)
