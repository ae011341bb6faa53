#!/usr/bin/env bash
# wsbench-load --experiment E8 at small scale for one protocol: 2 users
# joining 1 s apart, twice, each repetition against a server of its own
# with a database in a folder of the test's own; the table and the JSON
# have E8's shape, every call succeeded and was verified, and a server
# whose definitions are of another size fails the verification.
set -euo pipefail
load=$1 protocol=$2
words=/usr/share/dict/american-english
if [ ! -r "$words" ]; then
  echo "SKIP: $words is missing (Debian package wamerican)"
  exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Servers the driver starts without --dictionary-dir build here too.
export WSBENCH_CACHE_DIR=$out

"$load" --experiment E8 --load "$protocol" --sizes x1 --ramp-to 2 --ramp-every 1 --search none \
  --repeat 2 --dictionary-dir "$out" --out "$out/e8.json" >"$out/table.txt" 2>"$out/stderr.txt" ||
  fail "E8 exited $?: $(cat "$out/table.txt" "$out/stderr.txt")"
# The summary rows: protocol, size, repetition, calls, no failure, and 2
# users served at the ramp's bound.
for rep in 0 1; do
  grep -Eq "^$protocol +x1 +$rep +[0-9]+ +0 \|.*\| >=2$" "$out/table.txt" ||
    fail "no E8 summary row for $protocol, repetition $rep: $(cat "$out/table.txt")"
done
grep -q "^E8 x1 over time" "$out/table.txt" || fail "no per-step table: $(cat "$out/table.txt")"
python3 - "$out/e8.json" "$protocol" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
protocol = sys.argv[2]
assert data["context"]["e8_define_percent"] == "90", data["context"]
def check(r):
    assert r["experiment"] == "E8" and r["size"] == "x1", r
    assert r["target"] == f"{protocol} dictionary:x1:90", r["target"]
    assert r["max_users"] == 2 and r["max_users_at_bound"], r["max_users"]
    assert r["search_end"] == "the ramp's end (no search) at 2 users", r["search_end"]
    assert sum(r["errors"].values()) == 0, r["first_errors"]
    steps = r["steps"]
    assert [s["users"] for s in steps] == [1, 2], steps
    assert [(s["from_s"], s["to_s"]) for s in steps] == [(0, 1), (1, 2)], steps
    for s in steps:
        assert s["ok"] > 0 and s["failed"] == 0, s
        assert s["cpu_percent"] is not None and 0 <= s["cpu_percent"] <= 400, s
        assert s["rss_mb"] is not None and s["rss_mb"] > 1, s
    # Every successful call was timed and counted in a step: none went unverified.
    assert r["n"] == sum(s["ok"] for s in steps) == sum(r["ok_per_second"]), (r["n"], steps)
    # Each user connected once, apart from its calls; xmlrpc-c's client
    # connects inside its first call and marks no write.
    assert r["connects"] == 2, r["connects"]
    lazy = protocol.startswith("xmlrpc-c/")
    assert r["connects_in_first_call"] == lazy, r["connects_in_first_call"]
    assert r["timed_span"] == ("invoke" if lazy else "request_written") + "..response_received", \
        r["timed_span"]


runs = data["runs"]
assert [(r["repetition"], r["repetitions"]) for r in runs] == [(0, 2), (1, 2)], runs
# Each repetition its own ramp against a server of its own.
assert len({r["server_pid"] for r in runs}) == 2, [r["server_pid"] for r in runs]
for r in runs:
    check(r)
print(f"ok: {protocol}: repetitions of {[r['n'] for r in runs]} verified calls")
PY

# The client expects x10 definitions (and only defines) from a server that
# has x1's.
status=0
"$load" --load "$protocol" --op dictionary:x10:100 -n 3 >"$out/wrong.txt" 2>&1 || status=$?
[ "$status" = 1 ] || fail "a server of another size was not refused (exit $status)"
grep -q "verification failed.*the definition differs" "$out/wrong.txt" ||
  fail "no clear verification error: $(cat "$out/wrong.txt")"
echo "ok: a reply of another size fails verification"
