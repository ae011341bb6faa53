#!/usr/bin/env bash
# wsbench-load as a user runs it: --help, clear errors for what it cannot
# do, and a small run whose JSON holds the context, the run and the
# server's figures.
set -euo pipefail
load=$1
fail() { echo "FAIL: $*"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$load" --help | grep -q -- '--experiment' || fail "--help does not list --experiment"
refused() {  # expected-status expected-text args...
  local want=$1 text=$2 status=0 err
  shift 2
  err=$("$load" "$@" 2>&1 >/dev/null) || status=$?
  [ "$status" = "$want" ] || fail "$* exited $status, not $want: $err"
  grep -q -- "$text" <<<"$err" || fail "$*: no clear error: $err"
  echo "ok: $* is refused: $(head -1 <<<"$err")"
}
refused 2 "unrecognised option" --no-such-flag
refused 1 "nothing to load"
refused 1 "unknown operation 'nope'" --load beast/json --op nope -n 1
refused 1 "does not carry codec" --load gsoap/json -n 1
refused 1 "unknown experiment" --experiment E99
refused 1 "needs a request count or a duration" --load beast/json
refused 1 "not a count" --load beast/json --op primes:many -n 1
refused 1 "clients must be 1 to 10000" --load beast/json -c 5000000 -n 1
refused 1 "--repeat must be at least 1" --load beast/json -n 1 --repeat -1
refused 1 "--repeat does not apply to --search" --load beast/json -n 1 --search 1:1:2 --repeat 2
refused 1 "--primes must be at least 1" --experiment E7 --primes 0

"$load" --load beast/json --load xmlrpc-c/xmlrpc -c 2 -n 5 --op echo:ints/200 \
  --out "$out/run.json" >"$out/table.txt" || fail "the run exited $?: $(cat "$out/table.txt")"
grep -q "beast/json echo:ints/200" "$out/table.txt" || fail "no table row: $(cat "$out/table.txt")"
python3 - "$out/run.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
context, runs = data["context"], data["runs"]
for key in ("source_git_commit", "kernel", "load_placement", "steal_during_run_pct"):
    assert key in context, f"context lacks {key}"
assert [r["target"] for r in runs] == ["beast/json echo:ints/200",
                                       "xmlrpc-c/xmlrpc echo:ints/200"], runs
for r in runs:
    assert r["mode"] == "mixed" and r["n"] == 10, r
    assert sum(r["errors"].values()) == 0, r["errors"]
    assert r["server"]["rss_peak_kb"] > 0 and r["server"]["samples"] >= 2, r["server"]
    series = r["server_samples"]
    assert len(series) == r["server"]["samples"], series
    assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(series, series[1:])), series
    assert max(s[2] for s in series) == r["server"]["rss_peak_kb"], series
    assert r["latency_ms"]["min"] <= r["latency_ms"]["p50"] <= r["latency_ms"]["max"], r
print("ok: the JSON holds the context, both targets and their servers' figures")
PY

# --repeat: each repetition its own record against a server of its own.
"$load" --load beast/json -c 2 -n 3 --repeat 2 --out "$out/repeat.json" >"$out/table.txt" ||
  fail "the repeated run exited $?: $(cat "$out/table.txt")"
python3 - "$out/repeat.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [(r["repetition"], r["repetitions"], r["n"]) for r in runs] == [(0, 2, 6), (1, 2, 6)], runs
assert runs[0]["server_pid"] != runs[1]["server_pid"], [r["server_pid"] for r in runs]
assert all(r["connects"] == 2 and r["connect_ms"]["max"] > 0 for r in runs), runs
print("ok: two repetitions, two records, two servers")
PY
