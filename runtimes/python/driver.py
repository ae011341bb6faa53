"""Python clients against wsbench's native servers: xmlrpc.client against
xmlrpc-c, zeep (from the WSDL) against gsoap, http.client + json against
beast's REST API. Each calls ping, get of ints/3200 and echo of
message-a/100; every reply is compared with the catalogue (the first) or
with that first reply (the rest), outside the timed call. Prints Google
Benchmark JSON that scripts/summarize.py reads as round trips, one row per
repetition:

  rtt/<stack>/python-<client>/<operation>[/<payload>]/steady
      the calls after a warm-up call, on one client (p50_us over them);
  rtt/<stack>/python-<client>/<operation>[/<payload>]/cold
      the first call of a fresh interpreter, client construction included
      (for zeep, loading the WSDL): one process per repetition.

It starts wsbench-server itself (127.0.0.1, ephemeral ports) and stops it."""
import argparse
import datetime
import http.client
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
import xmlrpc.client

from wsbench_replies import (binaries_as_bytes, catalogue, difference, xmlrpc_expected,
                             zeep_payload)

OPERATIONS = [("ping", None), ("get", "ints/3200"), ("echo", "message-a/100")]
CLIENTS = {"xmlrpc": "xmlrpc-c", "zeep": "gsoap", "json": "beast"}


class XmlrpcClient:
    """xmlrpc.client, 64-bit fields as strings (/RPC2?int64=string)."""

    def __init__(self, address):
        self.proxy = xmlrpc.client.ServerProxy("http://%s/RPC2?int64=string" % address)

    def call(self, operation, argument):
        if operation == "ping":
            return self.proxy.wsbench.ping()
        if operation == "get":
            return self.proxy.wsbench.get(argument)
        return self.proxy.wsbench.echo(argument)

    @staticmethod
    def argument(operation, label, body):
        return xmlrpc_expected(body, str) if operation == "echo" else label

    @staticmethod
    def comparable(reply):
        return binaries_as_bytes(reply)

    @staticmethod
    def expected(body):
        return binaries_as_bytes(xmlrpc_expected(body, str))


class ZeepClient:
    """zeep with the WSDL the server publishes."""

    def __init__(self, address):
        import zeep
        self.service = zeep.Client("http://%s/?wsdl" % address).service

    def call(self, operation, argument):
        if operation == "ping":
            return self.service.ping()
        if operation == "get":
            return self.service.get(kind=argument[0], n=argument[1])
        return self.service.echo(payload=argument)

    def argument(self, operation, label, body):
        kind, _, size = label.partition("/")
        if operation == "get":
            return kind, int(size)
        # The payload as zeep builds it: from a reply of get.
        from zeep.helpers import serialize_object
        reply = self.service.get(kind=kind, n=int(size))
        return {k: v for k, v in serialize_object(reply, dict).items() if v is not None}

    @staticmethod
    def comparable(reply):
        return reply if isinstance(reply, str) else zeep_payload(reply)

    @staticmethod
    def expected(body):
        return body


class JsonClient:
    """http.client + json on one keep-alive connection."""

    def __init__(self, address):
        host, port = address.rsplit(":", 1)
        self.connection = http.client.HTTPConnection(host, int(port))

    def call(self, operation, argument):
        headers = {"Accept": "application/json"}
        if operation == "echo":
            headers["Content-Type"] = "application/json"
            self.connection.request("POST", "/echo", json.dumps(argument), headers)
        else:
            self.connection.request("GET", "/ping" if operation == "ping" else argument, None,
                                    headers)
        response = self.connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError("HTTP %d: %s" % (response.status, body[:200]))
        return json.loads(body)

    @staticmethod
    def argument(operation, label, body):
        return body if operation == "echo" else "/payloads/" + label

    @staticmethod
    def comparable(reply):
        return reply

    @staticmethod
    def expected(body):
        return body


MAKERS = {"xmlrpc": XmlrpcClient, "zeep": ZeepClient, "json": JsonClient}


def expected_reply(client, operation, label, payloads):
    if operation == "ping":
        return {"text": "pong"} if client is JsonClient else "pong"
    return client.expected(payloads[label])


def check(client, reply, want, what):
    found = difference(client.comparable(reply), want, what)
    if found:
        raise RuntimeError("verification failed: " + found)


def case_name(name, operation, label, phase):
    parts = ["rtt", CLIENTS[name], "python-" + name, operation] + ([label] if label else [])
    return "/".join(parts + [phase])


def steady(name, address, operation, label, payloads, calls, max_seconds):
    """Per-call times (ns) of one client after a verified warm-up call."""
    client = MAKERS[name](address)
    argument = None if operation == "ping" else client.argument(operation, label, payloads[label])
    want = expected_reply(MAKERS[name], operation, label, payloads)
    check(client, client.call(operation, argument), want, "first reply")
    times = []
    deadline = time.monotonic() + max_seconds
    while len(times) < calls and time.monotonic() < deadline:
        start = time.perf_counter_ns()
        reply = client.call(operation, argument)
        times.append(time.perf_counter_ns() - start)
        check(client, reply, want, "reply %d" % len(times))
    return times


def cold(args, name, address, operation, label):
    """The first call in a fresh interpreter, as that child reports it (ns)."""
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--cold-call", name, address, operation,
         label or "", "--payload-json", args.payload_json],
        capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        raise RuntimeError(lines[-1] if lines else "the cold call exited with %d" % out.returncode)
    return int(out.stdout.split()[-1])


def cold_call(args):
    name, address, operation, label = args.cold_call
    label = label or None
    payloads = catalogue(args.payload_json, [label]) if label else {}
    argument_body = payloads.get(label)
    start = time.perf_counter_ns()
    client = MAKERS[name](address)
    constructed = time.perf_counter_ns() - start
    # Not timed: building the argument (zeep's echo asks the server for it).
    argument = None if operation == "ping" else client.argument(operation, label, argument_body)
    start = time.perf_counter_ns()
    reply = client.call(operation, argument)
    elapsed = constructed + time.perf_counter_ns() - start
    check(client, reply, expected_reply(MAKERS[name], operation, label, payloads), "cold reply")
    print(elapsed)


def row(name, index, repetitions, times_ns):
    ordered = sorted(times_ns)
    n = len(ordered)
    mean = sum(ordered) / n
    out = {
        "name": name, "run_name": name, "run_type": "iteration", "repetitions": repetitions,
        "repetition_index": index, "threads": 1, "iterations": n,
        "real_time": mean, "cpu_time": mean, "time_unit": "ns",
        "n": n, "p50_us": statistics.median(ordered) / 1e3, "max_us": ordered[-1] / 1e3,
    }
    # Nearest rank, and only where the calls support it (as bench does).
    if n >= 10:
        out["p90_us"] = ordered[max(0, -(-90 * n // 100) - 1)] / 1e3
    if n >= 100:
        out["p99_us"] = ordered[max(0, -(-99 * n // 100) - 1)] / 1e3
    return out


def error_row(name, index, repetitions, message):
    return {"name": name, "run_name": name, "run_type": "iteration",
            "repetitions": repetitions, "repetition_index": index, "error_occurred": True,
            "error_message": message}


def start_server(path):
    server = subprocess.Popen([path], stdout=subprocess.PIPE, text=True)
    endpoints = {}
    while len(endpoints) < 3:
        line = server.stdout.readline()
        if not line:
            raise RuntimeError("wsbench-server exited before printing its endpoints")
        stack, address = line.split()
        endpoints[stack] = address
    return server, endpoints


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", help="the wsbench-server binary")
    parser.add_argument("--payload-json", required=True, help="the payload_json helper")
    parser.add_argument("--clients", default="xmlrpc,zeep,json",
                        help="comma-separated, of: %(default)s")
    parser.add_argument("--repetitions", type=int, default=6)
    parser.add_argument("--calls", type=int, default=200, help="timed calls per repetition")
    parser.add_argument("--max-seconds", type=float, default=2.0,
                        help="time a steady repetition may take, whatever --calls says")
    parser.add_argument("--out", help="write the JSON here (default: stdout)")
    parser.add_argument("--cold-call", nargs=4, metavar=("CLIENT", "ADDRESS", "OP", "LABEL"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold_call:
        return cold_call(args)
    if not args.server:
        parser.error("--server is required")
    names = args.clients.split(",")
    unknown = [n for n in names if n not in MAKERS]
    if unknown or args.repetitions < 1 or args.calls < 1:
        parser.error("clients are %s; repetitions and calls at least 1" % ",".join(MAKERS))

    if "zeep" in names:
        try:
            import zeep  # noqa: F401
        except ImportError:
            print("driver: zeep is not installed (apt-get install python3-zeep): no zeep rows",
                  file=sys.stderr)
            names.remove("zeep")
    payloads = catalogue(args.payload_json, [label for _, label in OPERATIONS if label])
    server, endpoints = start_server(args.server)
    rows = []
    try:
        for phase in ("steady", "cold"):
            for name in names:
                for operation, label in OPERATIONS:
                    case = case_name(name, operation, label, phase)
                    address = endpoints[CLIENTS[name]]
                    for index in range(args.repetitions):
                        try:
                            if phase == "steady":
                                times = steady(name, address, operation, label, payloads,
                                               args.calls, args.max_seconds)
                            else:
                                times = [cold(args, name, address, operation, label)]
                            rows.append(row(case, index, args.repetitions, times))
                        except Exception as e:  # noqa: BLE001 - reported in the row, as bench does
                            rows.append(error_row(case, index, args.repetitions, str(e)))
                        print("%s: repetition %d of %d" % (case, index + 1, args.repetitions),
                              file=sys.stderr)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

    try:
        import zeep
        zeep_version = zeep.__version__
    except ImportError:
        zeep_version = "not installed"
    result = {
        "context": {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "host_name": platform.node(),
            "num_cpus": os.cpu_count(),
            "load_avg": " ".join("%.2f" % v for v in os.getloadavg()),
            "kernel": platform.release(),
            "command_line": " ".join(sys.argv),
            "runtime": "python " + platform.python_version(),
            "zeep_version": zeep_version,
            "wsbench_placement": "none (client and server threads unpinned)",
        },
        "benchmarks": rows,
    }
    text = json.dumps(result, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 1 if any(r.get("error_occurred") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
