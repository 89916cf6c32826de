#!/bin/sh
# Every example and tests/gpu/*.tile kernel that the interpreter runs without a conflict finding runs
# without one on the GPU under --sanitize=conflicts; exit 77 (CTest skip) without a CUDA driver/GPU.
#   no_conflicts_or_skip.sh DTSIM SOURCE_DIR
dtsim=$1; src=$2
probe=$("$dtsim" run --backend=cuda "$src/examples/add.tile" 2>&1)
case "$probe" in *"no CUDA driver found"*|*"no GPU"*|*"too old"*) echo "SKIPPED: $probe"; exit 77 ;; esac
rc=0; n=0
for f in "$src"/examples/*.tile "$src"/examples/*.dt "$src"/tests/gpu/*.tile; do
  want=$("$dtsim" run "$f" --sanitize=conflicts 2>&1 >/dev/null)
  case "$want" in *"both store"*|*"atomically"*) continue ;; esac
  got=$("$dtsim" run --backend=cuda --sanitize=conflicts "$f" 2>&1 >/dev/null); r=$?
  n=$((n + 1))
  case "$got" in
    *"both store"*|*"atomically"*) echo "FALSE CONFLICT in $f:"; printf '%s\n' "$got"; rc=1 ;;
    *) [ $r = 0 ] || { echo "$f: exit $r"; printf '%s\n' "$got"; rc=1; } ;;
  esac
done
echo "$n kernels: no conflict reported on the GPU where the interpreter reports none"
exit $rc
