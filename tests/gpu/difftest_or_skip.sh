#!/bin/sh
# Runs `dtsim difftest FILE --trials 3 [FLAG...]`; exits 77 (CTest skip) when the GPU comparison was skipped.
d=$1; f=$2; shift 2
out=$("$d" difftest "$f" --trials 3 "$@" 2>&1); rc=$?
printf '%s\n' "$out"
[ $rc -ne 0 ] && exit $rc
case "$out" in *SKIPPED*) exit 77 ;; esac
exit 0
