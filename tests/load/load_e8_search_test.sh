#!/usr/bin/env bash
# wsbench-load --experiment E8's search end to end on beast/json: users
# grow by a factor past the old fixed bound of 128 to a cap of 300, every
# step is served, and the run records and prints that the cap ended it;
# with a 1 ms timeout the first call fails and the run names that instead.
# The checker is then shown to fail on copies with each fault injected.
set -euo pipefail
load=$1
words=/usr/share/dict/american-english
if [ ! -r "$words" ]; then
  echo "SKIP: $words is missing (Debian package wamerican)"
  exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export WSBENCH_CACHE_DIR=$out
e8() {  # name extra-options...
  local name=$1
  shift
  "$load" --experiment E8 --load beast/json --sizes x1 --ramp-to 2 --ramp-every 0.25 --hold 0.25 \
    --repeat 1 --dictionary-dir "$out" --out "$out/$name.json" "$@" >"$out/$name.txt" \
    2>"$out/$name.err" || fail "E8 $name exited $?: $(cat "$out/$name.txt" "$out/$name.err")"
}
e8 capped --search 8:x4:300
grep -Eq "^beast/json +x1 +0: the search's cap \(300\) at 300 users$" "$out/capped.txt" ||
  fail "no 'search ended' line: $(cat "$out/capped.txt")"
e8 failing --search 8:x4:300 --timeout-ms 1

cat >"$out/check.py" <<'PY'
import json, re, sys
capped = json.load(open(sys.argv[1]))["runs"][0]
users = [s["users"] for s in capped["steps"]]
assert users == [1, 2, 8, 32, 128, 300], users
assert capped["max_users"] == 300 and capped["max_users_at_bound"], capped["max_users"]
assert capped["search_end"] == "the search's cap (300) at 300 users", capped["search_end"]
assert all(s["driver_cpu_percent"] is not None for s in capped["steps"]), capped["steps"]
failing = json.load(open(sys.argv[2]))["runs"][0]
assert sum(failing["errors"].values()) > 0, failing["errors"]
assert not failing["max_users_at_bound"], failing["max_users_at_bound"]
end = failing["search_end"]
# With a 1 ms timeout a call fails within the ramp (1 or 2 users: the first
# call can still beat the timeout on an idle machine), never after it.
at = re.search(r"at (\d+) users", end)
assert at and int(at.group(1)) <= 2 and "(timeout)" in end and "a call failed" in end, end
print(f"ok: the search went to {users[-1]} users; a failing run ended '{end}'")
PY
python3 "$out/check.py" "$out/capped.json" "$out/failing.json" || fail "the E8 search does not check"

inject() {  # name file python-statement-on-run
  python3 - "$out/$2.json" "$out/bad.json" "$3" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
run = data["runs"][0]
exec(sys.argv[3])
json.dump(data, open(sys.argv[2], "w"))
PY
  local args=("$out/capped.json" "$out/failing.json")
  [ "$2" = capped ] && args[0]=$out/bad.json || args[1]=$out/bad.json
  if python3 "$out/check.py" "${args[@]}" >/dev/null 2>&1; then fail "the checker passed $1"; fi
  echo "ok: the checker fails on $1"
}
inject "a search stopped at 128" capped 'run["steps"] = run["steps"][:-1]; run["max_users"] = 128'
inject "no reason recorded" capped 'run["search_end"] = ""'
inject "a failure without its reason" failing 'run["search_end"] = "the search\x27s cap (300) at 300 users"'
inject "a failure after the ramp" failing 'run["search_end"] = "server\x27s limit: a call failed at 8 users (timeout)"'
