#!/usr/bin/env bash
# wsbench-load --experiment E7 end to end at a tiny size (primes(1000), two
# repetitions): the JSON holds every column x shape x repetition, each its
# own record from servers of its own, with every call made, none failed,
# and latencies and connects timed; SOAP runs on gSOAP's server and on
# Beast's, and the matched mixed column has SOAP and REST on one Beast
# server. The checker is then shown to fail on
# copies of the JSON with each fault it guards injected.
set -euo pipefail
load=$1
fail() { echo "FAIL: $*"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$load" --experiment E7 --primes 1000 --repeat 2 --out "$out/e7.json" >"$out/table.txt" 2>&1 ||
  fail "E7 exited $?: $(cat "$out/table.txt")"
grep -q "2 repetitions per cell" "$out/table.txt" || fail "no E7 table: $(cat "$out/table.txt")"
# The table's averages: a figure in every column (REST, SOAP, both at once,
# SOAP on Beast, both at once on Beast) for every shape, gRPC's last.
averages_check() {
  awk '/^average \(ms\)/ { f = 1; if ($NF != "gRPC") bad = 1; next }
       f && NF == 0 { exit }
       f { n++; if (NF != 9) bad = 1; for (i = 2; i <= NF; i++) if ($i == "-") bad = 1 }
       END { exit !(n == 3 && !bad) }' "$1"
}
averages_check "$out/table.txt" || fail "E7 averages incomplete: $(cat "$out/table.txt")"
sed '/^average (ms)/,/^$/ s/[0-9.]*$/-/' "$out/table.txt" >"$out/bad-table.txt"
if averages_check "$out/bad-table.txt"; then fail "the table check passed a missing gRPC cell"; fi

cat >"$out/check.py" <<'PY'
import json, sys
runs = [r for r in json.load(open(sys.argv[1]))["runs"] if r["experiment"] == "E7"]
shapes = {"10x4": (10, 4), "40x1": (40, 1), "20x2": (20, 2)}
columns = {"SOAP": ["gsoap/soap"], "REST": ["beast/json"],
           "SOAP+REST": ["gsoap/soap", "beast/json"], "gRPC": ["grpc/protobuf"],
           "SOAP+REST on Beast": ["beast/soap", "beast/json"]}
want = {(c, s, stack, rep) for c, stacks in columns.items() for s in shapes for stack in stacks
        for rep in (0, 1)}
# SOAP alone on Beast's server too: the concurrency model matched.
want |= {("SOAP", s, "beast/soap", rep) for s in shapes for rep in (0, 1)}
got = [(r["column"], r["shape"], r["target"].split()[0], r["repetition"]) for r in runs]
assert sorted(got) == sorted(want), f"cells: {sorted(set(want) ^ set(got))} {len(got)}"
pids = {}
for r in runs:
    cell = (r["column"], r["shape"], r["target"])
    threads, calls = shapes[r["shape"]]
    assert r["target"].endswith(" primes:1000"), r["target"]
    assert r["repetitions"] == 2, (cell, r["repetitions"])
    assert r["n"] == threads * calls, (cell, r["n"])
    assert sum(r["errors"].values()) == 0, (cell, r["first_errors"])
    assert r["latency_ms"]["min"] > 0 and r["latency_ms"]["mean"] > 0, (cell, r["latency_ms"])
    assert r["timed_span"] == "request_written..response_received", (cell, r["timed_span"])
    # Every client connects once, timed apart from its calls.
    assert r["connects"] == threads and r["connect_ms"]["mean"] > 0, (cell, r["connects"])
    assert isinstance(r["server_pid"], int) and r["server_pid"] > 0, (cell, r["server_pid"])
    pids.setdefault(cell, set()).add(r["server_pid"])
    # A shared server's CPU per call is over both targets' calls.
    shared = r["column"] == "SOAP+REST on Beast"
    assert r["server"]["calls"] == r["n"] * (2 if shared else 1), (cell, r["server"]["calls"])
# A repetition's servers are its own: no pid serves two repetitions of a cell.
assert all(len(p) == 2 for p in pids.values()), pids
# Both at once: the libraries' two servers apart, the matched pair on one Beast server.
for column, servers in (("SOAP+REST", 2), ("SOAP+REST on Beast", 1)):
    for s in shapes:
        for rep in (0, 1):
            got = {r["server_pid"] for r in runs
                   if (r["column"], r["shape"], r["repetition"]) == (column, s, rep)}
            assert len(got) == servers, (column, s, rep, got)
print(f"ok: {len(runs)} E7 records, every cell twice from servers of its own")
PY
python3 "$out/check.py" "$out/e7.json" || fail "the E7 JSON does not check"

# Each fault the checker guards, injected into a copy: it must fail.
inject() {  # name python-statement-on-runs
  python3 - "$out/e7.json" "$out/bad.json" "$2" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
runs = data["runs"]
exec(sys.argv[3])
json.dump(data, open(sys.argv[2], "w"))
PY
  if python3 "$out/check.py" "$out/bad.json" >/dev/null 2>&1; then
    fail "the checker passed JSON with $1"
  fi
  echo "ok: the checker fails on $1"
}
inject "a repetition missing" 'runs.pop()'
inject "repetitions pooled into one server" \
  'r0 = runs[0]; [r.update(server_pid=r0["server_pid"]) for r in runs if (r["column"], r["shape"], r["target"]) == (r0["column"], r0["shape"], r0["target"])]'
inject "a call missing" 'runs[3]["n"] -= 1'
inject "a failed call" 'runs[4]["errors"]["reset"] = 1'
inject "a zero latency" 'runs[5]["latency_ms"]["min"] = 0'
inject "connects inside the calls" 'runs[6]["connects"] = 0'
inject "the gRPC column missing" 'runs[:] = [r for r in runs if r["column"] != "gRPC"]'
inject "SOAP on Beast missing" 'runs[:] = [r for r in runs if not r["target"].startswith("beast/soap")]'
inject "the matched pair on two servers" \
  '[r.update(server_pid=r["server_pid"] + 1000000) for r in runs if r["column"] == "SOAP+REST on Beast" and r["target"].startswith("beast/json")]'
