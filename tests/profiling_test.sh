#!/usr/bin/env bash
# scripts/count and scripts/flamegraph on one small case, against the bench
# binary under test. Exit 77 (ctest: skipped) with the reason printed when
# perf may not record here; the count part never skips.
set -euo pipefail
bench=$1
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export WSBENCH_BENCH=$bench
case_filter='^encode/json/ints/200$'

fail() { echo "FAIL: $*"; exit 1; }
per_op() {
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r.get("instructions_per_op", "error: " + r.get("error", "?")))' "$1"
}

# Instruction counts: positive, and identical on a second run.
WSBENCH_RESULTS=$work/a "$repo/scripts/count" "$case_filter" 5 >/dev/null
WSBENCH_RESULTS=$work/b "$repo/scripts/count" "$case_filter" 5 >/dev/null
first=$(per_op "$work/a/count.json")
second=$(per_op "$work/b/count.json")
[[ "$first" =~ ^[0-9]+$ ]] && [ "$first" -gt 1000 ] || fail "count: '$first'"
[ "$first" = "$second" ] || fail "count not repeatable: $first vs $second"
echo "ok: count gives $first instructions per encode, twice"

# Flame graph: an SVG that names our encoder.
status=0
WSBENCH_RESULTS=$work "$repo/scripts/flamegraph" "$case_filter" 0.5 >"$work/flame.log" 2>&1 || status=$?
if [ "$status" = 3 ]; then
  echo "SKIPPED flamegraph: $(cat "$work/flame.log")"
  exit 77
fi
[ "$status" = 0 ] || fail "flamegraph exit $status: $(tail -5 "$work/flame.log")"
svg=$work/flamegraph/encode_json_ints_200.svg
grep -q '<svg' "$svg" || fail "no SVG at $svg"
grep -q 'JsonCodec' "$svg" || fail "flame graph lacks the codec's frames"
echo "ok: flame graph $(wc -c <"$svg") bytes"
echo "1 passed, 0 failed"
