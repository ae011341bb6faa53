#!/usr/bin/env bash
# bench --help (and -h) list wsbench's flags first, then Google Benchmark's,
# and exit 0 without running anything.
set -euo pipefail
bench=$1
fail() { echo "FAIL: $*"; exit 1; }
for flag in --help -h; do
  out=$("$bench" "$flag") || fail "$flag exited $?"
  ours=$(grep -n -m1 -- '--placement' <<<"$out" | cut -d: -f1) || fail "$flag: no --placement"
  theirs=$(grep -n -m1 -- '--benchmark_filter' <<<"$out" | cut -d: -f1) ||
    fail "$flag: no --benchmark_filter"
  [ "$ours" -lt "$theirs" ] || fail "$flag: wsbench's flags should come first"
  ! grep -q -- '-----' <<<"$out" || fail "$flag ran benchmarks"
  echo "ok: $flag lists --placement (line $ours) and --benchmark_filter (line $theirs)"
done
# The policy flags are listed, and a value bench does not know is a clear
# error (exit 2), not a run under some other policy.
out=$("$bench" --help)
for flag in --heap --alloc; do
  grep -q -- "$flag" <<<"$out" || fail "--help does not list $flag"
done
for bad in --heap=keep --alloc=sometimes; do
  status=0
  err=$("$bench" "$bad" --benchmark_filter=none 2>&1 >/dev/null) || status=$?
  [ "$status" = 2 ] || fail "$bad exited $status"
  grep -q "unknown" <<<"$err" || fail "$bad: no clear error: $err"
  echo "ok: $bad is refused: $err"
done
