#!/usr/bin/env bash
# Nightly GPU run (on a machine with a CUDA GPU, from the repository root):
#   scripts/nightly-gpu.sh [BUILD_DIR]      (default build-gpu; logs under $OUT or ./nightly-out)
#   DTSIM_PREBUILT=1 scripts/nightly-gpu.sh BUILD_DIR   uses binaries built elsewhere (no configure/build;
#                                                        the gpu suite then runs the difftest directly)
#   DTSIM_ANCHORS=DIR   folder holding the Triton/PyTorch anchor scripts (default shared/anchors)
#   DTSIM_TRITON_TRIALS=N   cases per example of the Triton sweep (default 5)
#   DTSIM_TUNE_BUDGET=N     also run the tune experiment, N schedules per operation (minutes)
#   DTSIM_LIGER_PATH=DIR    a folder holding the liger_kernel package (when python3 cannot import it):
#                           Liger-Kernel's ops (tests/compat) run on backend='cuda' and under Triton itself
#   DTSIM_TUTORIALS=DIR     a folder holding copies of Triton's tutorials (*.py, device 'cuda'): each runs
#                           under `python -m dtsim --backend=cuda` (its own checks against torch decide);
#                           the tune experiment adds their kernels as baselines
# Builds Release, runs `ctest -L gpu`, a difftest sweep (>= 1000 cases over all examples), the
# Triton sweep (`difftest --oracle=triton`: every example's emitted Triton module against the
# interpreter), compute-sanitizer memcheck on every example, the interpreter benchmark (its thread
# scaling, and against Triton's interpreter on the same CPU: bench/interp_vs_triton.py), the Python
# package (its GPU tests, and the examples/triton kernels launched from Python on dtsim and under
# TRITON_INTERPRET=1: bench/python_vs_triton_interp.py) when BUILD_DIR/python holds it, the GPU
# table (bench/gpu_table.py: dtsim vs Triton vs torch), the tune experiment (bench/tune_experiment.py,
# when DTSIM_TUNE_BUDGET is set) and the anchors if present, then prints a
# summary table. Exit status: 0 when every step passed.
set -u
BUILD=${1:-build-gpu}
LOGS=${OUT:-./nightly-out}
mkdir -p "$LOGS"
declare -a NAMES RESULTS
step() {  # step NAME LOGFILE COMMAND...
  local name=$1 log=$2; shift 2
  echo "== $name (log: $LOGS/$log)"
  if "$@" >"$LOGS/$log" 2>&1; then RESULTS+=("PASS"); else RESULTS+=("FAIL($?)"); fi
  NAMES+=("$name")
}
EXAMPLES=(examples/*.tile examples/*.dt)
DTSIM="$BUILD/dtsim"
if [ "${DTSIM_PREBUILT:-0}" = 1 ]; then
  gpu_suite() {  # what `ctest -L gpu` runs: every example, interpreter vs GPU
    local rc=0
    for f in "${EXAMPLES[@]}"; do "$DTSIM" difftest "$f" --trials 3 || rc=1; done
    return $rc
  }
  step "gpu suite (prebuilt)" ctest-gpu.log gpu_suite
else
  step "configure" configure.log cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
  step "build" build.log cmake --build "$BUILD" -j "$(nproc)"
  step "ctest -L gpu" ctest-gpu.log ctest --test-dir "$BUILD" -L gpu --output-on-failure
fi
TRIALS=$(( (1000 + ${#EXAMPLES[@]} - 1) / ${#EXAMPLES[@]} ))
sweep() {  # examples in parallel (DTSIM_JOBS at a time, default 8); each example's log, then totals
  local jobs=${DTSIM_JOBS:-8} seed
  seed=$(date +%Y%m%d)
  mkdir -p "$LOGS/sweep"
  printf '%s\n' "${EXAMPLES[@]}" | xargs -P "$jobs" -I{} sh -c \
    '"$0" difftest "$1" --trials "$2" --seed "$3" > "$4/sweep/$(basename "$1").log" 2>&1; echo $? > "$4/sweep/$(basename "$1").rc"' \
    "$DTSIM" {} "$TRIALS" "$seed" "$LOGS"
  local rc=0 f
  for f in "${EXAMPLES[@]}"; do
    echo "-- $f ($TRIALS cases): exit $(cat "$LOGS/sweep/$(basename "$f").rc")"
    tail -n 3 "$LOGS/sweep/$(basename "$f").log"
    [ "$(cat "$LOGS/sweep/$(basename "$f").rc")" = 0 ] || rc=1
  done
  return $rc
}
step "difftest sweep (${#EXAMPLES[@]} x $TRIALS cases)" difftest-sweep.log sweep
triton_sweep() {  # every example, interpreter vs the emitted Triton module on the GPU; SKIPPED is a failure here
  local rc=0 f out n=${DTSIM_TRITON_TRIALS:-5}
  for f in "${EXAMPLES[@]}"; do
    out=$("$DTSIM" difftest "$f" --oracle=triton --trials "$n" --seed "$(date +%Y%m%d)" 2>&1) || rc=1
    printf '%s\n' "$out" | tail -n 3
    case "$out" in *SKIPPED*) rc=1 ;; esac
  done
  return $rc
}
step "Triton sweep (difftest --oracle=triton)" triton-sweep.log triton_sweep
memcheck() {
  local rc=0 cs
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  [ -x "$cs" ] || { echo "compute-sanitizer not found"; return 1; }
  for f in "${EXAMPLES[@]}"; do
    echo "-- $f"
    "$cs" --tool memcheck --error-exitcode 3 "$DTSIM" run "$f" --backend=cuda || rc=1
  done
  return $rc
}
step "compute-sanitizer memcheck" memcheck.log memcheck
if [ -x "$BUILD/dtsim_bench" ] || [ -x "$BUILD/bench/dtsim_bench" ]; then
  BENCH=$( [ -x "$BUILD/dtsim_bench" ] && echo "$BUILD/dtsim_bench" || echo "$BUILD/bench/dtsim_bench")
  step "interpreter benchmark" bench.log "$BENCH"
  step "interpreter thread scaling" interp-scaling.log bench/interp_scaling.sh "$BENCH"
  step "interpreter vs Triton's interpreter" interp-vs-triton.log env TRITON_INTERPRET=1 python3 bench/interp_vs_triton.py "$BENCH"
fi
if [ -d "$BUILD/python/dtsim" ]; then  # the Python package (its GPU tests are in `ctest -L gpu` when built here)
  if [ "${DTSIM_PREBUILT:-0}" = 1 ]; then
    py_gpu() {
      local rc=0 t r
      for t in cuda_backend cuda_device_arrays torch_cpu; do
        PYTHONPATH="$BUILD/python" DTSIM_STANDIN=1 python3 -m dtsim "tests/python/$t.py"; r=$?
        echo "-- $t: exit $r"
        [ "$r" = 0 ] || rc=1
      done
      return $rc
    }
    step "Python package on the GPU" python-gpu.log py_gpu
  fi
  ttir_gpu() {  # every tests/ttir script, read by the installed Triton's frontend, on dtsim's CUDA backend
    # (exit 77: the script checks what only the interpreter does, or what this Triton's frontend refuses)
    local rc=0 t r pass=0 skip=0 total=0 py
    py="$(cd "$BUILD/python" && pwd)"
    for t in tests/ttir/*.py; do
      m=$(basename "$t" .py)
      grep -qE "^(from $m import|import $m\b)" tests/ttir/*.py && continue  # a module the scripts import
      (cd "$(dirname "$t")" && PYTHONPATH="$py" timeout 300 python3 -W ignore -m dtsim --backend=cuda "$(basename "$t")"); r=$?
      echo "-- $t on backend=cuda: exit $r"
      total=$((total + 1))
      if [ "$r" = 0 ]; then pass=$((pass + 1)); elif [ "$r" = 77 ]; then skip=$((skip + 1)); else rc=1; fi
    done
    echo "Triton-frontend scripts on backend=cuda: $pass of $total passed, $skip skipped"
    return $rc
  }
  step "Triton kernels (TTIR) on backend=cuda" ttir-gpu.log ttir_gpu
  liger_gpu() {  # Liger-Kernel's own ops through tests/compat's drivers, tensors on the GPU; "N PASS" counts
    local py rc=0
    py="$(cd "$BUILD/python" && pwd)"
    echo "-- dtsim, backend=cuda"
    PYTHONPATH="${DTSIM_LIGER_PATH:+$DTSIM_LIGER_PATH:}${PYTHONPATH:-}" python3 tests/compat/run_liger.py \
      --python python3 --pythonpath "$py" --device cuda || rc=1
    echo "-- Triton itself (the baseline; its failures are not dtsim's)"
    PYTHONPATH="${DTSIM_LIGER_PATH:+$DTSIM_LIGER_PATH:}${PYTHONPATH:-}" python3 tests/compat/run_liger.py \
      --python python3 --device cuda --triton || true
    return $rc
  }
  if PYTHONPATH="${DTSIM_LIGER_PATH:+$DTSIM_LIGER_PATH:}${PYTHONPATH:-}" python3 -c "import liger_kernel" 2>/dev/null; then
    step "Liger-Kernel ops on backend=cuda" liger-gpu.log liger_gpu
  fi
  tutorials_gpu() {  # each tutorial copy, as its author wrote it, on dtsim's CUDA backend
    local py t r pass=0 total=0 rc=0
    py="$(cd "$BUILD/python" && pwd)"
    for t in "$DTSIM_TUTORIALS"/*.py; do
      (cd "$(dirname "$t")" && PYTHONPATH="$py" timeout "${DTSIM_TUTORIAL_TIMEOUT:-600}" \
        python3 -W ignore -m dtsim --backend=cuda "$(basename "$t")"); r=$?
      echo "-- $(basename "$t") on backend=cuda: exit $r"
      total=$((total + 1)); [ "$r" = 0 ] && pass=$((pass + 1)) || rc=1
    done
    echo "Triton tutorials on backend=cuda: $pass of $total passed"
    return $rc
  }
  if [ -n "${DTSIM_TUTORIALS:-}" ]; then
    step "Triton tutorials on backend=cuda" tutorials-gpu.log tutorials_gpu
  fi
  step "Python scripts: dtsim vs TRITON_INTERPRET=1" python-vs-triton.log \
    env PYTHONPATH="$BUILD/python" python3 bench/python_vs_triton_interp.py
fi
step "GPU table (dtsim vs Triton vs torch)" gpu-table.log python3 bench/gpu_table.py "$DTSIM"
if [ -n "${DTSIM_TUNE_BUDGET:-}" ]; then  # opt-in: torch.compile and the searches take minutes
  step "tune experiment (budget $DTSIM_TUNE_BUDGET)" tune-experiment.log \
    python3 bench/tune_experiment.py "$DTSIM" --budget "$DTSIM_TUNE_BUDGET" --out-dir "$(mktemp -d)" \
      ${DTSIM_TUTORIALS:+--tutorials "$DTSIM_TUTORIALS"}
fi
ANCHORS=${DTSIM_ANCHORS:-shared/anchors}
if [ -f "$ANCHORS/interp_anchor.py" ]; then
  step "anchor: Triton interpreter" anchor-interp.log env TRITON_INTERPRET=1 python3 "$ANCHORS/interp_anchor.py"
fi
if [ -f "$ANCHORS/gpu_anchor.py" ]; then
  step "anchor: Triton/torch on the GPU" anchor-gpu.log python3 "$ANCHORS/gpu_anchor.py"
fi
echo
printf '%-45s %s\n' "step" "result" | tee "$LOGS/summary.txt"
status=0
for i in "${!NAMES[@]}"; do
  printf '%-45s %s\n' "${NAMES[$i]}" "${RESULTS[$i]}" | tee -a "$LOGS/summary.txt"
  [ "${RESULTS[$i]}" = PASS ] || status=1
done
exit $status
