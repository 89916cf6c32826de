#!/usr/bin/env bash
# The longer sanitizer run, outside the test command's time budget (README): scripts/sanitize.sh with
# each fuzz target for 300 s instead of 10 and every .dt example at 5 size sets from --arg under
# ASan instead of 1 (what the GCC build's ctest runs). Arguments go to scripts/sanitize.sh.
# usage: scripts/long.sh [BUILD_DIR]   (DTSIM_FUZZ_SECONDS, DTSIM_SIZE_SETS override the two)
set -euo pipefail
cd "$(dirname "$0")/.."
DTSIM_FUZZ_SECONDS=${DTSIM_FUZZ_SECONDS:-300} DTSIM_SIZE_SETS=${DTSIM_SIZE_SETS:-5} exec ./scripts/sanitize.sh "$@"
