#!/usr/bin/env bash
# wsbench-server end to end, with curl as the third-party client: every
# stack answers, the SOAP service publishes its WSDL, bad requests get
# errors and serving goes on, and SIGTERM stops the process with status 0.
set -euo pipefail
server=$1
cleanup=
source "$(dirname "$0")/../support/server_process.sh"

fail() { echo "FAIL: $*"; exit 1; }
expect() {  # expect <what> <needle> <haystack>
  case "$3" in *"$2"*) echo "ok: $1" ;; *) fail "$1: '$2' not in: ${3:0:300}" ;; esac
}

# REST, as curl users call it.
expect "beast ping (text/plain)" "pong" "$(curl -sf -H 'Accept: text/plain' "http://$beast/ping")"
expect "beast get (json)" '"ints"' "$(curl -sf -H 'Accept: application/json' "http://$beast/payloads/ints/200")"
expect "beast 404" "404" "$(curl -s -o /dev/null -w '%{http_code}' "http://$beast/nowhere")"
expect "beast bad body 400" "400" "$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data '{"ints": [1,' "http://$beast/echo")"
location=$(curl -si -X POST "http://$beast/queues" | tr -d '\r' | awk 'tolower($1) == "location:" { print $2 }')
expect "beast register -> Location" "/queues/" "$location"
expect "beast delete 204" "204" "$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "http://$beast$location")"

# E8's dictionary over REST: a word's definition, put and read back, 404.
expect "beast define" "zebra: " "$(curl -sf -H 'Accept: text/plain' "http://$beast/words/zebra")"
expect "beast put 204" "204" "$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: text/plain' --data 'a striped horse' "http://$beast/words/zebra")"
expect "beast define after put" '"a striped horse"' "$(curl -sf -H 'Accept: application/json' "http://$beast/words/zebra")"
expect "beast define 404" "404" "$(curl -s -o /dev/null -w '%{http_code}' "http://$beast/words/nonesuch")"

# SOAP: the WSDL, then a call built by hand as any SOAP 1.1 client would.
wsdl=$(curl -sf "http://$gsoap/?wsdl")
expect "gsoap wsdl" "definitions" "$wsdl"
soap_ns=$(printf '%s' "$wsdl" | grep -o 'targetNamespace="[^"]*"' | head -1 | cut -d'"' -f2)
envelope="<?xml version=\"1.0\"?><SOAP-ENV:Envelope xmlns:SOAP-ENV=\"http://schemas.xmlsoap.org/soap/envelope/\" xmlns:ns=\"$soap_ns\"><SOAP-ENV:Body><ns:ping/></SOAP-ENV:Body></SOAP-ENV:Envelope>"
expect "gsoap ping via curl" "pong" "$(curl -s -H 'Content-Type: text/xml; charset=utf-8' -H 'SOAPAction: ""' --data "$envelope" "http://$gsoap/")"
expect "gsoap fault on bad XML" "Fault" "$(curl -s -H 'Content-Type: text/xml' --data '<broken' "http://$gsoap/")"

# XML-RPC at /RPC2, including system.multicall.
call='<?xml version="1.0"?><methodCall><methodName>wsbench.ping</methodName><params/></methodCall>'
expect "xmlrpc ping via curl" "pong" "$(curl -s -H 'Content-Type: text/xml' --data "$call" "http://$xmlrpc/RPC2")"
multicall='<?xml version="1.0"?><methodCall><methodName>system.multicall</methodName><params><param><value><array><data><value><struct><member><name>methodName</name><value><string>wsbench.ping</string></value></member><member><name>params</name><value><array><data/></array></value></member></struct></value><value><struct><member><name>methodName</name><value><string>wsbench.primes</string></value></member><member><name>params</name><value><array><data><value><i4>3</i4></value></data></array></value></member></struct></value></data></array></value></param></params></methodCall>'
expect "xmlrpc multicall" "FIRST 3 numbers: 2 3 5" "$(curl -s -H 'Content-Type: text/xml' --data "$multicall" "http://$xmlrpc/RPC2")"
expect "xmlrpc fault on unknown method" "fault" "$(curl -s -H 'Content-Type: text/xml' --data '<?xml version="1.0"?><methodCall><methodName>no.such</methodName><params/></methodCall>' "http://$xmlrpc/RPC2")"
expect "xmlrpc still serving" "pong" "$(curl -s -H 'Content-Type: text/xml' --data "$call" "http://$xmlrpc/RPC2")"

kill -TERM $pid
for _ in $(seq 100); do
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
kill -0 $pid 2>/dev/null && fail "server still running 5 s after SIGTERM"
wait $pid && status=0 || status=$?
[ "$status" = 0 ] || fail "exit status $status after SIGTERM"
echo "ok: clean shutdown"
echo "1 passed, 0 failed"
