# Kernels read by the installed Triton's own frontend (TTIR) and run on dtsim, through
# `python -m dtsim` (label e2e). They need Triton: scripts/setup.sh installs it from PyPI into
# .cache/triton-venv (DTSIM_TRITON_PYTHON names another interpreter with Triton); without it each
# test reports skipped.
# Not in the sanitizer build: its _dtsim module cannot be loaded into an uninstrumented Python (the
# other Python tests are left out there too: scripts/sanitize.sh runs `-E '^python/'`).
if(DTSIM_HAVE_PYTHON AND NOT DTSIM_SANITIZE)
  set(DTSIM_TRITON_PYTHON "${CMAKE_SOURCE_DIR}/.cache/triton-venv/bin/python" CACHE FILEPATH
      "A Python with Triton installed, for the TTIR frontend's tests")
  set(ttir_dir ${CMAKE_CURRENT_LIST_DIR})
  if(EXISTS ${DTSIM_TRITON_PYTHON})
    # tests/python scripts of the launch path under `python -m dtsim` (no GPU needed): launcher_keys,
    # the keying of backend='cuda' launchers on the installed Triton's launch path; approx_div,
    # Triton's `/` as div.full.f32 on backend='cuda', IEEE where the kernel uses div_rn; fp_fusion,
    # enable_fp_fusion from Triton's own options (python/fp_fusion runs it through dtsim's own
    # reader); triton_launches, Triton's own launch path inside the block, dtsim's outside it.
    foreach(script launcher_keys approx_div fp_fusion triton_launches)
      add_test(NAME ttir/${script} COMMAND ${DTSIM_TRITON_PYTHON} -W ignore -m dtsim ${CMAKE_CURRENT_LIST_DIR}/../python/${script}.py)
      set_tests_properties(ttir/${script} PROPERTIES LABELS e2e TIMEOUT 300
                           ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/triton-cache")
    endforeach()
    add_test(NAME ttir/breakpoint_kernel COMMAND ${DTSIM_TRITON_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/../python/breakpoint_kernel.py)
    set_tests_properties(ttir/breakpoint_kernel PROPERTIES LABELS e2e TIMEOUT 300
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/triton-cache")
  endif()
  foreach(script kernels findings readers_agree ops narrow_types pointers shapes tuples views_returns quoted_symbols unsigned extern_libs project_forms serving_forms schedule_options scaled_dots libdevice_forms mask_arith inline_ptx inline_ptx_blocks view_bounds bit_exact tuple_args triton_semantics batched_dots nan_minmax libdevice_more block_pointers combine_order inline_ptx_predicates combine_branches map_elementwise machine_regs int_args libdevice_directed libdevice_coverage fma_once hint_checks hint_settings combine_ifs combine_returns inline_ptx_trap pointer_views undefined_lanes equal_stores gathers package_helpers module_forms inline_ptx_fns histograms stdlib_forms block_pointer_forms range_forms libdevice_fast host_chosen print_unsigned tuple_items own_reader_forms autotune_modes ttir_cache)
    if(EXISTS ${DTSIM_TRITON_PYTHON})
      add_test(NAME ttir/${script} COMMAND ${DTSIM_TRITON_PYTHON} -W ignore -m dtsim ${ttir_dir}/${script}.py
               WORKING_DIRECTORY ${ttir_dir})
    else()
      add_test(NAME ttir/${script} COMMAND ${CMAKE_COMMAND} -E echo "skipped: no Python with Triton (run scripts/setup.sh)")
      set_tests_properties(ttir/${script} PROPERTIES DISABLED ON)
    endif()
    set_tests_properties(ttir/${script} PROPERTIES LABELS e2e TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/triton-cache")
  endforeach()
  # An older Triton (scripts/setup.sh: 3.8.0 in .cache/triton38-venv): the launch path on its API, and
  # block pointers, which its frontend still accepts and lowers to pointer arithmetic (Triton 3.9's
  # refuses them, and dtsim reads such kernels with its own .py reader there); histograms: tl.histogram of
  # i8, i16 and i64 inputs, which Triton 3.9's frontend refuses. Skipped without that venv.
  set(DTSIM_TRITON_OLD_PYTHON "${CMAKE_SOURCE_DIR}/.cache/triton38-venv/bin/python" CACHE FILEPATH
      "A Python with an older Triton (3.4 to 3.8), for the TTIR frontend's tests on it")
  foreach(script block_pointers block_pointer_forms host_chosen ttir_cache kernels findings pointers tuples narrow_types unsigned view_bounds histograms)
    if(EXISTS ${DTSIM_TRITON_OLD_PYTHON})
      add_test(NAME ttir/old_triton/${script} COMMAND ${DTSIM_TRITON_OLD_PYTHON} -W ignore -m dtsim ${ttir_dir}/${script}.py
               WORKING_DIRECTORY ${ttir_dir})
    else()
      add_test(NAME ttir/old_triton/${script} COMMAND ${CMAKE_COMMAND} -E echo "skipped: no older Triton (run scripts/setup.sh)")
      set_tests_properties(ttir/old_triton/${script} PROPERTIES DISABLED ON)
    endif()
    set_tests_properties(ttir/old_triton/${script} PROPERTIES LABELS e2e TIMEOUT 300
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/triton-cache-old")
  endforeach()
  # scaled_dots.py and the inline PTX scripts through dtsim's own .py reader (the stand-in package):
  # both readers build tl.dot_scaled with ir/Scaled.h and inline PTX with ir/InlinePtx.h and must
  # pass the same checks; view_bounds: both launch paths bind views alike
  if(EXISTS ${DTSIM_TRITON_PYTHON})
    foreach(script scaled_dots inline_ptx inline_ptx_blocks inline_ptx_predicates nan_minmax view_bounds combine_order machine_regs int_args fma_once hint_checks hint_settings combine_ifs combine_returns inline_ptx_trap undefined_lanes equal_stores gathers package_helpers module_forms inline_ptx_fns histograms stdlib_forms block_pointers block_pointer_forms range_forms libdevice_fast host_chosen print_unsigned tuple_items own_reader_forms)
      add_test(NAME ttir/${script}_standin COMMAND ${DTSIM_TRITON_PYTHON} -W ignore -m dtsim ${ttir_dir}/${script}.py
               WORKING_DIRECTORY ${ttir_dir})
      set_tests_properties(ttir/${script}_standin PROPERTIES LABELS e2e TIMEOUT 300
                           ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
    endforeach()
  endif()
  # Scripts that need torch, so the compatibility venv's Python (torch and Triton; scripts/compat.sh
  # makes it); without it they report skipped. fp8_matmul: the fp8 path of tutorial 03's matmul (torch
  # fp8 tensors); torch_cuda_queries: torch.cuda's device queries answer as the CPU driver's H100.
  set(DTSIM_COMPAT_PYTHON "${CMAKE_SOURCE_DIR}/.cache/compat-venv/bin/python" CACHE FILEPATH
      "A Python with torch and Triton installed, for the TTIR tests that need torch")
  # libdevice_erfcinv, libdevice_bessel: checked against mpmath, which this venv has (torch needs it).
  # fp8_formats: float8e4b15 on both readers, the fnuz formats refused by Triton's (located) and run
  # by dtsim's own (fp8_formats_standin).
  foreach(script fp8_matmul torch_cuda_queries pointer_objects libdevice_erfcinv libdevice_bessel fp8_formats)
    if(EXISTS ${DTSIM_COMPAT_PYTHON})
      add_test(NAME ttir/${script} COMMAND ${DTSIM_COMPAT_PYTHON} -W ignore -m dtsim ${ttir_dir}/${script}.py
               WORKING_DIRECTORY ${ttir_dir})
    else()
      add_test(NAME ttir/${script} COMMAND ${CMAKE_COMMAND} -E echo "skipped: no Python with torch and Triton (run scripts/compat.sh)")
      set_tests_properties(ttir/${script} PROPERTIES DISABLED ON)
    endif()
    set_tests_properties(ttir/${script} PROPERTIES LABELS e2e TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/triton-cache")
  endforeach()
  if(EXISTS ${DTSIM_COMPAT_PYTHON})
    add_test(NAME ttir/fp8_formats_standin COMMAND ${DTSIM_COMPAT_PYTHON} -W ignore -m dtsim ${ttir_dir}/fp8_formats.py
             WORKING_DIRECTORY ${ttir_dir})
    set_tests_properties(ttir/fp8_formats_standin PROPERTIES LABELS e2e TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
    # torch's Inductor utilities under the stand-in: torch is told that Triton is not installed
    add_test(NAME ttir/standin_torch COMMAND ${DTSIM_COMPAT_PYTHON} -W ignore -m dtsim ${ttir_dir}/standin_torch.py
             WORKING_DIRECTORY ${ttir_dir})
    set_tests_properties(ttir/standin_torch PROPERTIES LABELS e2e TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;DTSIM_STANDIN=1")
  endif()
  set_tests_properties(ttir/fp8_matmul PROPERTIES TIMEOUT 600)
  # backend='cuda' (label gpu; exits 77 without a GPU): pointers made from integers are device
  # addresses; the int8 dot; uint64 division.
  if(EXISTS ${DTSIM_TRITON_PYTHON})
    add_test(NAME ttir/gpu_cuda_ops COMMAND ${DTSIM_TRITON_PYTHON} -W ignore -m dtsim --backend=cuda ${ttir_dir}/cuda_ops.py
             WORKING_DIRECTORY ${ttir_dir})
    set_tests_properties(ttir/gpu_cuda_ops PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/triton-cache")
    # libdevice's directed roundings, bit for bit, on the CUDA backend
    add_test(NAME ttir/gpu_libdevice_directed COMMAND ${DTSIM_TRITON_PYTHON} -W ignore -m dtsim --backend=cuda ${ttir_dir}/libdevice_directed.py
             WORKING_DIRECTORY ${ttir_dir})
    set_tests_properties(ttir/gpu_libdevice_directed PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/triton-cache")
    # tl.fma rounded once (f32 and f64, ir/Fma.cpp), bit for bit, on the CUDA backend
    add_test(NAME ttir/gpu_fma_once COMMAND ${DTSIM_TRITON_PYTHON} -W ignore -m dtsim --backend=cuda ${ttir_dir}/fma_once.py
             WORKING_DIRECTORY ${ttir_dir})
    set_tests_properties(ttir/gpu_fma_once PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/triton-cache")
    # tl.dot_scaled's lowering (scaled_dots.py) on the CUDA backend
    add_test(NAME ttir/gpu_scaled_dots COMMAND ${DTSIM_TRITON_PYTHON} -W ignore -m dtsim --backend=cuda ${ttir_dir}/scaled_dots.py
             WORKING_DIRECTORY ${ttir_dir})
    set_tests_properties(ttir/gpu_scaled_dots PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/triton-cache")
  endif()
  # dtsim.config(viz=...) under the installed Triton (the stand-in's run is python/viz_launch).
  if(EXISTS ${DTSIM_TRITON_PYTHON})
    add_test(NAME ttir/viz_launch COMMAND ${DTSIM_TRITON_PYTHON} -W ignore -m dtsim ${CMAKE_SOURCE_DIR}/tests/python/viz_launch.py)
    set_tests_properties(ttir/viz_launch PROPERTIES LABELS e2e TIMEOUT 300
                         ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;TRITON_CACHE_DIR=${CMAKE_BINARY_DIR}/triton-cache")
  endif()
endif()
