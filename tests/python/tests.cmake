# The Python package (python/dtsim + _dtsim, in build/python): scripts written like the practitioner's
# guide's host code (numpy), run through `python -m dtsim`, launching examples/triton kernels and
# kernels of their own (label e2e). Registered only when the package is built (DTSIM_HAVE_PYTHON).
if(DTSIM_HAVE_PYTHON)
  function(dtsim_python_test name script)
    add_test(NAME python/${name} COMMAND ${Python3_EXECUTABLE} -m dtsim ${ARGN} ${CMAKE_CURRENT_LIST_DIR}/${script})
    set_tests_properties(python/${name} PROPERTIES LABELS e2e TIMEOUT 300
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_AUTOTUNE=")
  endfunction()
  dtsim_python_test(guide_examples guide_examples.py)
  dtsim_python_test(guide_examples_threads guide_examples.py --threads=2 --order=reverse)
  dtsim_python_test(planted_bug planted_bug.py)
  dtsim_python_test(launch_edges launch_edges.py)
  dtsim_python_test(int_range int_range.py)
  add_test(NAME python/run_module COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/run_module.py)
  set_tests_properties(python/run_module PROPERTIES LABELS e2e TIMEOUT 300 ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python")
  add_test(NAME python/compile_file COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/compile_file.py)
  set_tests_properties(python/compile_file PROPERTIES LABELS e2e TIMEOUT 300 ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python")
  dtsim_python_test(compile_error compile_error.py)
  dtsim_python_test(views views.py)
  dtsim_python_test(print_if print_if.py)
  dtsim_python_test(viz_launch viz_launch.py)
  dtsim_python_test(zero_copy zero_copy.py)
  dtsim_python_test(interfaces interfaces.py)
  dtsim_python_test(torch_cpu torch_cpu.py)
  set_tests_properties(python/torch_cpu PROPERTIES SKIP_RETURN_CODE 77)
  dtsim_python_test(cuda_unavailable cuda_unavailable.py)
  set_tests_properties(python/cuda_unavailable PROPERTIES SKIP_RETURN_CODE 77)
  dtsim_python_test(gpu_cuda_backend cuda_backend.py)
  # (these drive the stand-in package's interfaces: DTSIM_STANDIN=1 where Triton is installed too)
  set_tests_properties(python/gpu_cuda_backend PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
                       ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  dtsim_python_test(device_arrays device_arrays.py)
  dtsim_python_test(gpu_cuda_device_arrays cuda_device_arrays.py)
  set_tests_properties(python/gpu_cuda_device_arrays PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
                       ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  # torch CUDA tensors through the launcher kept per launch signature (the installed Triton's path)
  dtsim_python_test(launcher_keys launcher_keys.py)  # no GPU: the launcher's keys, cuda_launcher recorded
  dtsim_python_test(fp_fusion fp_fusion.py)  # no GPU: enable_fp_fusion reaches the compiled kernel and its launcher
  dtsim_python_test(fp_fusion_standin fp_fusion.py)  # ... through dtsim's own .py reader
  set_tests_properties(python/fp_fusion_standin PROPERTIES ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  dtsim_python_test(approx_div_standin approx_div.py)  # no GPU: dtsim's own .py reader compiles `/` as div.full.f32 too (ttir/approx_div: the TTIR reader)
  set_tests_properties(python/approx_div_standin PROPERTIES ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  dtsim_python_test(gpu_cuda_launcher cuda_launcher.py)
  set_tests_properties(python/gpu_cuda_launcher PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  dtsim_python_test(gpu_cuda_launcher_standin cuda_launcher.py)  # ... and dtsim's own .py reader's launch
  set_tests_properties(python/gpu_cuda_launcher_standin PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
                       ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  dtsim_python_test(standin_layout standin_layout.py)
  dtsim_python_test(narrow_types narrow_types.py)  # dtsim's own reader even where Triton is installed
  set_tests_properties(python/narrow_types PROPERTIES ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_AUTOTUNE=;DTSIM_STANDIN=1")
  set_tests_properties(python/standin_layout PROPERTIES ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  # tests/ttir/ops.py (atomics, scans, bitcasts, math functions) through dtsim's own .py reader
  dtsim_python_test(ops_standin ../ttir/ops.py)
  set_tests_properties(python/ops_standin PROPERTIES ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  # tests/ttir/pointers.py (pointers made from integers, a tl.sort of rank 10) through dtsim's own .py reader
  dtsim_python_test(pointers_standin ../ttir/pointers.py)
  set_tests_properties(python/pointers_standin PROPERTIES ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  # tests/ttir/tuples.py (tl.reduce / tl.associative_scan of tuples) through dtsim's own .py reader
  dtsim_python_test(tuples_standin ../ttir/tuples.py)
  set_tests_properties(python/tuples_standin PROPERTIES ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  # tests/ttir/unsigned.py (tl.uint8 ... tl.uint64 values) through dtsim's own .py reader
  dtsim_python_test(unsigned_standin ../ttir/unsigned.py)
  set_tests_properties(python/unsigned_standin PROPERTIES ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  # tests/ttir/extern_libs.py (tutorial 07's extern_libs launch option) through dtsim's own .py reader
  dtsim_python_test(extern_libs_standin ../ttir/extern_libs.py)
  set_tests_properties(python/extern_libs_standin PROPERTIES ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  # tests/ttir/shapes.py (gather, histogram, cat, interleave, join, permute) through dtsim's own .py reader
  dtsim_python_test(shapes_standin ../ttir/shapes.py)
  set_tests_properties(python/shapes_standin PROPERTIES ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  dtsim_python_test(autotune_first autotune.py)
  add_test(NAME python/autotune_all COMMAND ${Python3_EXECUTABLE} -m dtsim ${CMAKE_CURRENT_LIST_DIR}/autotune.py)
  set_tests_properties(python/autotune_all PROPERTIES LABELS e2e TIMEOUT 300
                       ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_AUTOTUNE=all")
  add_test(NAME python/pip_install COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/pip_install.py
           ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  set_tests_properties(python/pip_install PROPERTIES LABELS e2e TIMEOUT 300 SKIP_RETURN_CODE 77)
  # breakpoint() in a kernel stops the debugger there; pdb.set_trace() names what works (the child
  # runs under this interpreter's package: the stand-in here, Triton's own in ttir/breakpoint_kernel)
  add_test(NAME python/breakpoint_kernel COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/breakpoint_kernel.py)
  set_tests_properties(python/breakpoint_kernel PROPERTIES LABELS e2e TIMEOUT 300
                       ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python")
  add_test(NAME python/repl_session COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/repl_session.py)
  set_tests_properties(python/repl_session PROPERTIES LABELS e2e TIMEOUT 300
                       ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python")
endif()
if(DTSIM_HAVE_PYTHON)
  # The start-up hook instead of `python -m dtsim`: DTSIM_TRITON=1 with hook/ on PYTHONPATH.
  add_test(NAME python/sitecustomize_hook COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/planted_bug.py)
  set_tests_properties(python/sitecustomize_hook PROPERTIES LABELS e2e TIMEOUT 300
                       ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python:${CMAKE_BINARY_DIR}/python/dtsim/hook;DTSIM_TRITON=1")
endif()
if(DTSIM_HAVE_PYTHON)
  # The REPL under a terminal (tmux): Ctrl-C, quit, Ctrl-D, breakpoints across launches, where, completion.
  add_test(NAME python/repl_transcripts COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/repl_transcripts.py
           ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  set_tests_properties(python/repl_transcripts PROPERTIES LABELS e2e TIMEOUT 300 SKIP_RETURN_CODE 77)
endif()
