#!/usr/bin/env bash
# A two-host run on one host: bench against a wsbench-server (--target)
# gets the Beast and gSOAP servers' phases from their Server-Timing
# header and gRPC's from the same value in its trailing metadata, says so
# in the row and the context, and reports none for a
# client that cannot ask for them (xmlrpc-c's curl transport) rather than
# guessing. With --no-probes no row has phases.
set -euo pipefail
bench=$1
server=$2
result=$(mktemp)
cleanup=$result
source "$(dirname "$0")/../support/server_process.sh"

run() {
  "$bench" --target "beast=$beast" --target "gsoap=$gsoap" --target "xmlrpc-c=$xmlrpc" \
    --target "grpc=$grpc" \
    --benchmark_filter='^rtt/(beast/json|gsoap/soap|xmlrpc-c/xmlrpc|grpc/protobuf)/ping/same' \
    --iterations=20 \
    --benchmark_repetitions=1 --benchmark_format=json "$@" >"$result" 2>/dev/null
}

run
python3 - "$result" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ctx = d["context"]
assert ctx["probes"] == "on", ctx["probes"]
assert "beast=Server-Timing header" in ctx["server_phases"], ctx["server_phases"]
assert "gsoap=Server-Timing header" in ctx["server_phases"], ctx["server_phases"]
assert "grpc=Server-Timing header" in ctx["server_phases"], ctx["server_phases"]
assert "xmlrpc-c=none" in ctx["server_phases"], ctx["server_phases"]
rows = {b["name"].split("/")[1]: b for b in d["benchmarks"]}
for stack in ("beast", "gsoap", "grpc"):
    row = rows[stack]
    assert row["label"].endswith("server phases: Server-Timing header"), row["label"]
    for phase in ("server_parse", "service", "server_marshal",
                  "request_transfer+response_transfer"):
        assert f"phase:{phase}_us" in row, (stack, phase, sorted(row))
    assert row["phase:server_parse_us"] > 0
    for figure in ("p50_us", "failed"):
        assert f"phase_gap_{figure}" in row, (stack, figure, sorted(row))
    assert not any(k.startswith("server_gap") for k in row), sorted(row)
xmlrpc = rows["xmlrpc-c"]
assert xmlrpc["label"].endswith("server phases: none"), xmlrpc["label"]
assert not any(k.startswith("phase:server_") for k in xmlrpc), sorted(xmlrpc)
print("ok: remote phases from Server-Timing (beast, gsoap, grpc), none from xmlrpc-c")
PY

run --no-probes
python3 - "$result" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["context"]["probes"] == "off"
for b in d["benchmarks"]:
    assert b["label"].endswith("server phases: none"), b["label"]
    assert not any(k.startswith(("phase", "server_gap")) for k in b), sorted(b)
print("ok: --no-probes rows carry no phases")
PY
