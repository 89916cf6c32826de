#!/usr/bin/env bash
# Thread scaling of the interpreter: each dtsim_bench workload at 1, 2, 4, ... threads (sanitizer
# off, then all at the largest count), best of REPS wall times, and the speedup over 1 thread.
#   bench/interp_scaling.sh PATH/TO/dtsim_bench [MAX_THREADS (default: nproc)] [REPS (default 10)]
# Run it on an idle host: on a shared one the extra threads wait for a core and say nothing.
set -eu
B=$1
MAX=${2:-$(nproc)}
REPS=${3:-10}
export DTSIM_BENCH_KERNELS=${DTSIM_BENCH_KERNELS:-$(cd "$(dirname "$0")" && pwd)/kernels}
# What the host gives this process: a CPU quota below the thread count (a container's cpu.max)
# makes OpenMP's spinning workers wait for one another, and the figures say nothing about scaling.
quota=$(cat /sys/fs/cgroup/cpu.max 2>/dev/null ||
        echo "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us 2>/dev/null)")
echo "host: nproc $(nproc), $(grep -c ^processor /proc/cpuinfo) logical CPUs, cgroup CPU quota and period (us): $quota," \
     "load: $(cut -d' ' -f1-3 /proc/loadavg)"
ms() { "$B" --only "$1" --profile "$2" "$3" "$REPS" | sed -n 's/.*best of [0-9]*: \([0-9.]*\) ms/\1/p'; }
printf '%-24s %8s' workload 1T
t=2; while [ "$t" -le "$MAX" ]; do printf ' %14s' "${t}T (x)"; t=$((t * 2)); done
printf ' %16s\n' "${MAX}T all (x)"
for w in "add n=2^20" "add n=2^16" softmax "matmul 256" "matmul 512" layernorm rmsnorm "mm.dt"; do
  one=$(ms "$w" 1 none)
  printf '%-24s %8.2f' "$w" "$one"
  t=2
  while [ "$t" -le "$MAX" ]; do
    v=$(ms "$w" "$t" none)
    printf ' %7.2f (%4.1f)' "$v" "$(awk -v a="$one" -v b="$v" 'BEGIN { print a / b }')"
    t=$((t * 2))
  done
  v=$(ms "$w" "$MAX" all)
  printf ' %9.2f (%4.1f)\n' "$v" "$(awk -v a="$one" -v b="$v" 'BEGIN { print a / b }')"
done
