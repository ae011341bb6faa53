#!/usr/bin/env bash
# A real bench run read by scripts/summarize.py: the context keys bench
# writes are the ones the summary prints (commit, kernel, steal), and the
# case appears with its statistics. Catches the two sides drifting apart.
set -euo pipefail
bench=$1
summarize=$2
fail() { echo "FAIL: $*"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bench" --benchmark_filter='^encode/json/ints/200$' --benchmark_min_time=0.01 \
  --benchmark_out="$dir/run.json" --benchmark_out_format=json >/dev/null 2>&1
out=$(python3 "$summarize" "$dir/run.json")
for label in commit kernel cpu steal command; do
  grep -qE "^  $label +[^ ]" <<<"$out" || fail "the header has no $label line"
done
grep -qE '^ints/200 +json +[0-9.]+ [nu]s +[0-9.]+-[0-9.]+ [nu]s +[0-9.]+%!? +6' <<<"$out" ||
  fail "encode/json/ints/200 has no median, CI95, CV and n=6 row"
echo "ok: header fields and the case's statistics"
