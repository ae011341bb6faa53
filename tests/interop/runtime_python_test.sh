#!/usr/bin/env bash
# runtime_python_test.sh SERVER PAYLOAD_JSON SUMMARIZE: the Python runtime
# (runtimes/python/run, the runtime contract) calls every operation with
# every client, verified, and writes JSON that scripts/summarize.py reads
# unchanged; a wrong reply (a catalogue that disagrees with the server)
# fails its rows and the run. Skipped (77) without a python3 that has zeep.
set -euo pipefail
server=$1
payload_json=$2
summarize=$3
run="$(cd "$(dirname "$0")/../.." && pwd)/runtimes/python/run"
py=
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import zeep' 2>/dev/null; then
    py=$candidate
    break
  fi
done
[ -n "$py" ] || { echo "SKIP: python3 zeep is not installed (apt-get install python3-zeep)"; exit 77; }
source "$(dirname "$0")/checks.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$run" --server "$server" --payload-json "$payload_json" --repetitions 1 --calls 3 \
  --max-seconds 1 --out "$dir/run.json" 2>"$dir/log" && status=0 || status=$?
check "the run succeeds" "$status" 0
rows=$("$py" -c '
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
print(len(rows), sum(1 for r in rows if r.get("error_occurred")),
      len({r["name"] for r in rows}))' "$dir/run.json")
# 3 clients x 20 operations (ping; get of 3 kinds x 5 sizes; register,
# send, receive, unregister) x (steady, cold), 1 repetition each.
check "rows, failed rows, cases" "$rows" "120 0 120"
table=$(python3 "$summarize" "$dir/run.json")
for case in xmlrpc-c/python-xmlrpc/ping/steady gsoap/python-zeep/get/objects/1600/steady \
  beast/python-json/get/strings/400/steady gsoap/python-zeep/register/steady \
  xmlrpc-c/python-xmlrpc/send/message-a/100/steady beast/python-json/receive/message-a/100/cold \
  gsoap/python-zeep/unregister/cold; do
  grep -q "^$case .* 1x" <<<"$table" && found=yes || found=no
  check "summarize.py shows $case" "$found" yes
done

# A catalogue that disagrees with the server (the first item of every
# payload changed): every get must fail, and zeep's send and receive, whose
# message comes from the server; the JSON client sends the catalogue's
# message and gets it back, so it cannot tell.
cat >"$dir/wrong_payload_json" <<SCRIPT
#!/usr/bin/env bash
"$payload_json" "\$@" | "$py" -c '
import json, sys
for line in sys.stdin:
    body = json.loads(line)
    (kind, value), = body.items()
    if kind == "ints":
        value[0] += 1
    elif kind == "strings":
        value[0] += "x"
    elif kind == "objects":
        value[0]["name"] += "x"
    else:
        value["recipient"] += "x"
    print(json.dumps(body))'
SCRIPT
chmod +x "$dir/wrong_payload_json"
"$run" --server "$server" --payload-json "$dir/wrong_payload_json" --clients json,zeep \
  --operations '^(get/(ints|strings|objects)/200|send|receive)' --repetitions 1 --calls 2 \
  --max-seconds 1 --out "$dir/wrong.json" 2>/dev/null && status=0 || status=$?
check "a wrong reply fails the run" "$status" 1
refused=$("$py" -c '
import collections, json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
count = collections.Counter(r["name"].split("/")[2] + ":" + r["name"].split("/")[3] for r in rows
                            if "verification failed" in r.get("error_message", ""))
print(" ".join("%s=%d" % kv for kv in sorted(count.items())))' "$dir/wrong.json")
# Each operation steady and cold.
check "... in the rows of get, and zeep's send and receive" "$refused" \
  "python-json:get=6 python-zeep:get=6 python-zeep:receive=2 python-zeep:send=2"
finish
