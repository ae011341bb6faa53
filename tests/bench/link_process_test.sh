#!/usr/bin/env bash
# bench --link as a process: without CAP_NET_ADMIN it says why and skips
# only the round trips; a bench killed with SIGKILL leaves no namespace
# behind; and the two-host path (bench --remote, --remote-floor against a
# wsbench-server in another namespace) gives rows with a floor and the
# server's phases from Server-Timing. Exit 77 (skipped) where namespaces
# cannot be made.
set -euo pipefail
bench=$1
server=$2
fail() { echo "FAIL: $*"; exit 1; }

if [ "$(id -u)" -ne 0 ]; then echo "skipped: links need root"; exit 77; fi
for tool in ip tc setpriv python3; do
  command -v $tool >/dev/null || { echo "skipped: no $tool"; exit 77; }
done
probe="wsb-$$-probe"
if ! ip netns add "$probe" 2>/dev/null; then echo "skipped: cannot create a network namespace"; exit 77; fi
ip netns del "$probe"

out=$(mktemp)
endpoints=$(mktemp)
ns_c="wsb-$$-9-c"
ns_s="wsb-$$-9-s"
server_pid=
victim=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  [ -n "$victim" ] && kill -9 "$victim" 2>/dev/null || true
  ip netns del "$ns_c" 2>/dev/null || true
  ip netns del "$ns_s" 2>/dev/null || true
  rm -f "$out" "$endpoints"
}
trap cleanup EXIT

# 1. Without CAP_NET_ADMIN: a clear message, round trips skipped, exit 0.
setpriv --bounding-set=-net_admin --inh-caps=-net_admin "$bench" --link=lan100 \
  --benchmark_filter='^(rtt/beast/json/ping|encode/json/ints/200$)' --benchmark_repetitions=1 \
  --benchmark_min_time=0.001 >"$out" 2>&1 || fail "bench without CAP_NET_ADMIN failed: $(tail -5 "$out")"
grep -q "links need root or CAP_NET_ADMIN" "$out" || fail "no message: $(head -20 "$out")"
grep -q "^encode/json/ints/200" "$out" || fail "codec cases did not run"
grep -q "^rtt/" "$out" && fail "round trips ran without a link"
echo "ok: without CAP_NET_ADMIN the round trips are skipped with a message"

# 2. SIGKILL: the watcher removes the namespaces the killed run made.
"$bench" --link=lan100 --benchmark_filter='^rtt/beast/json/ping' --iterations=100000000 \
  --benchmark_repetitions=1 >"$out" 2>&1 &
victim=$!
# Up to 60 s: a loaded machine starts bench slowly.
for _ in $(seq 600); do
  ls /run/netns 2>/dev/null | grep -q "^wsb-$victim-" && break
  sleep 0.1
done
ls /run/netns | grep -q "^wsb-$victim-" || fail "bench made no namespaces: $(tail -5 "$out")"
sleep 1  # inside the timed case
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
for _ in $(seq 50); do
  ls /run/netns 2>/dev/null | grep -q "^wsb-$victim-" || break
  sleep 0.1
done
ls /run/netns 2>/dev/null | grep "^wsb-$victim-" && fail "namespaces left after kill -9"
echo "ok: kill -9 leaves no namespace behind"

# 3. Two hosts, stood in for by two namespaces joined by a veth pair.
ip netns add "$ns_c"
ip netns add "$ns_s"
ip link add wsbc netns "$ns_c" type veth peer name wsbs netns "$ns_s"
ip -n "$ns_c" addr add 10.213.0.1/30 dev wsbc
ip -n "$ns_s" addr add 10.213.0.2/30 dev wsbs
for ns in "$ns_c" "$ns_s"; do ip -n "$ns" link set lo up; done
ip -n "$ns_c" link set wsbc up
ip -n "$ns_s" link set wsbs up

ip netns exec "$ns_s" "$server" --only --listen beast=10.213.0.2:0 --listen gsoap=10.213.0.2:0 \
  --listen xmlrpc-c=10.213.0.2:0 --floor 10.213.0.2:0 >"$endpoints" &
server_pid=$!
for _ in $(seq 100); do
  [ "$(wc -l <"$endpoints")" -ge 4 ] && break
  sleep 0.05
done
at() { awk -v s="$1" '$1 == s { print $2 }' "$endpoints"; }
[ -n "$(at floor)" ] || fail "server printed: $(cat "$endpoints")"
ip netns exec "$ns_c" "$bench" --remote "beast=$(at beast)" --remote "gsoap=$(at gsoap)" \
  --remote "xmlrpc-c=$(at xmlrpc-c)" --remote-floor "$(at floor)" \
  --benchmark_filter='^rtt/(beast/json|gsoap/soap|xmlrpc-c/xmlrpc)/ping/same' --iterations=20 \
  --benchmark_repetitions=1 --benchmark_format=json >"$out" 2>/dev/null || fail "remote bench failed"
python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert "10.213.0.2" in d["context"]["wsbench_remote_floor"], d["context"]
rows = {b["name"].split("/")[1]: b for b in d["benchmarks"]}
assert set(rows) == {"beast", "gsoap", "xmlrpc-c"}, sorted(rows)
for stack, b in rows.items():
    assert "error_message" not in b, (stack, b.get("error_message"))
    assert b["label"].startswith("remote server, floor 10.213.0.2:"), b["label"]
    assert b["floor_n"] >= 20 and b["floor_p50_us"] > 0 and b["ratio_p50"] > 0, b
    if stack == "xmlrpc-c":
        # Its curl transport can neither add the request header nor show
        # the reply's headers.
        assert b["label"].endswith("server phases: none"), (stack, b["label"])
        continue
    assert b["label"].endswith("server phases: Server-Timing header"), (stack, b["label"])
    assert b["phase:server_parse_us"] > 0, (stack, sorted(b))
print("ok: remote rows against a server in another namespace, with floor and Server-Timing")
PY

# Every server answers the request header with Server-Timing, and only then.
soap='<?xml version="1.0"?><SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/" xmlns:wsb="urn:wsbench"><SOAP-ENV:Body><wsb:ping/></SOAP-ENV:Body></SOAP-ENV:Envelope>'
call='<?xml version="1.0"?><methodCall><methodName>wsbench.ping</methodName><params/></methodCall>'
timing() {  # timing <url> [curl args...]: the Server-Timing value of the reply
  ip netns exec "$ns_c" curl -s -o /dev/null -D - "$@" | tr -d '\r' |
    awk 'tolower($1) == "server-timing:" { $1 = ""; print substr($0, 2) }'
}
for asked in yes no; do
  header=()
  [ $asked = yes ] && header=(-H 'X-Wsbench-Server-Timing: 1')
  got_beast=$(timing "http://$(at beast)/ping" "${header[@]}" -H 'Accept: text/plain')
  got_gsoap=$(timing "http://$(at gsoap)/" "${header[@]}" -H 'Content-Type: text/xml' \
    -H 'SOAPAction: ""' --data "$soap")
  got_xmlrpc=$(timing "http://$(at xmlrpc-c)/RPC2" "${header[@]}" -H 'Content-Type: text/xml' \
    --data "$call")
  for got in "beast:$got_beast" "gsoap:$got_gsoap" "xmlrpc-c:$got_xmlrpc"; do
    value=${got#*:}
    if [ $asked = yes ]; then
      [[ "$value" =~ ^parse\;dur=[0-9.]+,\ service\;dur=[0-9.]+,\ marshal\;dur=[0-9.]+$ ]] ||
        fail "${got%%:*}: Server-Timing '$value'"
    else
      [ -z "$value" ] || fail "${got%%:*}: Server-Timing '$value' without being asked"
    fi
  done
done
echo "ok: every server sends Server-Timing when asked, and only then"
