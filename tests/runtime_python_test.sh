#!/usr/bin/env bash
# runtime_python_test.sh SERVER PAYLOAD_JSON SUMMARIZE: the Python runtime
# driver (runtimes/python/driver.py) calls every operation with every client,
# verified, and writes JSON that scripts/summarize.py reads unchanged; a
# wrong reply (a catalogue that disagrees with the server) fails its rows and
# the driver. Skipped (77) without a python3 that has zeep.
set -euo pipefail
server=$1
payload_json=$2
summarize=$3
driver="$(cd "$(dirname "$0")/.." && pwd)/runtimes/python/driver.py"
py=
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import zeep' 2>/dev/null; then
    py=$candidate
    break
  fi
done
[ -n "$py" ] || { echo "SKIP: python3 zeep is not installed (apt-get install python3-zeep)"; exit 77; }
source "$(dirname "$0")/interop/checks.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$py" "$driver" --server "$server" --payload-json "$payload_json" --repetitions 2 --calls 5 \
  --max-seconds 1 --out "$dir/run.json" 2>"$dir/log" && status=0 || status=$?
check "the driver succeeds" "$status" 0
rows=$("$py" -c '
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
print(len(rows), sum(1 for r in rows if r.get("error_occurred")),
      len({r["name"] for r in rows}))' "$dir/run.json")
# 3 clients x 3 operations x (steady, cold), 2 repetitions each.
check "rows, failed rows, cases" "$rows" "36 0 18"
table=$(python3 "$summarize" "$dir/run.json")
for case in xmlrpc-c/python-xmlrpc/ping/steady gsoap/python-zeep/get/ints/3200/steady \
  beast/python-json/echo/message-a/100/steady gsoap/python-zeep/echo/message-a/100/cold; do
  grep -q "^$case .* 2x" <<<"$table" && found=yes || found=no
  check "summarize.py shows $case" "$found" yes
done

# A catalogue that disagrees with the server: every get must fail (echo
# sends the catalogue and gets it back, so it cannot tell).
cat >"$dir/wrong_payload_json" <<SCRIPT
#!/usr/bin/env bash
"$payload_json" "\$@" | sed 's/,1/,2/'
SCRIPT
chmod +x "$dir/wrong_payload_json"
"$py" "$driver" --server "$server" --payload-json "$dir/wrong_payload_json" --clients json \
  --repetitions 1 --calls 2 --max-seconds 1 --out "$dir/wrong.json" 2>/dev/null && status=0 ||
  status=$?
check "a wrong reply fails the driver" "$status" 1
refused=$("$py" -c '
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
print(" ".join(sorted(r["name"].split("/")[3] for r in rows
                      if "verification failed" in r.get("error_message", ""))))' "$dir/wrong.json")
check "... in the rows of get, steady and cold" "$refused" "get get"
finish
