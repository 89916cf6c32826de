#!/usr/bin/env bash
# Installs what building and testing dtsim needs on Debian/Ubuntu (apt-get), skipping packages that
# are already installed. Safe to run twice; does nothing when everything is present.
set -euo pipefail

# clang, libomp-dev, libclang-rt-dev: the sanitizer and fuzzing build (scripts/sanitize.sh).
packages=(cmake g++ libxtensor-dev xtl-dev libxsimd-dev doctest-dev libreadline-dev python3 python3-dev python3-numpy python3-setuptools python3-pip python3-venv pybind11-dev tmux clang libomp-dev libclang-rt-dev)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

install_packages() {
  if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all build dependencies are installed"
    return 0
  fi
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo_cmd=(sudo)
    else
      echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
      exit 1
    fi
  fi
  "${sudo_cmd[@]}" apt-get update
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  echo "setup: done"
}
install_packages

# Triton from PyPI, for the tests of the TTIR frontend (tests/ttir: kernels read by Triton's own
# frontend): a venv in .cache/triton-venv on the system's python3 (whose numpy and headers the
# Python module is built for). DTSIM_NO_TRITON=1 skips it (those tests then report skipped).
# install_triton VERSION VENV WHAT: triton==VERSION in VENV (a venv on the system's python3), unless
# it is there already; WHAT names the tests that are skipped without it.
install_triton() {
  local version="$1" dir="$2" what="$3"
  if "$dir/bin/python" -c "import triton, sys; sys.exit(triton.__version__ != '$version')" 2>/dev/null; then
    echo "setup: triton $version is installed in $dir"
  elif /usr/bin/python3 -m venv --system-site-packages "$dir" && "$dir/bin/pip" install -q "triton==$version"; then
    echo "setup: installed triton $version in $dir"
  else
    echo "setup: could not install triton $version in $dir: $what will be skipped" >&2
  fi
}
cache="$(cd "$(dirname "$0")/.." && pwd)/.cache"
if [ "${DTSIM_NO_TRITON:-0}" != 1 ]; then
  install_triton "${DTSIM_TRITON_VERSION:-3.9.0}" "$cache/triton-venv" "the TTIR frontend's tests"
  # An older Triton beside it (tests/ttir's old_triton tests: its launch API, and block pointers,
  # which Triton 3.9's frontend refuses).
  install_triton "${DTSIM_TRITON_OLD_VERSION:-3.8.0}" "$cache/triton38-venv" "the old_triton tests"
fi
