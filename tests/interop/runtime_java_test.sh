#!/usr/bin/env bash
# runtime_java_test.sh SERVER PAYLOAD_JSON SUMMARIZE: the Java clients
# (runtimes/java/run) call every operation once per client, verified, against
# the native servers and the Java server, and write JSON that
# scripts/summarize.py reads unchanged; a wrong reply (a catalogue that
# disagrees with the server) fails its rows and the driver.
# Skipped (77) when Java 17 and Maven cannot be installed.
set -euo pipefail
server=$1
payload_json=$2
summarize=$3
run="$(cd "$(dirname "$0")/../.." && pwd)/runtimes/java/run"
source "$(dirname "$0")/checks.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Cold rows cost a JVM each: ping stands for the rest here.
"$run" --server "$server" --payload-json "$payload_json" --quick --repetitions 1 --calls 1 \
  --warmup-calls 1 --warmup-seconds 1 --cold-operations ping --java-server \
  --out "$dir/run.json" \
  2>"$dir/log" && status=0 || status=$?
[ "$status" -eq 77 ] && { tail -3 "$dir/log"; exit 77; }
[ "$status" -eq 0 ] || tail -20 "$dir/log"
check "the driver succeeds" "$status" 0
rows=$(python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
print(len(rows), sum(1 for r in rows if r.get("error_occurred")),
      len({r["name"] for r in rows}))' "$dir/run.json")
# 5 clients on the native servers, 4 on the Java server (no XML-RPC there):
# 11 operations steady, ping cold and warmup; 1 repetition.
check "rows, failed rows, cases" "$rows" "117 0 117"
table=$(python3 "$summarize" "$dir/run.json")
for case in gsoap/java-cxf/get/objects/3200/steady beast/java-jersey-json/ping/steady \
  beast/java-jersey-xml/receive/message-a/100/steady \
  beast/java-jersey-protobuf/get/strings/200/steady xmlrpc-c/java-xmlrpc/unregister/steady \
  gsoap/java-cxf/ping/cold xmlrpc-c/java-xmlrpc/ping/warmup \
  java-server/java-cxf/receive/message-a/100/steady java-server/java-jersey-xml/get/ints/3200/steady \
  java-server/java-jersey-protobuf/ping/cold; do
  grep -q "^$case .* 1x" <<<"$table" && found=yes || found=no
  check "summarize.py shows $case" "$found" yes
done

# A catalogue that disagrees with the server: the gets of ints must fail,
# steady and cold (each line's first ",1" becomes ",2").
cat >"$dir/wrong_payload_json" <<SCRIPT
#!/usr/bin/env bash
"$payload_json" "\$@" | sed 's/,1/,2/'
SCRIPT
chmod +x "$dir/wrong_payload_json"
"$run" --server "$server" --payload-json "$dir/wrong_payload_json" --clients jersey-json \
  --quick --repetitions 1 --calls 2 --warmup-calls 0 --operations get/ints/200,get/ints/3200 \
  --out "$dir/wrong.json" 2>/dev/null && status=0 || status=$?
check "a wrong reply fails the driver" "$status" 1
refused=$(python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
print(" ".join(sorted(r["name"].split("/", 3)[3] for r in rows
                      if "verification failed" in r.get("error_message", "")
                      and "/ints/" in r["name"])))' "$dir/wrong.json")
check "... in the rows of get ints, steady and cold" "$refused" \
  "get/ints/200/cold get/ints/200/steady get/ints/3200/cold get/ints/3200/steady"
finish
