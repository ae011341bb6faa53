#!/usr/bin/env bash
# REDbot, a third-party HTTP linter, over every endpoint of wsbench-server's
# HTTP/1.1 stacks (redbot_check.py lists them and the allowlist). REDbot
# comes from PyPI into a venv of its own (argument 2), installed on first
# use; without PyPI the test is skipped (exit 77).
#   redbot_test.sh WSBENCH_SERVER VENV_DIR [redbot_check.py options: --json FILE]
set -euo pipefail
server=$1
venv=$2
version=2.7.1  # the REDbot whose findings docs/servers/http-conformance.md records
here=$(dirname "$0")

if ! "$venv/bin/python" -c "import redbot" 2>/dev/null ||
  [ "$("$venv/bin/python" -c 'from importlib.metadata import version; print(version("redbot"))')" != "$version" ]; then
  python3 -m venv "$venv" || { echo "FAIL: python3 -m venv (python3-venv, scripts/deps.sh)"; exit 1; }
  log=$(mktemp)
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check "redbot==$version" >"$log" 2>&1; then
    if grep -qiE 'NewConnectionError|Failed to establish|name resolution|Network is unreachable|Max retries exceeded|ConnectTimeout|ReadTimeout|ProxyError' "$log"; then
      echo "SKIP: PyPI unreachable, REDbot $version cannot be installed:"
      tail -3 "$log"
      rm -f "$log"
      exit 77
    fi
    cat "$log"
    rm -f "$log"
    echo "FAIL: pip install redbot==$version"
    exit 1
  fi
  rm -f "$log"
fi

cleanup=
source "$here/../support/server_process.sh"
"$venv/bin/python" "$here/redbot_check.py" --beast "$beast" --gsoap "$gsoap" --xmlrpc "$xmlrpc" \
  --doc "$here/../../docs/servers/http-conformance.md" "${@:3}"
