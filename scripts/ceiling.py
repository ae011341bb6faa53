#!/usr/bin/env python3
"""Cross-checks of the load side against tools nobody here wrote (wrk, nginx).

1. wrk and wsbench-load against Beast's REST /ping and a JSON echo at the
   same concurrency: their throughputs should agree within 10%.
2. nginx answering /ping the way nginx serves a fixed reply (`return 200`
   with Beast's body and Content-Type: no file, no access log, no version
   in Server) as this machine's HTTP/1.1 anchor, and Beast against it at
   each concurrency: requests per second and the server's CPU per request,
   each as Beast/nginx within a round. Both servers get one worker (one
   nginx worker process, one Beast I/O thread) pinned to the same vCPU, wrk
   (and the driver) another.

Before timing, one raw reply of each server to wrk's request is read: the
status and body must be equal and the Content-Type the same; the header
field names of each are recorded. Every server is started here on
127.0.0.1 and stopped on exit; every load is bounded by its duration. The
whole sequence runs --rounds times (the repetitions, interleaved: nginx and
Beast alternate which goes first), so each figure comes with its spread over
rounds (median, min-max, CV) and each ratio is taken within a round, between
runs seconds apart. wrk at c=1000 needs more descriptors than the usual
1024: the soft limit is raised to the hard one, and the run refuses to start
when even that is too few. Prints tables and writes JSON (--out); a line per
run on stderr says how far the sequence is. scripts/ceiling installs wrk
and nginx, builds, and picks the output folder.
"""
import argparse
import json
import os
import re
import resource
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
PING_TYPE = "application/json"  # its Content-Type when the request has no Accept


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
        # One I/O thread, as nginx gets one worker process.
        argv = [os.path.join(build, "wsbench-server"), "--only", "--listen", "beast=127.0.0.1:0",
                "--io-threads", "1"]
        if cpu is not None:
            argv.append(f"--cpu={cpu}")
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().split()
        if len(line) != 2 or line[0] != "beast":
            stop(self.process)
            raise RuntimeError(f"wsbench-server printed {line!r}, not its beast endpoint")
        self.url = "http://" + line[1]

    def pids(self):
        return [self.process.pid]


def nginx_conf(prefix, port, body=PING_BODY, content_type=PING_TYPE):
    """nginx's configuration: /ping answered from memory, as nginx serves a
    fixed reply; everything else 404."""
    text = body.decode()
    if "'" in text or "\\" in text:
        raise ValueError(f"{text!r} does not fit in nginx's single quotes")
    # One worker, as Beast's server has one I/O thread; keep-alive without a
    # request cap, as Beast keeps connections; enough descriptors for c=1000.
    return f"""worker_processes 1;
worker_rlimit_nofile 8192;
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  server_tokens off;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    location = /ping {{
      default_type {content_type};
      return 200 '{text}';
    }}
    location / {{ return 404; }}
  }}
}}
"""


class Nginx:
    def __init__(self, cpu):
        self.dir = tempfile.mkdtemp(prefix="wsbench-nginx-")
        self.port = free_port()
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write(nginx_conf(self.dir, self.port))
        # taskset's mask is inherited by the master's worker: the same vCPU
        # as Beast's threads.
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


def stat_ticks(stat):
    """User + system clock ticks from the text of /proc/<pid>/stat. The
    command name may hold spaces and parentheses, so fields count from the
    last ')': utime and stime are fields 14 and 15 of proc(5)."""
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def cpu_seconds(pids):
    """User + system CPU of these processes (all their threads) so far."""
    ticks = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            ticks += stat_ticks(f.read())
    return ticks / os.sysconf("SC_CLK_TCK")


WRK_ERRORS = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")


def parse_wrk(out):
    """wrk's totals from its text output: requests, rate, errors."""
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    total = re.search(r"(\d+) requests in", out)
    errors = WRK_ERRORS.search(out)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    result = {"requests_per_s": float(rate.group(1)) if rate else 0.0,
              "connect_errors": 0, "read_errors": 0, "write_errors": 0, "timeouts": 0,
              "non_2xx": int(non2xx.group(1)) if non2xx else 0,
              "requests": int(total.group(1)) if total else 0}
    if errors:
        for key, value in zip(("connect_errors", "read_errors", "write_errors", "timeouts"),
                              errors.groups()):
            result[key] = int(value)
    result["errors"] = sum(result[k] for k in ("connect_errors", "read_errors", "write_errors",
                                               "non_2xx"))
    return result


def per_request_us(cpu_s, requests):
    """The server's CPU per request in microseconds: unlike throughput, it
    does not depend on how much of a shared vCPU the server won."""
    return cpu_s * 1e6 / requests if requests else 0.0


def ratio(beast, nginx):
    """Beast/nginx, 0 where nginx has no figure."""
    return beast / nginx if nginx else 0.0


def wrk(url, connections, duration, cpu, threads, server_pids, script=None):
    argv = ["wrk", f"-t{min(threads, connections)}", f"-c{connections}", f"-d{duration}s",
            "--timeout", "2s"]
    if script:
        argv += ["-s", script]
    cpu_before = cpu_seconds(server_pids)
    out = subprocess.run(pinned(cpu, argv + [url]), capture_output=True, text=True,
                         timeout=duration + 30, check=True).stdout
    result = parse_wrk(out)
    result["server_cpu_s"] = cpu_seconds(server_pids) - cpu_before
    result["server_cpu_us_per_request"] = per_request_us(result["server_cpu_s"],
                                                         result["requests"])
    return result


def parse_reply(raw):
    """Status, header field names (in order), Content-Type and body of one
    HTTP/1.1 reply framed by Content-Length."""
    head, sep, rest = raw.partition(b"\r\n\r\n")
    if not sep:
        raise ValueError(f"no end of header in {raw[:200]!r}")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    fields, values = [], {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields.append(name)
        values.setdefault(name.lower(), value.strip())
    length = int(values.get("content-length", "0"))
    if len(rest) < length:
        raise ValueError(f"body of {len(rest)} bytes, Content-Length {length}")
    return {"status": status, "fields": fields,
            "content_type": values.get("content-type", ""), "body": rest[:length]}


def fetch_reply(url, path="/ping", timeout=10.0):
    """One reply to the request wrk sends (GET, Host only, keep-alive), read
    from a raw socket so every header field is seen as sent."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    raw = b""
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            raw += chunk
            try:
                return parse_reply(raw)
            except (ValueError, IndexError):
                continue  # not all of it yet
    return parse_reply(raw)


def reply_mismatches(beast, nginx, body=PING_BODY, content_type=PING_TYPE):
    """What keeps the two replies from being the same reply, if anything."""
    problems = []
    for name, r in (("beast", beast), ("nginx", nginx)):
        if r["status"] != 200:
            problems.append(f"{name} answered status {r['status']}")
        if r["body"] != body:
            problems.append(f"{name} answered body {r['body']!r}, not {body!r}")
        if r["content_type"] != content_type:
            problems.append(f"{name} answered Content-Type {r['content_type']!r}, "
                            f"not {content_type!r}")
    return problems


def describe_fields(name, reply):
    """'nginx: Server, Date, Content-Type, ...' for the report."""
    return f"{name}: {', '.join(reply['fields'])}"


def descriptors_needed(concurrency):
    """wrk's connections, the server's as many, and some room for each."""
    return 2 * max(concurrency) + 256


def raise_descriptor_limit(needed):
    """Soft limit up to the hard one; the limit in force, or an exit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        target = hard if hard == resource.RLIM_INFINITY else max(soft, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    if soft != resource.RLIM_INFINITY and soft < needed:
        sys.exit(f"ceiling: {needed} file descriptors needed for the connections asked, the "
                 f"hard limit is {hard} (raise it: ulimit -Hn, or run as root)")
    return soft


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
    """Median, min, max and CV (sample standard deviation over the mean) of
    one figure over the rounds."""
    mean = statistics.fmean(values)
    cv = statistics.stdev(values) / mean if len(values) > 1 and mean else 0.0
    return {"n": len(values), "median": statistics.median(values), "min": min(values),
            "max": max(values), "cv": cv}


def fmt(s, digits=0):
    """'median (min-max, CV x%)', or the value alone for one round."""
    if s["n"] == 1:
        return f"{s['median']:,.{digits}f}"
    return (f"{s['median']:,.{digits}f} ({s['min']:,.{digits}f}-{s['max']:,.{digits}f}, "
            f"CV {100 * s['cv']:.0f}%)")


def over(rows, *path):
    """spread() of the figure at `path` (keys into each row) over the rounds."""
    values = []
    for row in rows:
        for key in path:
            row = row[key]
        values.append(row)
    return spread(values)


def ceiling_row(round_index, connections, n, b, beast_first):
    """One round's nginx and Beast runs at one concurrency, with both ratios."""
    return {"round": round_index, "connections": connections, "beast_first": beast_first,
            "nginx": n, "beast": b,
            "beast_over_nginx": ratio(b["requests_per_s"], n["requests_per_s"]),
            "cpu_per_request_beast_over_nginx": ratio(b["server_cpu_us_per_request"],
                                                      n["server_cpu_us_per_request"])}


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
            "beast_cpu_us_per_request": over(rows, "beast", "server_cpu_us_per_request"),
            "cpu_per_request_beast_over_nginx": over(rows, "cpu_per_request_beast_over_nginx")})
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
            by_wrk = wrk(beast.url + path, c, args.duration, client_cpu, c, beast.pids(), script)
            step(f"wsbench-load against Beast, {name}, c={c}")
            by_driver = driver(args.build, op, c, args.duration, work)
            report["agreement"].append({
                "round": round_index, "operation": name, "connections": c, "wrk": by_wrk,
                "driver": by_driver,
                "driver_over_wrk": by_driver["requests_per_s"] / by_wrk["requests_per_s"]})
    # Which server goes first alternates with the round, so a drift of the
    # machine's load within a round does not favour one of them.
    beast_first = round_index % 2 == 1
    for c in connections(args.concurrency):
        results = {}
        for name in (("beast", "nginx") if beast_first else ("nginx", "beast")):
            server = beast if name == "beast" else nginx
            step(f"wrk against {name} /ping, c={c}")
            results[name] = wrk(server.url + "/ping", c, args.duration, client_cpu,
                                args.wrk_threads, server.pids())
        report["ceiling"].append(ceiling_row(round_index, c, results["nginx"], results["beast"],
                                             beast_first))


def print_report(report, args):
    print(f"placement: {report['placement']}; one nginx worker, one Beast I/O thread; "
          f"{args.duration} s per run; wrk -t{args.wrk_threads}; {args.rounds} round(s), "
          "nginx and Beast alternating first, each figure the median (min-max, CV) over them, "
          "each ratio taken within a round; open-file limit "
          f"{report['nofile_limit']}; load average (1 min) at the start "
          f"{report['load_average'][0]:.1f}, at the end {report['load_average_end'][0]:.1f}")
    print("\n/ping as wrk asks for it (status, body, then header field names):")
    for name, r in report["replies"].items():
        print(f"  {r['status']} {r['body']}  {name}: {', '.join(r['fields'])}")
    if report["summary"]["agreement"]:
        print("\nwrk (one thread per connection) and wsbench-load against Beast "
              "(req/s; within 10%?)")
    for a in report["summary"]["agreement"]:
        print(f"  {a['operation']:<14} c={a['connections']:<5} wrk {fmt(a['wrk_requests_per_s'])}"
              f"  driver {fmt(a['driver_requests_per_s'])}  driver/wrk "
              f"{fmt(a['driver_over_wrk'], 2)}  errors wrk/driver {a['errors_wrk']}/"
              f"{a['errors_driver']}  driver cpu ms/call {fmt(a['driver_cpu_ms_per_call'], 4)}")
    print("\nnginx (return 200) and Beast /ping under wrk")
    for r in report["summary"]["ceiling"]:
        print(f"  c={r['connections']:<5} req/s nginx {fmt(r['nginx_requests_per_s'])}  beast "
              f"{fmt(r['beast_requests_per_s'])}  beast/nginx {fmt(r['beast_over_nginx'], 2)}\n"
              f"  {'':<7} cpu us/req nginx {fmt(r['nginx_cpu_us_per_request'], 2)}  beast "
              f"{fmt(r['beast_cpu_us_per_request'], 2)}  beast/nginx "
              f"{fmt(r['cpu_per_request_beast_over_nginx'], 2)}  errors+timeouts nginx/beast "
              f"{r['errors_nginx']}/{r['errors_beast']}")


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
    nofile = raise_descriptor_limit(
        descriptors_needed(connections(args.concurrency) + connections(args.agreement)))
    two = os.cpu_count() >= 2
    server_cpu, client_cpu = (1, 0) if two else (None, None)
    placement = f"server cpu {server_cpu}, wrk cpu {client_cpu}" if two else "unpinned"
    work = tempfile.mkdtemp(prefix="wsbench-ceiling-")
    report = {"placement": placement, "duration_s": args.duration, "rounds": args.rounds,
              "wrk_threads": args.wrk_threads, "nofile_limit": nofile,
              "load_average": os.getloadavg(), "agreement": [], "ceiling": []}
    beast = nginx = None
    try:
        beast = Beast(args.build, server_cpu)
        body = urllib.request.urlopen(beast.url + "/payloads/ints/200", timeout=10).read()
        echo = os.path.join(work, "echo.lua")
        with open(os.path.join(work, "body.json"), "wb") as f:
            f.write(body)
        with open(echo, "w") as f:
            f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                    f'local f = io.open("{work}/body.json", "rb")\nwrk.body = f:read("*a")\n'
                    "f:close()\n")
        nginx = Nginx(server_cpu)
        # Verify before timing: the same status, body and Content-Type.
        replies = {"nginx": fetch_reply(nginx.url), "beast": fetch_reply(beast.url)}
        problems = reply_mismatches(replies["beast"], replies["nginx"])
        if problems:
            raise RuntimeError("the two /ping replies differ: " + "; ".join(problems))
        report["replies"] = {name: dict(r, body=r["body"].decode()) for name, r in
                             replies.items()}
        for name, r in replies.items():
            print(f"ceiling: {describe_fields(name, r)}", file=sys.stderr)
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

    # The load over the run, beside the start's: what else had the vCPUs.
    report["load_average_end"] = os.getloadavg()
    report["summary"] = summarize(report)
    print_report(report, args)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
        print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
