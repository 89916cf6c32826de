#!/bin/sh
# GPU check of the register cap for hoisted bounds checks; exit 77 (CTest skip) without a CUDA driver/GPU.
#   register_cap_or_skip.sh DTSIM SRC
# The Triton-style f16 matmul (8 warps, 3 stages, pipelined: two CTAs per SM by shared memory) fits in 128
# registers unchecked; bounds-checked it is capped there, and its result still matches the
# interpreter. The f32 matmul tile needs more than 128 unchecked: no cap.
dtsim=$1; src=$2
probe=$("$dtsim" bench --backend=cuda "$src/examples/add.tile" --reps 1 2>&1)
case "$probe" in *SKIPPED*) echo "$probe"; exit 77 ;; esac
mm=$("$dtsim" bench "$src/examples/triton/matmul_act.py" --buf a_ptr=f16[1000,600] --buf b_ptr=f16[600,704] --buf c_ptr=f16[1000,704] \
  --arg M=1000 --arg N=704 --arg K=600 --arg BM=128 --arg BN=128 --arg BK=64 --arg num_warps=8 --arg num_stages=3 \
  --grid 'cdiv(M, BM) * cdiv(N, BN)' --sanitize=bounds --reps 5 2>&1); rc=$?
printf '%s\n' "$mm"
[ $rc -eq 0 ] || exit 1
printf '%s\n' "$mm" | grep -q "resources 128 registers a thread, .* (registers capped at 128 " || { echo "FAIL: no cap at 128"; exit 1; }
printf '%s\n' "$mm" | grep -q "first run matches the interpreter" || { echo "FAIL: not checked against the interpreter"; exit 1; }
f32=$("$dtsim" bench "$src/bench/gpu/matmul_f32.tile" --arg M=512 --arg N=512 --arg K=512 --sanitize=bounds --reps 5 2>&1); rc=$?
printf '%s\n' "$f32"
[ $rc -eq 0 ] && printf '%s\n' "$f32" | grep -q "resources " && ! printf '%s\n' "$f32" | grep -q "capped" || { echo "FAIL: f32 matmul capped"; exit 1; }
