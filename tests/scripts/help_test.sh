#!/usr/bin/env bash
# Every executable file in scripts/ answers --help and -h at once and
# without installing or building anything: exit 0, "usage" in what it
# prints, under a second (best of two tries, for a loaded machine). The
# tools that install or build (apt-get, dpkg-query, cmake, ninja, ctest,
# cargo, pip) are stubs on PATH that record being called and fail, so a
# script that reaches them is caught even where nothing is missing. Each
# script refuses --no-such-option with exit 2 and an error on stderr (the
# shell scripts in one line), again before reaching any of them.
# Arguments: BENCH WSBENCH-LOAD (optional): every option their --help lists
# must pass the wrappers' own checks (scripts/bench, scripts/e9,
# scripts/load), so the wrappers' option lists cannot drift from them; and
# a filter that matches nothing is an error (exit 1, "no case matches
# REGEX") that leaves no result file, from bench and from the wrappers'
# shared check (wsbench_cases in scripts/deps.sh).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bench=${1:-}
load=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

calls=$work/calls
mkdir "$work/bin"
for tool in apt-get apt dpkg-query cmake ninja ctest cargo pip pip3; do
  cat >"$work/bin/$tool" <<STUB
#!/bin/sh
echo "$tool \$*" >>"$calls"
echo "help_test: $tool must not run here" >&2
exit 97
STUB
  chmod +x "$work/bin/$tool"
done
stubbed() { PATH="$work/bin:$PATH" "$@" </dev/null; }

# run SCRIPT ARGS...: status in $status, output in $work/out and $work/err,
# milliseconds in $ms, and a failure if a stub was called.
run() {
  : >"$calls"
  local start
  start=$(date +%s%N)
  status=0
  stubbed "$@" >"$work/out" 2>"$work/err" || status=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  [ ! -s "$calls" ] || fail "${1#"$repo"/} ${*:2}: ran $(head -3 "$calls" | tr '\n' ';')"
}

checked=0
for script in "$repo"/scripts/*; do
  if [ ! -f "$script" ] || [ ! -x "$script" ]; then continue; fi
  name=${script#"$repo"/}
  for flag in --help -h; do
    run "$script" "$flag"
    [ "$ms" -lt 1000 ] || run "$script" "$flag"
    [ "$status" = 0 ] || fail "$name $flag exited $status: $(tail -3 "$work/err")"
    grep -qi usage "$work/out" || fail "$name $flag: no usage in $(head -3 "$work/out")"
    [ "$ms" -lt 1000 ] || fail "$name $flag took $ms ms"
    help_ms=$ms
  done
  run "$script" --no-such-option
  [ "$status" = 2 ] || fail "$name --no-such-option exited $status: $(tail -3 "$work/err")"
  [ -s "$work/err" ] || fail "$name --no-such-option: no error on stderr"
  if [[ "$name" != *.py ]]; then
    [ "$(wc -l <"$work/err")" = 1 ] || fail "$name --no-such-option: not one line: $(cat "$work/err")"
  fi
  echo "ok: $name: help in $help_ms ms, --no-such-option refused"
  checked=$((checked + 1))
done
[ "$checked" -ge 12 ] || fail "only $checked scripts checked"

# options BINARY: the long options its --help lists ("--name", "-c [ --name ]").
options() {
  "$1" --help | grep -oE -- '(^  |\[ )--[a-z][a-z-]*' | sed 's/^.*--//' | sort -u | grep -vx help
}
# accepted WRAPPER OPTION...: the wrapper gets past its option check with
# each (it then fails at a stub, which is expected here).
accepted() {
  local wrapper=$1 option
  shift
  for option; do
    status=0
    stubbed "$repo/scripts/$wrapper" "$option" >/dev/null 2>"$work/err" || status=$?
    if [ "$status" = 2 ] && grep -q "unknown option" "$work/err"; then
      fail "scripts/$wrapper refuses $option, which its binary's --help lists"
    fi
  done
  echo "ok: scripts/$wrapper accepts its binary's $# options"
}
if [ -n "$bench" ]; then
  status=0
  "$bench" --benchmark_filter='^no/such/case$' --benchmark_out="$work/none.json" \
    >/dev/null 2>"$work/err" || status=$?
  [ "$status" = 1 ] || fail "bench with a filter that matches nothing exited $status"
  grep -qx 'bench: no case matches ^no/such/case\$' "$work/err" || fail "bench: $(cat "$work/err")"
  [ ! -e "$work/none.json" ] || fail "bench left a result file for a filter that matches nothing"
  status=0
  (cd "$repo" && source scripts/deps.sh &&
    wsbench_cases e9 "$bench" --benchmark_filter='^no/such/case$') >/dev/null 2>"$work/err" ||
    status=$?
  if [ "$status" != 1 ] || [ "$(cat "$work/err")" != 'e9: no case matches ^no/such/case$' ]; then
    fail "wsbench_cases: exit $status, $(cat "$work/err")"
  fi
  cases=$(cd "$repo" && source scripts/deps.sh &&
    wsbench_cases e9 "$bench" --benchmark_filter='^memcpy/ints/200$')
  [ "$cases" = memcpy/ints/200 ] || fail "wsbench_cases lists '$cases'"
  echo "ok: a filter that matches nothing: exit 1, 'no case matches', no result file"
  mapfile -t names < <(options "$bench" | grep -v '^benchmark_')
  [ "${#names[@]}" -gt 5 ] || fail "no options read from $bench --help"
  accepted bench "${names[@]/#/--}"
  accepted e9 "${names[@]/#/--}"
fi
if [ -n "$load" ]; then
  mapfile -t names < <(options "$load" | grep -vx out)
  [ "${#names[@]}" -gt 5 ] || fail "no options read from $load --help"
  accepted load "${names[@]/#/--}"
fi
echo "$checked scripts passed"
