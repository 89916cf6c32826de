# The Triton frontend (examples/triton/*.py): every kernel against a plain-Python reference and the
# planted bugs (label e2e, run_kernel.py), golden tile IR for three kernels (label golden,
# DTSIM_UPDATE_GOLDEN=1 rewrites them), and the same kernels on the GPU backend (label gpu; exit 77
# without a GPU) and under TRITON_INTERPRET=1 where triton is importable (label gpu; 77 otherwise).
# Must-fail .py files are in tests/errors/triton/ (label errors).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(DTSIM_PYFRONT_CASES add copy rgb2grey matmul_naive swizzle grouped_matmul softmax matmul_leaky_relu
    matmul_no_activation layernorm features dot_precision ragged_sum narrow_types shape_ops bug_copy_nopid bug_copy_pid_n bug_matmul_no_kmask
    bug_matmul_kmask_off_by_one)
foreach(c ${DTSIM_PYFRONT_CASES})
  add_test(NAME pyfront/${c}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/run_kernel.py $<TARGET_FILE:dtsim> ${c})
  set_tests_properties(pyfront/${c} PROPERTIES LABELS e2e TIMEOUT 300)
  if(NOT c MATCHES "^bug_")
    add_test(NAME gpu/pyfront/${c}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/run_kernel.py $<TARGET_FILE:dtsim> ${c} --backend=cuda)
    set_tests_properties(gpu/pyfront/${c} PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77)
    # (dot_precision: Triton's interpreter does not round dot operands to tf32 as the GPU does;
    # narrow_types: the launcher there binds no int8/int16 tensors)
    if(NOT c STREQUAL "dot_precision" AND NOT c STREQUAL "narrow_types")
      add_test(NAME gpu/pyfront-triton-interpret/${c}
               COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/run_kernel.py $<TARGET_FILE:dtsim> ${c} --triton-interpret)
      set_tests_properties(gpu/pyfront-triton-interpret/${c} PROPERTIES LABELS gpu TIMEOUT 300 SKIP_RETURN_CODE 77)
    endif()
  endif()
endforeach()
function(dtsim_pyfront_golden name)
  add_test(NAME golden/pyfront/${name}
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/golden.py $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR}
                   examples/triton/${name}.py tests/golden/pyfront/${name}.tile.expected ${ARGN})
  set_tests_properties(golden/pyfront/${name} PROPERTIES LABELS golden TIMEOUT 120)
endfunction()
dtsim_pyfront_golden(add --buf x_ptr=f32[1000] --buf y_ptr=f32[1000] --buf out_ptr=f32[1000] --arg n_elements=1000
                     --grid "cdiv(n_elements, BLOCK)")
dtsim_pyfront_golden(matmul_naive --buf a_ptr=f32[40,50] --buf b_ptr=f32[50,30] --buf c_ptr=f32[40,30]
                     --arg m=40 --arg n=30 --arg k=50 --arg stride_am=50 --arg stride_ak=1 --arg stride_bk=30
                     --arg stride_bn=1 --arg stride_cm=30 --arg stride_cn=1 --grid "cdiv(m, bm), cdiv(n, bn)")
dtsim_pyfront_golden(matmul_act --buf a_ptr=f16[70,40] --buf b_ptr=f16[40,50] --buf c_ptr=f16[70,50]
                     --arg M=70 --arg N=50 --arg K=40 --arg ACTIVATION=leaky_relu --grid "cdiv(M, BM) * cdiv(N, BN)")
add_test(NAME pyfront/cli_errors COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cli.py $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR})
set_tests_properties(pyfront/cli_errors PROPERTIES LABELS errors TIMEOUT 120)
