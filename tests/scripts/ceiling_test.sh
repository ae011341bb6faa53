#!/usr/bin/env bash
# scripts/ceiling.py at its smallest, two rounds: wrk and the driver agree on
# something, nginx and Beast both serve the 15-byte ping, every server is gone.
# Skips (77) where wrk or nginx is not installed.
set -euo pipefail
build=$1
for tool in wrk nginx taskset; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 "$(dirname "$0")/../../scripts/ceiling.py" --build "$build" --duration 1 \
  --rounds 2 --concurrency 16 --agreement 16 --out "$out/ceiling.json" >"$out/table.txt" 2>&1 ||
  { cat "$out/table.txt"; exit 1; }
python3 - "$out/ceiling.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert [a["operation"] for a in report["agreement"]] == ["ping", "echo ints/200"] * 2, report
for a in report["agreement"]:
    assert a["wrk"]["requests_per_s"] > 0 and a["driver"]["requests_per_s"] > 0, a
    assert a["wrk"]["errors"] == 0 and a["driver"]["errors"] == 0, a
assert [a["round"] for a in report["agreement"]] == [0, 0, 1, 1], report["agreement"]
assert [r["round"] for r in report["ceiling"]] == [0, 1], report["ceiling"]
for row in report["ceiling"]:
    assert row["connections"] == 16, row
    assert row["nginx"]["requests_per_s"] > 0 and row["beast"]["requests_per_s"] > 0, row
    assert row["nginx"]["errors"] == 0 and row["beast"]["errors"] == 0, row
    assert row["beast_over_nginx"] > 0, row
# The summary gives each cell over both rounds: its ratios are the rounds' own.
(cell,) = report["summary"]["ceiling"]
ratios = sorted(r["beast"]["requests_per_s"] / r["nginx"]["requests_per_s"]
                for r in report["ceiling"])
assert cell["beast_over_nginx"]["n"] == 2, cell
assert abs(cell["beast_over_nginx"]["min"] - ratios[0]) < 1e-9, (cell, ratios)
assert abs(cell["beast_over_nginx"]["max"] - ratios[1]) < 1e-9, (cell, ratios)
assert len(report["summary"]["agreement"]) == 2, report["summary"]
print("ok: wrk, the driver, nginx and Beast all served in both rounds; beast/nginx =",
      [round(r, 2) for r in ratios])
PY
# Nothing the script started is left running.
if pgrep -f "wsbench-nginx-" >/dev/null; then echo "FAIL: nginx left running"; exit 1; fi
