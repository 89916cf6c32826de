#!/usr/bin/env bash
# Installs what building and testing dtsim needs on Debian/Ubuntu (apt-get), skipping packages that
# are already installed. Safe to run twice; does nothing when everything is present.
set -euo pipefail

# clang, libomp-dev, libclang-rt-dev: the sanitizer and fuzzing build (scripts/sanitize.sh).
packages=(cmake g++ libxtensor-dev xtl-dev libxsimd-dev doctest-dev libreadline-dev python3 python3-dev python3-numpy python3-setuptools python3-pip pybind11-dev tmux clang libomp-dev libclang-rt-dev)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all build dependencies are installed"
  exit 0
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
