#!/bin/sh
# Cost of --sanitize=bounds on the GPU: `dtsim bench --backend=cuda` of memory-bound kernels and
# matmuls, unchecked and bounds-checked, side by side. Usage: scripts/gpu-checks-overhead.sh [BUILD_DIR]
# Writes the two bench outputs per kernel and a table (ms unchecked, ms checked, ratio) to stdout.
set -eu
build=${1:-build}
dtsim=$build/dtsim
for f in examples/add.tile examples/softmax.tile examples/rgb2grey.tile examples/rmsnorm.dt examples/matmul.tile \
         examples/matmul_f16.tile examples/mm.dt; do
  plain=$("$dtsim" bench --backend=cuda "$f" --sanitize=none 2>&1) || { echo "$f: bench failed"; echo "$plain"; continue; }
  checked=$("$dtsim" bench --backend=cuda "$f" --sanitize=bounds 2>&1) || { echo "$f: checked bench failed"; echo "$checked"; continue; }
  printf '== %s unchecked\n%s\n== %s --sanitize=bounds\n%s\n' "$f" "$plain" "$f" "$checked"
  # The first "N ms" figure of each output (the first kernel's median).
  a=$(printf '%s\n' "$plain" | grep -o '[0-9.]* ms' | head -1 | cut -d' ' -f1)
  b=$(printf '%s\n' "$checked" | grep -o '[0-9.]* ms' | head -1 | cut -d' ' -f1)
  [ -n "$a" ] && [ -n "$b" ] && awk -v f="$f" -v a="$a" -v b="$b" 'BEGIN { printf "%-28s %10s ms %10s ms  %.3fx\n", f, a, b, b / a }' >> /tmp/dtsim-overhead.$$
done
echo "== overhead of --sanitize=bounds (unchecked, checked, ratio)"
cat /tmp/dtsim-overhead.$$ 2>/dev/null; rm -f /tmp/dtsim-overhead.$$
