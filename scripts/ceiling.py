#!/usr/bin/env python3
"""Cross-checks of the load side against tools nobody here wrote (wrk, nginx).

1. wrk and wsbench-load against Beast's REST /ping and a JSON echo at the
   same concurrency: their throughputs should agree within 10%.
2. nginx serving a static 15-byte body (the size of Beast's JSON ping reply)
   as the HTTP/1.1 ceiling of this machine, and Beast against it as a ratio
   measured in the same run, at each concurrency; servers pinned to one
   vCPU, wrk (and the driver) on another.

Every server is started here on 127.0.0.1 and stopped on exit; every load is
bounded by its duration. The whole sequence runs --rounds times, so each
figure comes with its spread over rounds (median, min-max) and each ratio is
taken within a round, between runs seconds apart. Prints tables and writes
JSON (--out); a line per run on stderr says how far the sequence is.
scripts/ceiling installs wrk and nginx, builds, and picks the output folder.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from progress import Progress

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PING_BODY = b'{"text":"pong"}'  # Beast's JSON ping reply, 15 bytes


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, timeout=10.0):
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def pinned(cpu, argv):
    return (["taskset", "-c", str(cpu)] if cpu is not None else []) + argv


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


class Beast:
    def __init__(self, build, cpu):
        argv = [os.path.join(build, "wsbench-server"), "--only", "--listen", "beast=127.0.0.1:0"]
        if cpu is not None:
            argv.append(f"--cpu={cpu}")
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().split()
        if len(line) != 2 or line[0] != "beast":
            stop(self.process)
            raise RuntimeError(f"wsbench-server printed {line!r}, not its beast endpoint")
        self.url = "http://" + line[1]


class Nginx:
    def __init__(self, cpu):
        self.dir = tempfile.mkdtemp(prefix="wsbench-nginx-")
        self.port = free_port()
        www = os.path.join(self.dir, "www")
        os.mkdir(www)
        with open(os.path.join(www, "ping"), "wb") as f:
            f.write(PING_BODY)
        # nginx's workers run as an unprivileged user when started as root.
        for path in (self.dir, www):
            os.chmod(path, 0o755)
        os.chmod(os.path.join(www, "ping"), 0o644)
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            # One worker on one vCPU, as Beast's server is pinned; keep-alive
            # without a request cap, as Beast keeps connections.
            f.write(f"""worker_processes 1;
daemon off;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  default_type application/json;
  server {{
    listen 127.0.0.1:{self.port} backlog=4096;
    root {www};
  }}
}}
""")
        self.process = subprocess.Popen(
            pinned(cpu, ["nginx", "-p", self.dir, "-c", conf, "-e", f"{self.dir}/error.log"]))
        wait_listening(self.port)
        self.url = f"http://127.0.0.1:{self.port}"

    def pids(self):
        """The master and its workers."""
        children = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True,
                                  text=True).stdout.split()
        return [self.process.pid] + [int(c) for c in children]

    def close(self):
        stop(self.process)
        shutil.rmtree(self.dir, ignore_errors=True)


def cpu_seconds(pids):
    """User + system CPU of these processes so far (/proc/<pid>/stat)."""
    ticks = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


WRK_ERRORS = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")


def check_ping(url):
    """Verify before timing: the server answers /ping with the 15-byte body."""
    with urllib.request.urlopen(url + "/ping", timeout=10) as reply:
        body = reply.read()
    if reply.status != 200 or body != PING_BODY:
        raise RuntimeError(f"{url}/ping answered {reply.status} {body!r}, not {PING_BODY!r}")


def wrk(url, connections, duration, cpu, threads, server_pids, script=None):
    argv = ["wrk", f"-t{min(threads, connections)}", f"-c{connections}", f"-d{duration}s",
            "--timeout", "2s"]
    if script:
        argv += ["-s", script]
    cpu_before = cpu_seconds(server_pids)
    out = subprocess.run(pinned(cpu, argv + [url]), capture_output=True, text=True,
                         timeout=duration + 30, check=True).stdout
    server_cpu_s = cpu_seconds(server_pids) - cpu_before
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    total = re.search(r"(\d+) requests in", out)
    errors = WRK_ERRORS.search(out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    result = {"requests_per_s": float(rate.group(1)) if rate else 0.0,
              "connect_errors": 0, "read_errors": 0, "write_errors": 0, "timeouts": 0,
              "non_2xx": int(non2xx.group(1)) if non2xx else 0,
              "requests": int(total.group(1)) if total else 0, "server_cpu_s": server_cpu_s}
    # The server's CPU per request: unlike throughput, it does not depend on
    # how much of a shared vCPU the server won.
    result["server_cpu_us_per_request"] = (server_cpu_s * 1e6 / result["requests"]
                                           if result["requests"] else 0.0)
    if errors:
        for key, value in zip(("connect_errors", "read_errors", "write_errors", "timeouts"),
                              errors.groups()):
            result[key] = int(value)
    result["errors"] = sum(result[k] for k in ("connect_errors", "read_errors", "write_errors",
                                               "non_2xx"))
    return result


def driver(build, op, connections, duration, work):
    out = os.path.join(work, "driver.json")
    subprocess.run([os.path.join(build, "wsbench-load"), "--load", "beast/json", "--op", op,
                    "-c", str(connections), "-d", str(duration), "--timeout-ms", "2000",
                    "--out", out], capture_output=True, text=True, timeout=duration + 60,
                   check=False)
    with open(out) as f:
        run = json.load(f)["runs"][0]
    return {"requests_per_s": run["throughput_per_s"], "errors": sum(run["errors"].values()),
            "driver_cpu_ms_per_call": run["driver_cpu_ms_per_call"]}


def spread(values):
    """Median, min and max of one figure over the rounds."""
    return {"n": len(values), "median": statistics.median(values), "min": min(values),
            "max": max(values)}


def fmt(s, digits=0):
    """'median (min-max)', or the value alone for one round."""
    if s["n"] == 1:
        return f"{s['median']:,.{digits}f}"
    return f"{s['median']:,.{digits}f} ({s['min']:,.{digits}f}-{s['max']:,.{digits}f})"


def over(rows, *path):
    """spread() of the figure at `path` (keys into each row) over the rounds."""
    values = []
    for row in rows:
        for key in path:
            row = row[key]
        values.append(row)
    return spread(values)


def summarize(report):
    """Each cell's figures over the rounds."""
    agreement, ceiling = {}, {}
    for a in report["agreement"]:
        agreement.setdefault((a["operation"], a["connections"]), []).append(a)
    for r in report["ceiling"]:
        ceiling.setdefault(r["connections"], []).append(r)
    summary = {"agreement": [], "ceiling": []}
    for (op, c), rows in agreement.items():
        summary["agreement"].append({
            "operation": op, "connections": c,
            "wrk_requests_per_s": over(rows, "wrk", "requests_per_s"),
            "driver_requests_per_s": over(rows, "driver", "requests_per_s"),
            "driver_over_wrk": over(rows, "driver_over_wrk"),
            "errors_wrk": sum(a["wrk"]["errors"] + a["wrk"]["timeouts"] for a in rows),
            "errors_driver": sum(a["driver"]["errors"] for a in rows),
            "driver_cpu_ms_per_call": over(rows, "driver", "driver_cpu_ms_per_call")})
    for c, rows in ceiling.items():
        summary["ceiling"].append({
            "connections": c,
            "nginx_requests_per_s": over(rows, "nginx", "requests_per_s"),
            "beast_requests_per_s": over(rows, "beast", "requests_per_s"),
            "beast_over_nginx": over(rows, "beast_over_nginx"),
            "errors_nginx": sum(r["nginx"]["errors"] + r["nginx"]["timeouts"] for r in rows),
            "errors_beast": sum(r["beast"]["errors"] + r["beast"]["timeouts"] for r in rows),
            "nginx_cpu_us_per_request": over(rows, "nginx", "server_cpu_us_per_request"),
            "beast_cpu_us_per_request": over(rows, "beast", "server_cpu_us_per_request")})
    return summary


def connections(text):
    return [int(x) for x in text.split(",") if x]


def runs_per_round(args):
    """wrk and the driver per agreement cell and operation; nginx and Beast per ceiling cell."""
    return 4 * len(connections(args.agreement)) + 2 * len(connections(args.concurrency))


def run_round(args, round_index, beast, nginx, echo, work, client_cpu, report, progress):
    """One pass of every agreement and ceiling cell, appended to report."""
    def step(what):
        progress.begin(f"round {round_index + 1}: {what}")
        progress.advance()

    # The driver starts its own server, pinned the same way; this one is
    # idle meanwhile.
    for c in connections(args.agreement):
        for name, path, script, op in (("ping", "/ping", None, "ping"),
                                       ("echo ints/200", "/echo", echo, "echo:ints/200")):
            # As many wrk threads as driver clients: on a shared vCPU the
            # scheduler gives each thread its share, so equal thread counts
            # get equal CPU.
            step(f"wrk against Beast, {name}, c={c}")
            by_wrk = wrk(beast.url + path, c, args.duration, client_cpu, c,
                         [beast.process.pid], script)
            step(f"wsbench-load against Beast, {name}, c={c}")
            by_driver = driver(args.build, op, c, args.duration, work)
            ratio = by_driver["requests_per_s"] / by_wrk["requests_per_s"]
            report["agreement"].append({"round": round_index, "operation": name,
                                        "connections": c, "wrk": by_wrk, "driver": by_driver,
                                        "driver_over_wrk": ratio})
    for c in connections(args.concurrency):
        step(f"wrk against nginx, c={c}")
        n = wrk(nginx.url + "/ping", c, args.duration, client_cpu, args.wrk_threads,
                nginx.pids())
        step(f"wrk against Beast /ping, c={c}")
        b = wrk(beast.url + "/ping", c, args.duration, client_cpu, args.wrk_threads,
                [beast.process.pid])
        report["ceiling"].append({"round": round_index, "connections": c, "nginx": n,
                                  "beast": b,
                                  "beast_over_nginx": b["requests_per_s"] / n["requests_per_s"]
                                  if n["requests_per_s"] else 0.0})


def main():
    # SIGTERM unwinds like Ctrl-C, so the servers started here are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Typical time on 2 vCPUs: about 4 minutes with the defaults (14 runs of 5 s "
               "per round, 3 rounds).")
    parser.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk or driver run")
    parser.add_argument("--concurrency", default="16,64,1000",
                        help="connections for the nginx/Beast comparison")
    parser.add_argument("--agreement", default="16,64",
                        help="connections for the wrk/driver agreement check")
    parser.add_argument("--wrk-threads", type=int, default=2,
                        help="wrk threads for the nginx/Beast comparison (wrk's default)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="times the whole sequence runs; figures are given over rounds")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()
    if args.rounds < 1:
        sys.exit("ceiling: --rounds must be at least 1")
    for tool in ("wrk", "nginx", "taskset"):
        if shutil.which(tool) is None:
            sys.exit(f"ceiling: {tool} is not installed (scripts/ceiling installs wrk and "
                     "nginx-light)")
    two = os.cpu_count() >= 2
    server_cpu, client_cpu = (1, 0) if two else (None, None)
    placement = f"server cpu {server_cpu}, wrk cpu {client_cpu}" if two else "unpinned"
    work = tempfile.mkdtemp(prefix="wsbench-ceiling-")
    report = {"placement": placement, "duration_s": args.duration, "rounds": args.rounds,
              "wrk_threads": args.wrk_threads, "load_average": os.getloadavg(), "agreement": [],
              "ceiling": []}
    beast = nginx = None
    try:
        beast = Beast(args.build, server_cpu)
        check_ping(beast.url)
        body = urllib.request.urlopen(beast.url + "/payloads/ints/200", timeout=10).read()
        echo = os.path.join(work, "echo.lua")
        with open(os.path.join(work, "body.json"), "wb") as f:
            f.write(body)
        with open(echo, "w") as f:
            f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                    f'local f = io.open("{work}/body.json", "rb")\nwrk.body = f:read("*a")\n'
                    "f:close()\n")
        nginx = Nginx(server_cpu)
        check_ping(nginx.url)
        total = args.rounds * runs_per_round(args)
        # Each run takes its duration and about a second to start and stop.
        progress = Progress("ceiling", total, typical=[args.duration + 1] * total)
        for round_index in range(args.rounds):
            run_round(args, round_index, beast, nginx, echo, work, client_cpu, report, progress)
    finally:
        if nginx:
            nginx.close()
        if beast:
            stop(beast.process)
        shutil.rmtree(work, ignore_errors=True)

    report["summary"] = summarize(report)
    print(f"placement: {placement}; {args.duration} s per run; wrk -t{args.wrk_threads}; "
          f"{args.rounds} round(s), each figure the median (min-max) over them, each ratio "
          f"taken within a round; load average at the start {report['load_average'][0]:.1f}")
    print("\nwrk (one thread per connection) and wsbench-load against Beast (req/s; within 10%?)")
    for a in report["summary"]["agreement"]:
        print(f"  {a['operation']:<14} c={a['connections']:<5} wrk {fmt(a['wrk_requests_per_s'])}"
              f"  driver {fmt(a['driver_requests_per_s'])}  driver/wrk "
              f"{fmt(a['driver_over_wrk'], 2)}  errors wrk/driver {a['errors_wrk']}/"
              f"{a['errors_driver']}  driver cpu ms/call {fmt(a['driver_cpu_ms_per_call'], 4)}")
    print("\nnginx (static 15 B) and Beast /ping under wrk (req/s)")
    for r in report["summary"]["ceiling"]:
        print(f"  c={r['connections']:<5} nginx {fmt(r['nginx_requests_per_s'])}  beast "
              f"{fmt(r['beast_requests_per_s'])}  beast/nginx {fmt(r['beast_over_nginx'], 2)}  "
              f"errors+timeouts nginx/beast {r['errors_nginx']}/{r['errors_beast']}  "
              f"cpu us/req nginx {fmt(r['nginx_cpu_us_per_request'], 1)} beast "
              f"{fmt(r['beast_cpu_us_per_request'], 1)}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
        print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
