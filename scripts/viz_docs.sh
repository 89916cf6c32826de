#!/usr/bin/env bash
# Draws the pictures of docs/viz.md: the slides' map examples and two planted bugs, as SVG with
# `dtsim viz`, then PNG with rsvg-convert (Debian package librsvg2-bin).
# usage: scripts/viz_docs.sh [DTSIM]   (default build/dtsim; run from the repository root)
set -euo pipefail
DTSIM=${1:-build/dtsim}
command -v rsvg-convert >/dev/null || { echo "viz_docs.sh: rsvg-convert not found (apt-get install librsvg2-bin)" >&2; exit 2; }
out=docs/img
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
draw() {  # NAME ARGS...
  local name=$1
  shift
  "$DTSIM" viz "$@" -o "$tmp/$name.svg"
  rsvg-convert "$tmp/$name.svg" -o "$out/viz_$name.png"
}
draw map_xy docs/viz/map_xy.dt
draw map_yx docs/viz/map_yx.dt
draw map_xi docs/viz/map_xi.dt
draw overlap examples/bugs/overlap.tile
draw copy_pid_n examples/bugs/copy_pid_n.tile
draw overlap_pid examples/bugs/overlap.tile --pid 1,1
echo "viz_docs.sh: wrote $out/viz_*.png"
