#!/bin/sh
# GPU checks of located findings and fault survival; exit 77 (CTest skip) without a CUDA driver/GPU.
#   located_or_skip.sh DTSIM bug FILE [ARGS...]  the GPU run (--sanitize=bounds, the default) reports
#                                            the interpreter's first finding: kind, line, text (or none, as it)
#   located_or_skip.sh DTSIM conflict FILE [ARGS...]  under --sanitize=conflicts the GPU reports the
#                                            interpreter's first finding: same line, kind, buffer and,
#                                            apart from which instances raced first, the same text
#   located_or_skip.sh DTSIM assert FILE ARGS...  a failing assert: the GPU prints the interpreter's text
#   located_or_skip.sh DTSIM fault FILE ARGS...   an unchecked out-of-bounds kernel faults: the message
#                                            names the kernel and suggests --sanitize=bounds
#   located_or_skip.sh DTSIM sweep FILE ARGS...   difftest over a faulting kernel finishes every trial
dtsim=$1; mode=$2; file=$3; shift 3
probe=$("$dtsim" run --backend=cuda "$file" "$@" 2>&1)
case "$probe" in *"no CUDA driver found"*|*"no GPU"*|*"too old"*) echo "SKIPPED: $probe"; exit 77 ;; esac
head_line() { grep -m1 ': error: ' | sed 's/^\(.*: error: [^:]*\).*/\1/'; }
case $mode in
  bug)
    # The GPU reports the failing instance with the smallest pid, as the interpreter (stopping at its
    # first finding) does: the same finding text, apart from the count of failing instances and the
    # enclosing loops' iterations ("  in loop k = 80"), which only the interpreter knows.
    want=$("$dtsim" run "$file" "$@" --sanitize=bounds 2>&1 >/dev/null); want_rc=$?
    want=$(printf '%s\n' "$want" | grep -v -e '^  in loop ' -e '^  in a while loop')
    got=$("$dtsim" run --backend=cuda --sanitize=bounds "$file" "$@" 2>&1 >/dev/null | grep -v 'program instances of kernel')
    "$dtsim" run --backend=cuda --sanitize=bounds "$file" "$@" >/dev/null 2>&1; got_rc=$?
    printf 'interpreter (exit %s):\n%s\ngpu (exit %s):\n%s\n' "$want_rc" "$want" "$got_rc" "$got"
    [ "$(printf '%s\n' "$want" | head_line)" = "$(printf '%s\n' "$got" | head_line)" ] && [ "$want_rc" = "$got_rc" ] &&
      [ "$want" = "$got" ] ;;
  conflict)
    # Which instance claims an element first is the GPU's choice: pids and elements are masked.
    mask() { grep -E ': (error|note): ' | sed -e 's/\[[0-9, ]*\]/[P]/g' -e 's/\([a-z_]\)\[[0-9]*\]/\1[E]/g'; }
    want=$("$dtsim" run "$file" "$@" --sanitize=conflicts 2>&1 >/dev/null); want_rc=$?
    got=$("$dtsim" run --backend=cuda --sanitize=conflicts "$file" "$@" 2>&1 >/dev/null); got_rc=$?
    printf 'interpreter (exit %s):\n%s\ngpu (exit %s):\n%s\n' "$want_rc" "$want" "$got_rc" "$got"
    [ -n "$(printf '%s\n' "$want" | mask)" ] && [ "$(printf '%s\n' "$want" | mask)" = "$(printf '%s\n' "$got" | mask)" ] &&
      [ "$want_rc" = "$got_rc" ] ;;
  assert)
    want=$("$dtsim" run "$file" "$@" --sanitize=none 2>&1 >/dev/null)
    got=$("$dtsim" run --backend=cuda "$file" "$@" 2>&1 >/dev/null | grep -v 'program instances of kernel'); rc=$?
    printf 'interpreter:\n%s\ngpu:\n%s\n' "$want" "$got"
    [ -n "$want" ] && [ "$want" = "$got" ] ;;
  fault)
    out=$("$dtsim" run --backend=cuda --sanitize=none "$file" "$@" 2>&1); rc=$?
    printf '%s\n' "$out"
    [ $rc -eq 1 ] && case "$out" in *"kernel '"*"' failed"*"--sanitize=bounds"*) true ;; *) false ;; esac ;;
  sweep)
    out=$("$dtsim" difftest "$file" --trials 3 "$@" 2>&1); rc=$?
    printf '%s\n' "$out"
    n=$(printf '%s\n' "$out" | grep -c '^on the GPU: ')
    [ $rc -eq 1 ] && [ "$n" -eq 3 ] && case "$out" in *"3/3 case(s) with interpreter findings"*) true ;; *) false ;; esac ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
