# The documentation's shown outputs (label e2e): every command of README.md and docs/*.md shown with
# its output is run and compared with the text (tests/docs/check_docs.py; exceptions, each with its
# reason, in tests/docs/unchecked.txt).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
# Without the package, or in the sanitizer build (whose _dtsim the system Python cannot load), the commands
# that run python3 are left out (--no-python).
set(docs_flags "")
if(DTSIM_SANITIZE OR NOT DTSIM_HAVE_PYTHON)
  set(docs_flags --no-python)
endif()
if(NOT DTSIM_HAVE_CUDA)
  list(APPEND docs_flags --no-cuda)
endif()
add_test(NAME docs/shown_outputs
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_docs.py $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR} ${docs_flags})
set_tests_properties(docs/shown_outputs PROPERTIES LABELS e2e TIMEOUT 600)
