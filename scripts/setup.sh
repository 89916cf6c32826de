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
triton_version="${DTSIM_TRITON_VERSION:-3.9.0}"
venv="$(cd "$(dirname "$0")/.." && pwd)/.cache/triton-venv"
if [ "${DTSIM_NO_TRITON:-0}" != 1 ]; then
  if "$venv/bin/python" -c "import triton, sys; sys.exit(triton.__version__ != '$triton_version')" 2>/dev/null; then
    echo "setup: triton $triton_version is installed in $venv"
  elif /usr/bin/python3 -m venv --system-site-packages "$venv" && "$venv/bin/pip" install -q "triton==$triton_version"; then
    echo "setup: installed triton $triton_version in $venv"
  else
    echo "setup: could not install triton $triton_version in $venv: the TTIR frontend's tests will be skipped" >&2
  fi
  # An older Triton beside it (tests/ttir's old_triton tests: its launch API, and block pointers,
  # which Triton 3.9's frontend refuses).
  old_version="${DTSIM_TRITON_OLD_VERSION:-3.8.0}"
  old_venv="$(dirname "$venv")/triton38-venv"
  if "$old_venv/bin/python" -c "import triton, sys; sys.exit(triton.__version__ != '$old_version')" 2>/dev/null; then
    echo "setup: triton $old_version is installed in $old_venv"
  elif /usr/bin/python3 -m venv --system-site-packages "$old_venv" && "$old_venv/bin/pip" install -q "triton==$old_version"; then
    echo "setup: installed triton $old_version in $old_venv"
  else
    echo "setup: could not install triton $old_version in $old_venv: the old_triton tests will be skipped" >&2
  fi
fi
