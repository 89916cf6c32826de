#!/usr/bin/env bash
# The compatibility suite: Liger-Kernel's own ops, launched through their public autograd Functions by the
# drivers in tests/compat/liger/cases.py, run under `python -m dtsim` and compared with torch.
#
# It needs torch, triton and liger-kernel, which it installs from PyPI into a cache venv on first use
# (torch's PyPI wheel runs on CPU-only machines too; DTSIM_COMPAT_TORCH_INDEX=URL adds an index such as
# https://download.pytorch.org/whl/cpu for its smaller CPU build):
#   $DTSIM_COMPAT_VENV  (default: .cache/compat-venv in the repository; git-ignored)
# The venv is made from the interpreter the build's Python module was built for (Python3_EXECUTABLE in
# the build's CMakeCache.txt), with --system-site-packages so that numpy comes from the system as it does
# for the module. The module (target _dtsim) is built when the build folder lacks it.
#
# usage: scripts/compat.sh [--build DIR] [--python PY] [--setup-only | --no-setup] [--interpret] [--verbose] [CASE...]
#   --build DIR    the CMake build folder (default: build)
#   --python PY    the interpreter the module was built for (default: the one in DIR/CMakeCache.txt)
#   --setup-only   create/complete the venv and build the module, run nothing
#   --no-setup     run with the venv as it is (what each ctest case does after the compat/setup test)
#   --interpret    run the cases under TRITON_INTERPRET=1 instead of dtsim (for comparison)
# Versions: DTSIM_COMPAT_TRITON (3.9.0), DTSIM_COMPAT_LIGER (0.8.5), DTSIM_COMPAT_TORCH (2.15.0).
# Results are compared with tests/compat/expected_failures.txt (see tests/compat/run_liger.py).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build"
base_python=""
setup=1
run=1
runner_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --python) base_python="$2"; shift 2 ;;
    --setup-only) run=0; shift ;;
    --no-setup) setup=0; shift ;;
    --interpret|--verbose) runner_args+=("$1"); shift ;;
    -h|--help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
    -*) echo "compat.sh: unknown option $1" >&2; exit 2 ;;
    *) runner_args+=("$1"); shift ;;
  esac
done

venv="${DTSIM_COMPAT_VENV:-$root/.cache/compat-venv}"
triton_version="${DTSIM_COMPAT_TRITON:-3.9.0}"
liger_version="${DTSIM_COMPAT_LIGER:-0.8.5}"
torch_version="${DTSIM_COMPAT_TORCH:-2.15.0}"

if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "compat.sh: $build is not a configured build folder (cmake -S . -B build first, or --build DIR)" >&2
  exit 2
fi
# the interpreter CMake found for the module (find_package(Python3) caches it as _Python3_EXECUTABLE)
base_python="${base_python:-$(sed -n 's/^_\{0,1\}Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt" | head -n1)}"
if [ -z "$base_python" ] || [ ! -x "$base_python" ]; then
  echo "compat.sh: $build has no Python module configured (needs python3-dev and pybind11; see scripts/setup.sh)" >&2
  exit 2
fi

have_packages() {
  "$venv/bin/python" - "$triton_version" "$liger_version" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
import torch, triton, liger_kernel, packaging  # noqa: F401
sys.exit(0 if (triton.__version__ == sys.argv[1] and version("liger-kernel") == sys.argv[2]) else 1)
EOF
}

if [ "$setup" = 1 ]; then
  if [ ! -x "$venv/bin/python" ]; then
    echo "compat.sh: creating $venv from $base_python"
    mkdir -p "$(dirname "$venv")"
    "$base_python" -m venv --system-site-packages "$venv"
  fi
  if have_packages; then
    echo "compat.sh: torch, triton $triton_version and liger-kernel $liger_version are installed in $venv"
  else
    echo "compat.sh: installing torch $torch_version, triton $triton_version, liger-kernel $liger_version into $venv"
    index=()
    if [ -n "${DTSIM_COMPAT_TORCH_INDEX:-}" ]; then index=(--extra-index-url "$DTSIM_COMPAT_TORCH_INDEX"); fi
    "$venv/bin/pip" install -q --disable-pip-version-check ${index[@]+"${index[@]}"} \
      "torch==$torch_version" "triton==$triton_version" "liger-kernel==$liger_version" packaging
    have_packages || { echo "compat.sh: the packages do not import in $venv after installing them" >&2; exit 1; }
  fi
  if ! PYTHONPATH="$build/python" "$venv/bin/python" -c "import dtsim._dtsim" 2>/dev/null; then
    echo "compat.sh: building the Python module (target _dtsim) in $build"
    cmake --build "$build" --target _dtsim -j2
    PYTHONPATH="$build/python" "$venv/bin/python" -c "import dtsim._dtsim" || {
      echo "compat.sh: $build/python/dtsim does not import under $venv/bin/python" >&2; exit 1; }
  fi
fi

if [ "$run" = 1 ]; then
  if [ ! -x "$venv/bin/python" ]; then
    echo "compat.sh: no venv at $venv (run scripts/compat.sh --setup-only first)" >&2
    exit 1
  fi
  export TRITON_CACHE_DIR="${TRITON_CACHE_DIR:-$build/triton-cache}"
  exec "$base_python" "$root/tests/compat/run_liger.py" --python "$venv/bin/python" --pythonpath "$build/python" \
    ${runner_args[@]+"${runner_args[@]}"}
fi
