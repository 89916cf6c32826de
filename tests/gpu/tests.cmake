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
# Located GPU findings (label gpu, SKIPPED without a GPU): each planted bug gives the interpreter's
# finding kind and line under --sanitize=bounds; a failing assert prints the interpreter's text; an
# unchecked fault names the kernel; difftest over a faulting kernel finishes every trial.
if(DTSIM_HAVE_CUDA)
  set(DTSIM_LOCATED ${CMAKE_CURRENT_LIST_DIR}/located_or_skip.sh)
  file(GLOB DTSIM_GPU_BUGS ${CMAKE_SOURCE_DIR}/examples/bugs/*.tile)
  foreach(ex ${DTSIM_GPU_BUGS})
    get_filename_component(name ${ex} NAME)
    add_test(NAME gpu_located_${name} COMMAND sh ${DTSIM_LOCATED} $<TARGET_FILE:dtsim> bug ${ex})
  endforeach()
  # Interpreter == GPU on: scans (cumsum ... associative_scan with a combine function); f16 and bf16
  # atomics (native adds, compare-and-swap loops on the 32-bit word); i8 and i16 atomics (the same loops); permute() of rank-3 and rank-4
  # tiles; gather() (through shared memory, clamped indices); histogram() (shared-memory counters and atomics); the fp8 formats without PTX
  # conversions (float8e4b15, float8e4b8, float8e5b16: software conversions); pairs packed into i64 (tl.reduce / tl.associative_scan of two operands); tiles of rank
  # above 4 (tl.sort's [2] * 10 reshapes); atomics (results independent of the instances' order) and
  # a spin lock; pointers made from integers (device addresses through a table, int_to_ptr loads,
  # stores and an atomic); the integer dot (i8 x i8 -> i32, with an accumulator, in a K loop);
  # (int_dot_mma: on the tensor cores, several mma tiles per warp); reductions and scans of several
  # operands (three, and a pair with a 64-bit payload); attention written as the TTIR reader lowers
  # tensor descriptors (two dots a loop; its key loop in operand rings on sm_90a: head dim 64 and
  # 128, a causal mask, one and two warpgroups; non-causal at head dim 128 with exp2 into the subnormal
  # range; k and v copied by TMA, and attention_mixed: k by cp.async and v by TMA in the same stages,
  # key blocks outside the tensors; attention_causal: the tutorial's causal form, an off-band and an
  # on-band key loop reading one staging of q; attention_m64: query blocks of 64 rows, q copied and
  # the output stored by TMA in 64-row boxes); f16 and bf16 matmuls whose K loops are TMA rings on
  # sm_90a (ragged edges as TMA's zero fill); tma_planes: the same over tensors of rank 3 and 4, a
  # batch (head) per instance as the tensor maps' outer coordinates, ragged edges inside each batch.
  foreach(t scans atomics_half atomics_narrow permute gather histogram fp8_formats pairs high_rank atomics addresses int_dot int_dot_k64 int_dot_mma combine_n
          attention_desc attention_desc128 attention_desc_w8 attention_nc128 attention_mixed attention_causal attention_m64 tma_matmul
          sched_matmul tma_planes rebound_matmul)
    add_test(NAME gpu_difftest_${t}.tile COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/difftest_or_skip.sh $<TARGET_FILE:dtsim>
             ${CMAKE_CURRENT_LIST_DIR}/${t}.tile)
    set_tests_properties(gpu_difftest_${t}.tile PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
  endforeach()
  # TMA rings with a producer warp (--warp-specialize), rings wrapping two to five times; and the
  # same file without it.
  add_test(NAME gpu_difftest_ws_matmul.tile COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/difftest_or_skip.sh $<TARGET_FILE:dtsim>
           ${CMAKE_CURRENT_LIST_DIR}/ws_matmul.tile --warp-specialize)
  add_test(NAME gpu_difftest_ws_matmul_off.tile COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/difftest_or_skip.sh $<TARGET_FILE:dtsim>
           ${CMAKE_CURRENT_LIST_DIR}/ws_matmul.tile)
  set_tests_properties(gpu_difftest_ws_matmul.tile gpu_difftest_ws_matmul_off.tile PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
  # TMA rings in 2-CTA clusters multicasting B (--cluster): pairs that share the box, pairs that find
  # at run time they do not, a grid launched without clusters (odd extent).
  add_test(NAME gpu_difftest_cluster_matmul.tile COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/difftest_or_skip.sh $<TARGET_FILE:dtsim>
           ${CMAKE_CURRENT_LIST_DIR}/cluster_matmul.tile --cluster)
  set_tests_properties(gpu_difftest_cluster_matmul.tile PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 600)
  # A Triton-style matmul whose pointers advance in the pipelined K loop (a_ptrs += BK).
  # A ragged last K step whose mask is off by one: the hoisted test that allows for the step's
  # masked lanes must still fail, and the checked copy report the interpreter's finding.
  foreach(bug matmul_no_kmask matmul_kmask_off_by_one)
    add_test(NAME gpu_located_${bug}.py COMMAND sh ${DTSIM_LOCATED} $<TARGET_FILE:dtsim> bug
             ${CMAKE_SOURCE_DIR}/examples/triton/bugs/${bug}.py --buf a_ptr=f16[64,40] --buf b_ptr=f16[40,64]
             --buf c_ptr=f16[64,64] --arg M=64 --arg N=64 --arg K=40 --grid "cdiv(M, BM) * cdiv(N, BN)")
  endforeach()
  # Conflicting instances on the GPU (--sanitize=conflicts): two instances storing different values
  # to one element (examples/bugs/overlap.tile's and copy_nopid.tile's stores with the pid added:
  # the examples store equal values, a warning on the interpreter that the GPU cannot tell from a
  # conflict, docs/cuda-backend.md) ...
  # ... in a granule (64 elements) two instances already share, a plain store against atomics, and
  # in buffers that take granule words: a shared edge element of long rows, a shared whole granule.
  foreach(bug overlap_values nopid_values granule_third plain_atomic granule_rows granule_overlap)
    add_test(NAME gpu_conflict_${bug}.tile COMMAND sh ${DTSIM_LOCATED} $<TARGET_FILE:dtsim> conflict
             ${CMAKE_CURRENT_LIST_DIR}/bugs/${bug}.tile)
    set_tests_properties(gpu_conflict_${bug}.tile PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
  # ... and none where instances write disjoint elements, atomics meet atomics, or a spin lock orders
  # plain stores (every example and tests/gpu/*.tile under the default --sanitize=all).
  add_test(NAME gpu_conflict_none COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/no_conflicts_or_skip.sh $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR})
  set_tests_properties(gpu_conflict_none PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900)
  add_test(NAME gpu_register_cap COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/register_cap_or_skip.sh $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR})
  add_test(NAME gpu_located_assert COMMAND sh ${DTSIM_LOCATED} $<TARGET_FILE:dtsim> assert
           ${CMAKE_SOURCE_DIR}/tests/unit/cuda/assert_sites.tile --arg n=5)
  add_test(NAME gpu_fault_names_kernel COMMAND sh ${DTSIM_LOCATED} $<TARGET_FILE:dtsim> fault
           ${CMAKE_SOURCE_DIR}/examples/bugs/copy_pid_n.tile --arg n=1048576)
  add_test(NAME gpu_difftest_survives_faults COMMAND sh ${DTSIM_LOCATED} $<TARGET_FILE:dtsim> sweep
           ${CMAKE_SOURCE_DIR}/examples/bugs/copy_pid_n.tile --arg n=1048576)
  set_tests_properties(gpu_register_cap gpu_located_matmul_no_kmask.py gpu_located_matmul_kmask_off_by_one.py gpu_located_assert gpu_fault_names_kernel gpu_difftest_survives_faults PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300)
  foreach(ex ${DTSIM_GPU_BUGS})
    get_filename_component(name ${ex} NAME)
    set_tests_properties(gpu_located_${name} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 300)
  endforeach()
endif()
