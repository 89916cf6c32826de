# Golden printing of tiles (label golden): the golden case of tests/unit/interp/test_format.cpp,
# which compares format_value / format_summary with tests/golden/print/tiles.expected
# (DTSIM_UPDATE_GOLDEN=1 ./build/tests/unit_interp -tc='format golden*' rewrites it).
if(TARGET unit_interp)
  add_test(NAME golden/print COMMAND unit_interp "--test-case=format golden*")
  set_tests_properties(golden/print PROPERTIES LABELS golden)
endif()

# Golden plans of the CUDA backend (label golden): `dtsim emit --plan FILE FLAGS` must print
# tests/golden/plan/NAME.plan.expected, and emission from the plan must succeed (plan.py;
# DTSIM_UPDATE_GOLDEN=1 ctest -R golden/plan rewrites the files). Needs no GPU, only the backend.
if(DTSIM_HAVE_CUDA)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  function(dtsim_plan_golden name file)
    add_test(NAME golden/plan/${name}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/plan.py $<TARGET_FILE:dtsim> ${CMAKE_SOURCE_DIR}
                     ${file} tests/golden/plan/${name}.plan.expected ${ARGN})
    set_tests_properties(golden/plan/${name} PROPERTIES LABELS golden TIMEOUT 120)
  endfunction()
  dtsim_plan_golden(matmul examples/matmul.tile)
  # asserts that hold for the constexprs compiled for are not checked at run time (a .dt file's size
  # checks: layernorm's launches then need no status buffer and no synchronize)
  dtsim_plan_golden(const_asserts tests/golden/plan/const_asserts.tile --arch sm_90a)
  dtsim_plan_golden(layernorm_dt_sm90a examples/layernorm.dt --arch sm_90a --arg x_SIZE=8192 --arg y_SIZE=8192)
  dtsim_plan_golden(softmax examples/softmax.tile)
  # a pipelined dot on wgmma, and on mma.sync with its bounds checks hoisted (two copies of the loop)
  dtsim_plan_golden(matmul_f16_sm90a examples/matmul_f16.tile --arch sm_90a)
  dtsim_plan_golden(matmul_f16_hoisted examples/matmul_f16.tile --arch sm_80 --sanitize=bounds)
  # a Triton kernel whose loop advances its pointers (not pipelined: b_ptrs is not provably 16-byte aligned)
  dtsim_plan_golden(matmul_act examples/triton/matmul_act.py --arch sm_80 --buf a_ptr=f16[70,40] --buf b_ptr=f16[40,50]
                    --buf c_ptr=f16[70,50] --arg M=70 --arg N=50 --arg K=40 --arg ACTIVATION=leaky_relu
                    --grid "cdiv(M, BM) * cdiv(N, BN)")
  # an FMA ring that does not fit sm_86's shared memory: the fallback decided by the plan
  dtsim_plan_golden(mm_sm86_fallback examples/mm.dt --arch sm_86)
  # the same kernel where the ring fits
  dtsim_plan_golden(mm examples/mm.dt)
  # attention as the TTIR reader lowers tensor descriptors: two dots on wgmma, 16-byte loads, its
  # key loop in operand rings (k and v copied by TMA, q staged once below them); at head dim 128 (two
  # 64-column boxes per tile); with bounds checks the rings keep cp.async, the plan says why
  dtsim_plan_golden(attention_desc_sm90a tests/gpu/attention_desc.tile --arch sm_90a)
  dtsim_plan_golden(attention_nc128_sm90a tests/gpu/attention_nc128.tile --arch sm_90a)
  dtsim_plan_golden(attention_desc_bounds_sm90a tests/gpu/attention_desc.tile --arch sm_90a --sanitize=bounds)
  # the tutorial's causal form: two key loops, q staged by the first and kept for the second
  dtsim_plan_golden(attention_causal_sm90a tests/gpu/attention_causal.tile --arch sm_90a)
  # FlashAttention as a DT schedule (reductions carried across the key loop), at tutorial 06's shape:
  # two wgmma dots, q copied by TMA and staged once, k and v in operand rings TMA fills, the output
  # stored by TMA: every box a 2-D box of one head of a 3-D tensor (the head the map's third coordinate)
  dtsim_plan_golden(attention_flash_dt_sm90a examples/attention_flash.dt --arch sm_90a --arg z_SIZE=32 --arg m_SIZE=4096 --arg l_SIZE=4096)
  dtsim_plan_golden(attention_flash128_dt_sm90a examples/attention_flash128.dt --arch sm_90a --arg z_SIZE=32 --arg m_SIZE=4096 --arg l_SIZE=4096)
  # causal (where(l <= m, ..., -inf)): the key loop bounded at the query block's end, as two loops (the
  # tiles below the diagonal unmasked, those across it masked), each a TMA ring, q staged by the first
  dtsim_plan_golden(attention_flash_causal_dt_sm90a examples/attention_flash_causal.dt --arch sm_90a --arg z_SIZE=32 --arg m_SIZE=4096 --arg l_SIZE=4096)
  dtsim_plan_golden(attention_flash128_causal_dt_sm90a examples/attention_flash128_causal.dt --arch sm_90a --arg z_SIZE=32 --arg m_SIZE=4096 --arg l_SIZE=4096)
  # TMA rings: f16 and bf16 operands as boxes of their tensors (masked edges as TMA's zero fill);
  # a 64-wide bf16 tile (32-wide A tiles keep the cp.async ring, the plan says why); with bounds
  # checks the checked copy keeps cp.async and the unchecked copy takes TMA
  dtsim_plan_golden(tma_matmul_sm90a tests/gpu/tma_matmul.tile --arch sm_90a)
  dtsim_plan_golden(matmul_bf16_sm90a examples/matmul_bf16.tile --arch sm_90a)
  dtsim_plan_golden(tma_matmul_hoisted_sm90a tests/gpu/tma_matmul.tile --arch sm_90a --sanitize=bounds)
  # TMA rings over tensors of rank 3 and 4: one and two outer coordinates (planes) per box
  dtsim_plan_golden(tma_planes_sm90a tests/gpu/tma_planes.tile --arch sm_90a)
  # TMA rings in 2-CTA clusters (--cluster): the grid axis, the shared operand and its half-height box;
  # with --warp-specialize one ring gets the producer warp and keeps its cluster
  dtsim_plan_golden(cluster_matmul_sm90a tests/gpu/cluster_matmul.tile --arch sm_90a --cluster)
  dtsim_plan_golden(cluster_matmul_ws_sm90a tests/gpu/cluster_matmul.tile --arch sm_90a --cluster --warp-specialize)
  # the grouped 128x256 bench matmul: clusters along axis 1 sharing B
  dtsim_plan_golden(matmul_f16_wide_cluster_sm90a bench/gpu/matmul_f16_wide.tile --arch sm_90a --cluster)
  # persistent grids (--persistent): the 128x256 bench matmul's 512 tiles (its 4-stage ring and the
  # exchange tile do not fit together: the epilogue is stored from the accumulator layout); the
  # warp-specialized tests, one with the exchange tile above the ring, one whose epilogue does not fit
  dtsim_plan_golden(matmul_f16_wide_persistent_sm90a bench/gpu/matmul_f16_wide.tile --arch sm_90a --persistent)
  dtsim_plan_golden(ws_matmul_persistent_sm90a tests/gpu/ws_matmul.tile --arch sm_90a --persistent)
  # schedule options written in the kernels (warp_specialize, persistent(4), cluster(2)): asked for by
  # the kernel; on sm_90 (no TMA ring: why not); refused by the --no- flags
  dtsim_plan_golden(sched_matmul_sm90a tests/gpu/sched_matmul.tile --arch sm_90a)
  dtsim_plan_golden(sched_matmul_sm90 tests/gpu/sched_matmul.tile --arch sm_90)
  dtsim_plan_golden(sched_matmul_refused_sm90a tests/gpu/sched_matmul.tile --arch sm_90a --no-warp-specialize --no-persistent --no-cluster)
  # a Triton kernel's tl.range(..., warp_specialize=True), read by dtsim's own .py reader
  dtsim_plan_golden(matmul_ws_py_sm90a tests/triton/matmul_ws.py --arch sm_90a --buf a_ptr=f16[300,1000] --buf b_ptr=f16[1000,320]
                    --buf c_ptr=f16[300,320] --arg M=300 --arg N=320 --arg K=1000 --arg num_warps=8 --arg num_stages=6
                    --grid "cdiv(M, BM), cdiv(N, BN)")
endif()
