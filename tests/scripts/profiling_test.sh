#!/usr/bin/env bash
# scripts/count and scripts/flamegraph on small cases, against the bench
# binary under test. Exit 77 (ctest: skipped) with the reason printed when
# perf may not record here; the count part never skips.
set -euo pipefail
bench=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export WSBENCH_BENCH=$bench
case_filter='^encode/json/ints/200$'
rtt_filter='^rtt/beast/json/ping/same'

fail() { echo "FAIL: $*"; exit 1; }
field() {
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r.get(sys.argv[2], "error: " + r.get("error", "?")))' "$1" "$2"
}

# Instruction counts: positive, and identical on a second run.
WSBENCH_RESULTS=$work/a "$repo/scripts/count" "$case_filter" 5 >/dev/null
WSBENCH_RESULTS=$work/b "$repo/scripts/count" "$case_filter" 5 >/dev/null
first=$(field "$work/a/count/latest/count.json" instructions_per_op)
second=$(field "$work/b/count/latest/count.json" instructions_per_op)
[[ "$first" =~ ^[0-9]+$ ]] && [ "$first" -gt 1000 ] || fail "count: '$first'"
[ "$first" = "$second" ] || fail "count not repeatable: $first vs $second"
echo "ok: count gives $first instructions per encode, twice"

# --default-sweep counts codec rows with N = 2 (--codec-iterations): a codec
# case's count does not depend on N, and the N used is recorded.
python3 "$repo/scripts/count.py" --bench "$bench" --filter "$case_filter" --iterations 10 \
  --codec-iterations 2 --out "$work/codec_n.json" >/dev/null
[ "$(field "$work/codec_n.json" instructions_per_op)" = "$first" ] ||
  fail "--codec-iterations 2 counts $(field "$work/codec_n.json" instructions_per_op), not $first"
[ "$(field "$work/codec_n.json" iterations)" = "[2, 6]" ] ||
  fail "--codec-iterations 2 ran $(field "$work/codec_n.json" iterations) iterations"
if "$repo/scripts/count" --default-sweep 5 >/dev/null 2>&1; then
  fail "--default-sweep took an ITERATIONS argument"
fi
echo "ok: codec rows counted with N = 2 give the same count; --default-sweep takes no N"

# A case registered with a fixed iteration count is listed as
# ".../iterations:200": count runs it with its own N all the same.
python3 "$repo/scripts/count.py" --bench "$bench" --filter '^unbind/soap/ints/3200($|/)' \
  --iterations 2 --out "$work/fixed.json" >/dev/null
fixed=$(field "$work/fixed.json" instructions_per_op)
[[ "$fixed" =~ ^[0-9]+$ ]] || fail "a fixed-iteration case: '$fixed'"
echo "ok: a case listed with /iterations:200 counts $fixed instructions"

# One measured call is counted per iteration and nothing else: the total
# for 10 iterations is 10 times the total for 1, within 2%, for a codec
# step and for a round trip (client and server threads). Set-up, the
# floor or bookkeeping in the count would add a constant and break this.
# The round trip counts 10 and 100 calls, within 5%: the other stacks'
# servers run in the same process and their accept loops wake every
# 100 ms of wall time, which valgrind stretches over a varying number of
# counted calls (up to 2.5% here).
for spec in "$case_filter 1" "$rtt_filter 10"; do
  read -r filter n <<<"$spec"
  python3 "$repo/scripts/count.py" --bench "$bench" --filter "$filter" --iterations "$n" \
    --multiplier 10 --out "$work/scaling.json" >/dev/null
  totals=$(field "$work/scaling.json" totals)
  python3 -c 'import sys; a, b = eval(sys.argv[1]); r = b / a
print(f"ok: {sys.argv[2]}: {sys.argv[3]} and 10x as many operations count {a:,} and {b:,} (x{r:.4f})")
sys.exit(0 if abs(r / 10 - 1) <= (0.02 if sys.argv[3] == "1" else 0.05) else 1)' "$totals" "$filter" "$n" ||
    fail "$filter: 10x the operations do not count 10 times as much: $totals"
done

# --floor counts the row's floor exchanges instead of its calls: a raw
# TCP ping-pong is a few hundred user-space instructions, a Beast ping
# thousands, so a count that still held the calls would be far over a
# fifth of the row's; and 10x the exchanges count 10 times as much.
row=$(field "$work/scaling.json" instructions_per_op)  # the round trip, counted last above
python3 "$repo/scripts/count.py" --bench "$bench" --filter "$rtt_filter" --iterations 10 \
  --multiplier 10 --floor --out "$work/floor.json" >/dev/null
floor=$(field "$work/floor.json" instructions_per_op)
totals=$(field "$work/floor.json" totals)
python3 -c 'import sys; a, b = eval(sys.argv[1]); floor, row = int(sys.argv[2]), int(sys.argv[3])
print(f"ok: --floor counts {floor:,} instructions per floor exchange against the row'"'"'s {row:,}")
sys.exit(0 if 0 < floor * 5 < row and abs(b / a / 10 - 1) <= 0.05 else 1)' "$totals" "$floor" "$row" ||
  fail "--floor: $floor per exchange (row $row), totals $totals"

# Flame graphs sample only the timed loop: the graph names the measured
# code, and none of set-up, verification, payload generation, calibration
# or the round trip's interleaved floor blocks.
status=0
WSBENCH_RESULTS=$work "$repo/scripts/flamegraph" "$case_filter|$rtt_filter" 0.5 >"$work/flame.log" 2>&1 || status=$?
if [ "$status" = 3 ]; then
  echo "SKIPPED flamegraph: $(cat "$work/flame.log")"
  exit 77
fi
[ "$status" = 0 ] || fail "flamegraph exit $status: $(tail -5 "$work/flame.log")"
grep -q "sampling only each case's timed loop" "$work/flame.log" || fail "flamegraph does not say what it samples"
for pair in encode_json_ints_200:JsonCodec rtt_beast_json_ping_same_manual_time:wsb::beast_stack::; do
  name=${pair%%:*}
  grep -q '<svg' "$work/flamegraph/latest/$name.svg" || fail "no SVG for $name"
  grep -q "${pair#*:}" "$work/flamegraph/latest/$name.folded" ||
    fail "$name: the measured code is missing"
  for outside in 'TcpFloor::' 'OpRunner::verify' '::verified(' 'count_wire' 'wsb::generate' \
                 'wsb::calibrate' 'pilot_call_ns'; do
    if grep -qF "$outside" "$work/flamegraph/latest/$name.folded"; then
      fail "$name: samples outside the timed loop, in $outside"
    fi
  done
done
echo "ok: flame graphs hold only the timed loops"
echo "4 passed, 0 failed"
