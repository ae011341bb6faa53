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
run="$(cd "$(dirname "$0")/../.." && pwd)/runtimes/php/run"
if ! command -v php >/dev/null ||
  ! php -r 'foreach (["soap", "xmlrpc", "curl", "simplexml"] as $e) extension_loaded($e) or exit(1);'; then
  echo "SKIP: PHP with soap, xmlrpc, curl and simplexml is not installed (scripts/deps.sh: wsbench_ensure_php)"
  exit 77
fi
source "$(dirname "$0")/checks.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$run" --server "$server" --payload-json "$payload_json" --servers native --repetitions 1 \
  --calls 2 --out "$dir/run.json" 2>"$dir/log" && status=0 || status=$?
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

# The PHP server (php -S, server/router.php), called by the PHP clients
# and by bench's native clients. What it cannot serve equally is a row with
# an "unsupported:" reason, unrun, and not a failure of the run: xmlrpc-epi
# writes doubles with six decimals (objects), and gSOAP's and Beast's
# clients keep one connection, which the built-in server closes after every
# reply (xmlrpc-c's curl transport reconnects).
"$run" --server "$server" --payload-json "$payload_json" --servers php --quick --repetitions 1 \
  --calls 2 --out "$dir/php.json" 2>"$dir/php.log" && status=0 || status=$?
check "rows the PHP server cannot serve are skips: the driver succeeds" "$status" 0
outcome=$(python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["benchmarks"]
def why(r):
    m = r.get("error_message", "")
    return ("double" if "objects" in r["name"] and m.startswith("unsupported:") and "doubles" in m
            else "closed" if m.startswith("unsupported:") and "closes" in m
            else m[:60] if m else "ok")
print(" ".join(sorted({"%s:%s:%s" % (r["name"].split("/")[2], r["name"].split("/")[3], why(r))
                       for r in rows})), len(rows))' "$dir/php.json")
check "php-server rows: every PHP client operation verified but XML-RPC doubles; native xmlrpc only" \
  "$outcome" \
  "native-json:get:closed native-json:ping:closed native-soap:get:closed native-soap:ping:closed native-xmlrpc:get:ok native-xmlrpc:ping:ok php-json:get:ok php-json:ping:ok php-json:receive:ok php-json:register:ok php-json:send:ok php-json:unregister:ok php-soap:get:ok php-soap:ping:ok php-soap:receive:ok php-soap:register:ok php-soap:send:ok php-soap:unregister:ok php-xml:get:ok php-xml:ping:ok php-xml:receive:ok php-xml:register:ok php-xml:send:ok php-xml:unregister:ok php-xmlrpc:get:double php-xmlrpc:get:ok php-xmlrpc:ping:ok php-xmlrpc:receive:ok php-xmlrpc:register:ok php-xmlrpc:send:ok php-xmlrpc:unregister:ok 97"

# The PHP server's REST routes the clients do not call: echo and refusals.
mkdir -p "$dir/data/payloads" "$dir/data/queues"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
WSBENCH_PHP_DATA="$dir/data" php -S "127.0.0.1:$port" "$(dirname "$run")/server/router.php" \
  >"$dir/php-server.log" 2>&1 &
php_server=$!
trap 'kill $php_server 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/ping" && break; sleep 0.1; done
request() {
  curl -s -w '%{http_code}' -H 'Accept: application/json' "$@"
}
body='{"objects":[{"id":1,"name":"a <b> & c","value":2.0,"active":true}]}'
check "POST /echo" "$(request -H 'Content-Type: application/json' --data-binary "$body" \
  "http://127.0.0.1:$port/echo")" "${body}200"
xml_body='<?xml version="1.0"?>
<strings xmlns="urn:wsbench:rest"><s>a &lt;b&gt; &amp; c</s><s>d</s></strings>'
check "POST /echo XML" "$(curl -s -H 'Accept: application/xml' -H 'Content-Type: application/xml' \
  --data-binary "$xml_body" "http://127.0.0.1:$port/echo")" "$xml_body"
check "POST /echo XML, answered in JSON" "$(request -H 'Content-Type: application/xml' \
  --data-binary "$xml_body" "http://127.0.0.1:$port/echo")" '{"strings":["a <b> & c","d"]}200'
check "POST /echo, malformed XML: 400" "$(request -o /dev/null -H 'Content-Type: application/xml' \
  --data-binary '<strings><s>' "http://127.0.0.1:$port/echo")" 400
check "POST /echo, neither: 415" "$(request -H 'Content-Type: image/png' --data x \
  "http://127.0.0.1:$port/echo")" "the PHP server's REST bodies are application/json, application/xml
415"
check "Accept: image/png: 406" \
  "$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept: image/png' "http://127.0.0.1:$port/ping")" 406
check "GET /payloads/ints/5, not here: 404" \
  "$(request -o /dev/null "http://127.0.0.1:$port/payloads/ints/5")" 404
check "DELETE /ping: 405" "$(request -o /dev/null -X DELETE "http://127.0.0.1:$port/ping")" 405

# A client let go closes its connection at once, without the cycle
# collector: a driver run makes thousands, and stream_select cannot watch
# descriptors past 1024 (the leak once failed every cold row of a run).
open_fds=$(WSB_PORT=$port WSB_CLIENTS="$(dirname "$run")/clients.php" php -r '
require getenv("WSB_CLIENTS");
gc_disable();
for ($i = 0; $i < 300; ++$i) {
    foreach (["JsonRestClient", "XmlRestClient"] as $class) {
        (new $class("127.0.0.1:" . getenv("WSB_PORT")))->ping();
    }
}
echo count(scandir("/proc/self/fd")) - 2;' 2>&1)
[[ "$open_fds" =~ ^[0-9]+$ && "$open_fds" -lt 50 ]] && bounded=yes || bounded="no: $open_fds"
check "600 REST clients let go leave no descriptors open" "$bounded" yes
check "GET /queues/7, no such queue: 404" "$(request -o /dev/null "http://127.0.0.1:$port/queues/7")" 404
check "a reply says its length" \
  "$(curl -s -D - -o /dev/null "http://127.0.0.1:$port/ping" | tr -d '\r' | grep -i '^content-length')" \
  "Content-Length: 15"
kill $php_server
wait $php_server 2>/dev/null || true

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
"$run" --server "$server" --payload-json "$dir/wrong_payload_json" --servers native --quick \
  --repetitions 1 --calls 1 --out "$dir/wrong.json" 2>/dev/null && status=0 || status=$?
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
