#!/usr/bin/env bash
# The beast server holds 1000 concurrent keep-alive connections: wrk (a
# load generator nobody here wrote) runs c=1000 against /ping for a few
# seconds and must see no socket error, timeout or non-2xx reply. Server
# and wrk on different vCPUs where there are two. Skips (77) without wrk.
# usage: beast_wrk_test.sh WSBENCH_SERVER [SECONDS] [TIMEOUT_SECONDS]
set -euo pipefail
server_bin=$1
seconds=${2:-3}
timeout=${3:-2}
command -v wrk >/dev/null || { echo "SKIP: wrk is not installed (Debian package wrk)"; exit 77; }
# 1000 connections on each side, plus the process's own descriptors.
ulimit -n 4096 2>/dev/null || { echo "SKIP: cannot raise the descriptor limit to 4096"; exit 77; }

pin_server=() pin_wrk=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  pin_server=(taskset -c 0) pin_wrk=(taskset -c 1)
fi
out=$(mktemp)
trap 'kill $pid 2>/dev/null || true; rm -f "$out"' EXIT
"${pin_server[@]}" "$server_bin" --only --listen beast=127.0.0.1:0 >"$out" &
pid=$!
for _ in $(seq 100); do
  [ -s "$out" ] && break
  sleep 0.05
done
beast=$(awk '$1 == "beast" { print $2 }' "$out")
[ -n "$beast" ] || { echo "no beast endpoint: $(cat "$out")"; exit 1; }

report=$("${pin_wrk[@]}" wrk -t1 -c1000 -d"${seconds}s" --timeout "${timeout}s" "http://$beast/ping")
echo "$report"
requests=$(awk '/requests in/ { print $1 }' <<<"$report")
[ "${requests:-0}" -gt 1000 ] || { echo "FAIL: only ${requests:-0} requests served"; exit 1; }
if grep -E "Socket errors|Non-2xx" <<<"$report"; then
  echo "FAIL: wrk saw errors"
  exit 1
fi
kill -0 "$pid" || { echo "FAIL: the server died"; exit 1; }
echo "PASS: c=1000, $requests requests, no errors"
