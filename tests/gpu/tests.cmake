# GPU suite (label gpu): every example runs on the GPU and matches the interpreter (dtsim difftest,
# 3 random cases each). Without a CUDA driver/GPU the tests report SKIPPED (exit 77), never pass.
if(DTSIM_HAVE_CUDA)
  file(GLOB DTSIM_GPU_EXAMPLES ${CMAKE_SOURCE_DIR}/examples/*.tile ${CMAKE_SOURCE_DIR}/examples/*.dt)
  foreach(ex ${DTSIM_GPU_EXAMPLES})
    get_filename_component(name ${ex} NAME)
    add_test(NAME gpu_difftest_${name}
             COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/difftest_or_skip.sh $<TARGET_FILE:dtsim> ${ex})
    set_tests_properties(gpu_difftest_${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
  endforeach()
endif()
