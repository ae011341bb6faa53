#!/usr/bin/env bash
# bench --strings: plain by default; escaped names its payloads with
# ':escaped' (only those with generated strings) and says so in the
# context; anything else is refused.
set -euo pipefail
bench=$1
out_file=$(mktemp)
trap 'rm -f "$out_file"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
filter='^encode/json/(ints/800|strings/800|message-a/100)'

plain=$("$bench" --benchmark_list_tests=true "--benchmark_filter=$filter")
[ "$(grep -c . <<<"$plain")" = 3 ] || fail "expected 3 plain cases, got: $plain"
! grep -q ':escaped' <<<"$plain" || fail "plain run names escaped payloads: $plain"

escaped=$("$bench" --strings=escaped --benchmark_list_tests=true "--benchmark_filter=$filter")
grep -qx 'encode/json/strings/800:escaped' <<<"$escaped" || fail "no strings/800:escaped: $escaped"
grep -qx 'encode/json/message-a/100:escaped' <<<"$escaped" || fail "no message-a:escaped: $escaped"
grep -qx 'encode/json/ints/800' <<<"$escaped" || fail "ints must keep its name: $escaped"

if "$bench" --strings=fancy --benchmark_list_tests=true >/dev/null 2>&1; then
  fail "--strings=fancy was accepted"
fi

"$bench" --strings=escaped '--benchmark_filter=^memcpy/strings/200:escaped$' \
  --benchmark_repetitions=1 --benchmark_min_time=0.001 "--benchmark_out=$out_file" \
  --benchmark_out_format=json >/dev/null 2>&1 || fail "escaped run failed"
python3 - "$out_file" <<'PY' || fail "context lacks the string shape"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["context"]["wsbench_payload_strings"] == "escaped (codec cases)", doc["context"]
assert [b["name"] for b in doc["benchmarks"]] == ["memcpy/strings/200:escaped"], doc["benchmarks"]
PY
echo "ok: plain by default, ':escaped' names and context with --strings=escaped"
