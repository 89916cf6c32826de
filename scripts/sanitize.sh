#!/usr/bin/env bash
# The sanitizer part of the test command: builds the whole project a second time in build-asan/
# with clang, AddressSanitizer and UndefinedBehaviorSanitizer (-fno-sanitize-recover: the first
# report fails the test) and libFuzzer coverage, then runs the unit, errors, golden and e2e suites
# (the debugger sessions are in e2e) and the fuzz label (each fuzz target for DTSIM_FUZZ_SECONDS,
# default 10 s, and every kept crash input) there. The .dt examples run at 1 size set from --arg
# here (DTSIM_SIZE_SETS, default 1; the GCC build runs 5); scripts/long.sh runs the longer version.
# The code these tests run only briefly compiles at -O0, the rest at -O1 (DTSIM_SANITIZE_COLD_O0 in
# CMakeLists.txt says which).
# usage: scripts/sanitize.sh [BUILD_DIR]   (default build-asan; DTSIM_FUZZ_SECONDS=N to change the
# fuzzing time per target, DTSIM_SIZE_SETS=N the size sets of example-sizes/*)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-asan}
cmake -S . -B "$dir" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
  -DDTSIM_SANITIZE=ON -DDTSIM_FUZZ=ON -DDTSIM_WERROR=OFF -DDTSIM_FUZZ_SECONDS="${DTSIM_FUZZ_SECONDS:-10}" \
  -DDTSIM_SIZE_SETS="${DTSIM_SIZE_SETS:-1}"
cmake --build "$dir" -j2
# Leaks are reported too, except inside libNVVM (scripts/lsan.supp).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The python/ tests are left out here: the instrumented _dtsim module cannot be loaded into an
# uninstrumented python3 without preloading the sanitizer runtime (they run in the GCC build).
ctest --test-dir "$dir" --output-on-failure -j2 -L 'unit|errors|golden|e2e|fuzz' -E '^python/'
