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
