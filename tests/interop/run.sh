#!/usr/bin/env bash
# run.sh CLIENT SERVER PAYLOAD_JSON: one interop test against a
# wsbench-server child on ephemeral ports. CLIENT: xmlrpc_client (Python's
# xmlrpc.client), zeep (Python zeep, from the WSDL, with no network),
# curl_soap (a hand-written SOAP 1.1 envelope), curl_rest (every REST route
# and content type). Exits 77 (skipped) when the client is not installed.
set -euo pipefail
client=$1
server=$2
payload_json=$3
here=$(cd "$(dirname "$0")" && pwd)
skip() {
  echo "SKIP: $*"
  exit 77
}

# A Python 3 that has `module`: the first python3 on PATH, else Debian's own,
# where Debian's python3-* packages install.
python_with() {
  local py
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null && "$py" -c "import $1" 2>/dev/null; then
      echo "$py"
      return 0
    fi
  done
  return 1
}

case $client in
  xmlrpc_client) py=$(python_with xmlrpc.client) || skip "no python3 with xmlrpc.client" ;;
  zeep) py=$(python_with zeep) || skip "python3 zeep is not installed (apt-get install python3-zeep)" ;;
  curl_soap | curl_rest) command -v curl >/dev/null || skip "curl is not installed (apt-get install curl)" ;;
  *)
    echo "run.sh: unknown client '$client'" >&2
    exit 2
    ;;
esac

# zeep must find everything the WSDL needs on the server: where an empty
# network namespace can be made, client and server run in one, with only
# loopback up, so any fetch from elsewhere fails (zeep_test.py also
# refuses non-loopback URLs itself, for where it cannot).
if [ "$client" = zeep ] && [ -z "${WSBENCH_INTEROP_NETNS:-}" ] && command -v unshare >/dev/null &&
  command -v ip >/dev/null && unshare -rn true 2>/dev/null; then
  export WSBENCH_INTEROP_NETNS=1
  exec unshare -rn bash -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "$@"
fi

cleanup=
source "$here/../support/server_process.sh"

case $client in
  xmlrpc_client)
    "$py" "$here/xmlrpc_client_test.py" --xmlrpc-c "$xmlrpc" --beast "$beast" \
      --payload-json "$payload_json"
    ;;
  zeep)
    "$py" "$here/zeep_test.py" --gsoap "$gsoap" --beast "$beast" --payload-json "$payload_json"
    ;;
  curl_soap)
    bash "$here/curl_soap_test.sh" "$gsoap" "$beast" "$here/../data"
    ;;
  curl_rest)
    bash "$here/curl_rest_test.sh" "$beast" "$payload_json"
    ;;
esac
