# The compatibility suite (label compat): Liger-Kernel's own ops run under `python -m dtsim` through the
# drivers of tests/compat/liger/cases.py and compared with torch. It installs torch, triton and
# liger-kernel from PyPI into a cache venv (scripts/compat.sh), so it is registered only when asked for:
#   cmake -S . -B build -DDTSIM_COMPAT=ON && ctest --test-dir build -L compat
# compat/setup makes the venv and builds the Python module; each case is then one test
# (compat/liger/<case>) that passes when its result matches tests/compat/expected_failures.txt.
# The runner's verdicts (PASS/FAIL/ERROR, expected failures, XPASS, stale entries) are checked on
# stand-in drivers in every build but the sanitizer's (whose _dtsim cannot load into an uninstrumented
# Python): no torch or Triton needed.
if(DTSIM_HAVE_PYTHON AND NOT DTSIM_SANITIZE)
  add_test(NAME compat/runner_verdicts COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/selftest/test_runner.py
           ${CMAKE_BINARY_DIR}/python)
  set_tests_properties(compat/runner_verdicts PROPERTIES LABELS e2e TIMEOUT 300)
endif()

option(DTSIM_COMPAT "Register the compatibility suite (ctest -L compat; downloads torch, triton and liger-kernel)" OFF)
if(DTSIM_COMPAT)
  if(NOT DTSIM_HAVE_PYTHON)
    message(WARNING "dtsim: DTSIM_COMPAT=ON needs the Python package (python3-dev and pybind11); compat tests not registered")
  else()
    set(compat_sh ${CMAKE_SOURCE_DIR}/scripts/compat.sh)
    add_test(NAME compat/setup COMMAND ${compat_sh} --build ${CMAKE_BINARY_DIR} --python ${Python3_EXECUTABLE} --setup-only)
    set_tests_properties(compat/setup PROPERTIES LABELS compat FIXTURES_SETUP compat_venv TIMEOUT 3600
                         RESOURCE_LOCK compat_venv)
    file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/liger/cases.py compat_defs REGEX "^def [a-z0-9_]+\\(\\):")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/liger/cases.py)
    foreach(def ${compat_defs})
      string(REGEX REPLACE "^def ([a-z0-9_]+)\\(\\):.*" "\\1" name "${def}")
      add_test(NAME compat/liger/${name} COMMAND ${compat_sh} --build ${CMAKE_BINARY_DIR} --python ${Python3_EXECUTABLE} --no-setup ${name})
      set_tests_properties(compat/liger/${name} PROPERTIES LABELS compat FIXTURES_REQUIRED compat_venv TIMEOUT 900)
    endforeach()
    # tests/python/torch_cpu.py with torch (and Triton's own host package): torch CPU tensors as
    # arguments, and torch's device queries answered before the first launch
    if(DEFINED ENV{DTSIM_COMPAT_VENV})
      set(compat_venv $ENV{DTSIM_COMPAT_VENV})
    else()
      set(compat_venv ${CMAKE_SOURCE_DIR}/.cache/compat-venv)
    endif()
    add_test(NAME compat/torch_cpu COMMAND ${compat_venv}/bin/python -W ignore -m dtsim ${CMAKE_SOURCE_DIR}/tests/python/torch_cpu.py)
    set_tests_properties(compat/torch_cpu PROPERTIES LABELS compat FIXTURES_REQUIRED compat_venv TIMEOUT 900
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/triton-cache")
    # every case again through dtsim's own .py reader (DTSIM_STANDIN=1: the stand-in package, as where
    # Triton is not installed), against its own expected failures
    add_test(NAME compat/liger_standin COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/run_liger.py
             --python ${compat_venv}/bin/python --pythonpath ${CMAKE_BINARY_DIR}/python
             --expected ${CMAKE_CURRENT_LIST_DIR}/expected_failures_standin.txt)
    set_tests_properties(compat/liger_standin PROPERTIES LABELS compat FIXTURES_REQUIRED compat_venv TIMEOUT 1800
                         ENVIRONMENT "DTSIM_STANDIN=1")
    message(STATUS "dtsim: compatibility suite ON (ctest -L compat)")
  endif()
endif()
