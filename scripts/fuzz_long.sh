#!/usr/bin/env bash
# Long fuzzing runs: each libFuzzer target of build-asan/fuzz (scripts/sanitize.sh builds them) for
# SECONDS, one after the other on one core at the lowest priority, keeping what it finds.
# usage: scripts/fuzz_long.sh SECONDS [BUILD_DIR] [TARGET...]
# Writes, per target, LOGDIR/<target>.log (libFuzzer's output; set LOGDIR, default
# BUILD_DIR/fuzz/long) and crash inputs as LOGDIR/<target>-crash-*; prints a summary line per target:
# executions, coverage (edges), features, corpus size, crashes.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:?usage: scripts/fuzz_long.sh SECONDS [BUILD_DIR] [TARGET...]}
dir=${2:-build-asan}
shift $(( $# >= 2 ? 2 : 1 ))
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(tile dt npy condition interp py)
logdir=${LOGDIR:-$dir/fuzz/long}
mkdir -p "$logdir"
declare -A dict=([tile]=tile [dt]=dt [npy]=npy [condition]=condition [interp]=tile [py]=py)
declare -A seeds=([tile]="examples tests/errors/tile tests/longrun bench/kernels"
                  [dt]="examples tests/errors/dt docs/viz" [npy]="fuzz/corpus/npy"
                  [condition]="fuzz/corpus/condition" [interp]="examples tests/longrun bench/kernels"
                  [py]="examples/triton tests/errors/triton")
for t in "${targets[@]}"; do
  corpus=$dir/fuzz/corpus_$t
  mkdir -p "$corpus"
  start=$(mktemp)  # artifacts newer than this are this run's
  # shellcheck disable=SC2086
  nice -n 19 "$dir/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=60 -rss_limit_mb=4096 \
    -dict="fuzz/dict/${dict[$t]}.dict" -print_final_stats=1 -artifact_prefix="$logdir/$t-" \
    "$corpus" ${seeds[$t]} > "$logdir/$t.log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$logdir/$t.log" | tail -1 | grep -o '[0-9]*$')
  cov=$(grep -oE '(#[0-9]+).*cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$logdir/$t.log" | tail -1)
  # libFuzzer's findings (crash-, leak-, timeout-, oom-); slow-unit- files are inputs it merely flagged.
  crashes=$(find "$logdir" -maxdepth 1 -newer "$start" \( -name "$t-crash-*" -o -name "$t-leak-*" -o -name "$t-timeout-*" -o -name "$t-oom-*" \) | wc -l)
  slow=$(find "$logdir" -maxdepth 1 -newer "$start" -name "$t-slow-unit-*" | wc -l)
  rm -f "$start"
  echo "fuzz_$t: ${secs} s, exit $rc, ${execs:-?} executions, last status: ${cov:-?}, ${crashes} finding(s), ${slow} slow input(s)"
done
