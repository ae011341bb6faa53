#!/usr/bin/env bash
# scripts/ceiling.py in two parts. First its arithmetic on known data: wrk's
# text, /proc/<pid>/stat ticks, CPU per request, the Beast/nginx ratios, the
# spread over rounds, the raw replies compared before timing and nginx's
# configuration. Then the script at its smallest, two rounds: wrk and the
# driver agree on something, nginx and Beast send the same /ping reply and
# both are timed, every server is gone. The second part skips (77) where wrk
# or nginx is not installed.
set -euo pipefail
build=$1
scripts="$(dirname "$0")/../../scripts"
PYTHONPATH="$scripts" python3 - <<'PY'
import ceiling

# wrk 4.1's output of a clean run and of one with errors.
CLEAN = """Running 5s test @ http://127.0.0.1:40123/ping
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   452.11us  101.20us   4.02ms   91.03%
    Req/Sec    70.54k     2.31k   74.80k    72.00%
  705432 requests in 5.00s, 95.52MB read
Requests/sec: 141086.40
Transfer/sec:     19.10MB
"""
FAULTY = CLEAN.replace("Requests/sec", "  Socket errors: connect 3, read 5, write 7, timeout 11\n"
                       "  Non-2xx or 3xx responses: 13\nRequests/sec")
w = ceiling.parse_wrk(CLEAN)
assert w["requests"] == 705432 and w["requests_per_s"] == 141086.40, w
assert w["errors"] == 0 and w["timeouts"] == 0 and w["non_2xx"] == 0, w
w = ceiling.parse_wrk(FAULTY)
assert (w["connect_errors"], w["read_errors"], w["write_errors"], w["timeouts"],
        w["non_2xx"]) == (3, 5, 7, 11, 13), w
assert w["errors"] == 3 + 5 + 7 + 13, w  # timeouts are reported apart

# A command name with a space and a ')' must not shift the fields:
# utime (field 14) 1234 and stime (field 15) 567.
STAT = ("4242 (wsb server) x) S 1 4242 4242 0 -1 4194560 900 0 0 0 1234 567 0 0 20 0 2 0 "
        "100 0 0 18446744073709551615")
assert ceiling.stat_ticks(STAT) == 1801, ceiling.stat_ticks(STAT)
assert ceiling.per_request_us(2.0, 400000) == 5.0
assert ceiling.per_request_us(1.0, 0) == 0.0

def run(rate, cpu_us):
    return {"requests_per_s": rate, "server_cpu_us_per_request": cpu_us, "errors": 0,
            "timeouts": 0}

# Beast twice as fast and at half the CPU per request of nginx in round 0,
# level in round 1, 1.5x and 0.8x in round 2: ratios are Beast over nginx.
rows = [ceiling.ceiling_row(0, 64, run(100000, 10.0), run(200000, 5.0), False),
        ceiling.ceiling_row(1, 64, run(100000, 10.0), run(100000, 10.0), True),
        ceiling.ceiling_row(2, 64, run(80000, 12.5), run(120000, 10.0), False)]
assert [r["beast_over_nginx"] for r in rows] == [2.0, 1.0, 1.5], rows
assert [r["cpu_per_request_beast_over_nginx"] for r in rows] == [0.5, 1.0, 0.8], rows
(cell,) = ceiling.summarize({"agreement": [], "ceiling": rows})["ceiling"]
assert cell["beast_over_nginx"]["median"] == 1.5, cell
assert (cell["beast_over_nginx"]["min"], cell["beast_over_nginx"]["max"]) == (1.0, 2.0), cell
assert cell["cpu_per_request_beast_over_nginx"]["median"] == 0.8, cell
assert cell["nginx_requests_per_s"]["median"] == 100000, cell
s = ceiling.spread([90.0, 100.0, 110.0])
assert abs(s["cv"] - 0.1) < 1e-12 and s["median"] == 100.0 and s["n"] == 3, s
assert ceiling.spread([7.0])["cv"] == 0.0
assert ceiling.fmt(s, 1) == "100.0 (90.0-110.0, CV 10%)", ceiling.fmt(s, 1)

# The two replies as nginx 1.22 and Beast send them.
NGINX = (b"HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Sun, 29 Nov 2026 06:00:00 GMT\r\n"
         b"Content-Type: application/json\r\nContent-Length: 15\r\nConnection: keep-alive\r\n"
         b'\r\n{"text":"pong"}')
BEAST = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n"
         b'Date: Sun, 29 Nov 2026 06:00:00 GMT\r\n\r\n{"text":"pong"}')
n, b = ceiling.parse_reply(NGINX), ceiling.parse_reply(BEAST)
assert n["fields"] == ["Server", "Date", "Content-Type", "Content-Length", "Connection"], n
assert b["status"] == 200 and b["body"] == ceiling.PING_BODY, b
assert ceiling.reply_mismatches(b, n) == [], ceiling.reply_mismatches(b, n)
assert ceiling.describe_fields("beast", b) == "beast: Content-Type, Content-Length, Date"
other = ceiling.parse_reply(NGINX.replace(b"application/json", b"text/plain")
                            .replace(b"pong", b"ping"))
problems = ceiling.reply_mismatches(b, other)
assert len(problems) == 2 and all(p.startswith("nginx") for p in problems), problems
try:
    ceiling.parse_reply(BEAST[:-3])
    raise AssertionError("a short body passed")
except ValueError:
    pass

# nginx answers from memory: no root, no file, the same body and type.
conf = ceiling.nginx_conf("/p", 8080)
for line in ("return 200 '{\"text\":\"pong\"}';", "default_type application/json;",
             "server_tokens off;", "access_log off;", "worker_processes 1;"):
    assert line in conf, (line, conf)
assert "root " not in conf, conf
assert ceiling.descriptors_needed([16, 64, 1000]) == 2256
print("ok: wrk's text, /proc ticks, CPU per request, Beast/nginx ratios, spread, replies and "
      "nginx's configuration on known data")
PY

for tool in wrk nginx taskset; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
python3 "$scripts/ceiling.py" --build "$build" --duration 1 \
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
assert [r["beast_first"] for r in report["ceiling"]] == [False, True], report["ceiling"]
for name in ("nginx", "beast"):
    reply = report["replies"][name]
    assert reply["status"] == 200 and reply["body"] == '{"text":"pong"}', reply
    assert reply["content_type"] == "application/json" and "Date" in reply["fields"], reply
for row in report["ceiling"]:
    assert row["connections"] == 16, row
    for name in ("nginx", "beast"):
        assert row[name]["requests_per_s"] > 0 and row[name]["errors"] == 0, row
        assert row[name]["server_cpu_us_per_request"] > 0, row
    assert row["beast_over_nginx"] > 0 and row["cpu_per_request_beast_over_nginx"] > 0, row
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
