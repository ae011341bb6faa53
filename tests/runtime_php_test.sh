#!/usr/bin/env bash
# runtime_php_test.sh SERVER PAYLOAD_JSON SUMMARIZE: the PHP runtime
# (runtimes/php/run) calls every operation of the runtime contract with
# each of its four clients, verified, and writes JSON that
# scripts/summarize.py reads unchanged; a catalogue that disagrees with the
# server fails every get row of every client, and the driver. Skipped (77)
# without PHP 8.2 and its extensions (scripts/deps.sh installs them).
set -euo pipefail
server=$1
payload_json=$2
summarize=$3
run="$(cd "$(dirname "$0")/.." && pwd)/runtimes/php/run"
if ! command -v php >/dev/null ||
  ! php -r 'foreach (["soap", "xmlrpc", "curl", "simplexml"] as $e) extension_loaded($e) or exit(1);'; then
  echo "SKIP: PHP with soap, xmlrpc, curl and simplexml is not installed (scripts/deps.sh: wsbench_ensure_php)"
  exit 77
fi
source "$(dirname "$0")/interop/checks.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$run" --server "$server" --payload-json "$payload_json" --repetitions 1 --calls 2 \
  --out "$dir/run.json" 2>"$dir/log" && status=0 || status=$?
check "the driver succeeds" "$status" 0
[ "$status" = 0 ] || tail -20 "$dir/log"
summary() {
  python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
failed = [r for r in rows if r.get("error_occurred")]
print(len(rows), len(failed), len({r["name"] for r in rows}))
for r in failed[:5]:
    print(r["name"], r["error_message"], file=sys.stderr)' "$1"
}
# 4 clients x 20 operations (ping, 15 gets, 4 messaging) x (steady, cold).
check "rows, failed rows, cases" "$(summary "$dir/run.json")" "160 0 160"
context=$(python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["context"]
print(c["runtime"].split(".")[0], c["php_opcache"].split()[0])' "$dir/run.json")
check "the context names the runtime and the opcache state" "$context" "php 8 off"
table=$(python3 "$summarize" "$dir/run.json")
for case in gsoap/php-soap/ping/steady xmlrpc-c/php-xmlrpc/get/objects/1600/steady \
  beast/php-json/send/message-a/100/steady beast/php-xml/receive/message-a/100/steady \
  gsoap/php-soap/unregister/cold xmlrpc-c/php-xmlrpc/register/cold; do
  grep -q "^$case .* 1x" <<<"$table" && found=yes || found=no
  check "summarize.py shows $case" "$found" yes
done

# A catalogue that disagrees with the server in one value per payload (a
# double by 1e-12, past the 1e-14 xmlrpc-c may round by): every get must
# fail. send and receive compare what came back with what was sent, which
# the same catalogue made, so they cannot tell.
cat >"$dir/wrong_payload_json" <<SCRIPT
#!/usr/bin/env bash
"$payload_json" "\$@" | python3 -c '
import json, sys
for line in sys.stdin:
    (kind, value), = json.loads(line).items()
    if kind == "ints": value[0] += 1
    if kind == "strings": value[-1] += "x"
    if kind == "objects": value[7]["value"] *= 1 + 1e-12
    print(json.dumps({kind: value}))'
SCRIPT
chmod +x "$dir/wrong_payload_json"
"$run" --server "$server" --payload-json "$dir/wrong_payload_json" --quick --repetitions 1 \
  --calls 1 --out "$dir/wrong.json" 2>/dev/null && status=0 || status=$?
check "a wrong reply fails the driver" "$status" 1
refused=$(python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
print(" ".join(sorted({r["name"].split("/")[2] + ":" + r["name"].split("/")[4]
                       for r in rows if "verification failed" in r.get("error_message", "")})),
      sum(1 for r in rows if r.get("error_occurred")))' "$dir/wrong.json")
check "... in every get row (3 kinds x 2 sizes x steady, cold) of each client, no other" \
  "$refused" \
  "php-json:ints php-json:objects php-json:strings php-soap:ints php-soap:objects php-soap:strings php-xml:ints php-xml:objects php-xml:strings php-xmlrpc:ints php-xmlrpc:objects php-xmlrpc:strings 48"
finish
