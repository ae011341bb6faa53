"""Python clients against wsbench's native servers: xmlrpc.client against
xmlrpc-c, zeep (from the WSDL) against gsoap, http.client + json against
beast's REST API. Each calls the runtime contract's operations (E1 ping;
E3 get of ints, strings and objects at 200-3200 items; E5 register, send
and receive of message-a/100, unregister); every reply is compared with
the catalogue outside the timed call (a sent message by receiving it back).
Prints Google Benchmark JSON that scripts/summarize.py reads as round
trips, one row per repetition:

  rtt/<stack>/python-<client>/<operation>[/<payload>]/steady
      the calls after a warm-up call, on one client (p50_us over them);
  rtt/<stack>/python-<client>/<operation>[/<payload>]/cold
      the first call of a fresh interpreter, client construction included
      (for zeep, loading the WSDL): one process per repetition; the queue
      a send, receive or unregister needs is set up by this process.

It starts wsbench-server itself (127.0.0.1, ephemeral ports) and stops it."""
import argparse
import datetime
import http.client
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import time
import xmlrpc.client

from wsbench_replies import (binaries_as_bytes, catalogue, difference, xmlrpc_expected,
                             xmlrpc_message, zeep_message, zeep_payload)

SIZES = [200, 400, 800, 1600, 3200]
QUICK_SIZES = [200, 3200]
MESSAGE = "message-a/100"
CLIENTS = {"xmlrpc": "xmlrpc-c", "zeep": "gsoap", "json": "beast"}
# A call (or a WSDL load) that takes longer fails its row instead of hanging the run.
CALL_TIMEOUT_S = 60


class TimeoutTransport(xmlrpc.client.Transport):
    """xmlrpc.client's transport, with a socket timeout."""

    def make_connection(self, host):
        connection = super().make_connection(host)
        connection.timeout = CALL_TIMEOUT_S
        return connection


def operations(sizes):
    """(operation, payload label or None) in the contract's order: E1, E3, E5."""
    return ([("ping", None)]
            + [("get", "%s/%d" % (kind, n)) for kind in ("ints", "strings", "objects")
               for n in sizes]
            + [("register", None), ("send", MESSAGE), ("receive", MESSAGE), ("unregister", None)])


class XmlrpcClient:
    """xmlrpc.client, 64-bit fields as strings (/RPC2?int64=string)."""

    def __init__(self, address):
        self.proxy = xmlrpc.client.ServerProxy("http://%s/RPC2?int64=string" % address,
                                               transport=TimeoutTransport())

    def ping(self):
        return self.proxy.wsbench.ping()

    def get(self, label):
        return self.proxy.wsbench.get(label)

    @staticmethod
    def comparable(reply):
        return binaries_as_bytes(reply)

    @staticmethod
    def get_argument(label):
        return label

    @staticmethod
    def expected(body):
        return binaries_as_bytes(xmlrpc_expected(body, str))

    def register(self):
        return self.proxy.wsbench.registerClient()

    def send(self, queue, message):
        return self.proxy.wsbench.sendMessage(queue, message)

    def receive(self, queue):
        return self.proxy.wsbench.receiveMessages(queue)

    def unregister(self, queue):
        return self.proxy.wsbench.unregisterClient(queue)

    @staticmethod
    def done(reply):
        """Whether a send's or unregister's reply says it was done."""
        return reply is True

    @staticmethod
    def messages(reply):
        return binaries_as_bytes(reply["messages"]) if isinstance(reply, dict) else reply

    @staticmethod
    def message_argument(label, body):
        return xmlrpc_message(body["message"], str)

    @staticmethod
    def expected_message(body):
        return binaries_as_bytes(xmlrpc_message(body["message"], str))


class ZeepClient:
    """zeep with the WSDL the server publishes."""

    def __init__(self, address):
        import zeep
        transport = zeep.Transport(timeout=CALL_TIMEOUT_S, operation_timeout=CALL_TIMEOUT_S)
        self.service = zeep.Client("http://%s/?wsdl" % address, transport=transport).service

    def ping(self):
        return self.service.ping()

    def get(self, argument):
        return self.service.get(kind=argument[0], n=argument[1])

    @staticmethod
    def comparable(reply):
        return zeep_payload(reply)

    @staticmethod
    def get_argument(label):
        kind, _, size = label.partition("/")
        return kind, int(size)

    @staticmethod
    def expected(body):
        return body

    def register(self):
        return self.service.RegisterClient()

    def send(self, queue, message):
        return self.service.SendMessage(queue=queue, message=message)

    def receive(self, queue):
        return self.service.ReceiveMessage(queue=queue)

    def unregister(self, queue):
        return self.service.UnregisterClient(queue=queue)

    @staticmethod
    def done(reply):
        # SendMessage's and UnregisterClient's responses have no parts.
        return reply is None

    @staticmethod
    def messages(reply):
        from zeep.helpers import serialize_object
        return [zeep_message(serialize_object(m, dict)) for m in reply or []]

    def message_argument(self, label, body):
        # The message as zeep builds it: from a reply of get (not timed).
        kind, _, size = label.partition("/")
        return self.service.get(kind=kind, n=int(size)).message

    @staticmethod
    def expected_message(body):
        return body["message"]


class JsonClient:
    """http.client + json on one keep-alive connection."""

    def __init__(self, address):
        host, port = address.rsplit(":", 1)
        self.connection = http.client.HTTPConnection(host, int(port), timeout=CALL_TIMEOUT_S)

    def request(self, method, path, status, body=None):
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
            body = json.dumps(body)
        self.connection.request(method, path, body, headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.status != status:
            raise RuntimeError("%s %s: HTTP %d, want %d: %s" % (method, path, response.status,
                                                               status, data[:200]))
        return response, data

    def ping(self):
        return json.loads(self.request("GET", "/ping", 200)[1])

    def get(self, path):
        return json.loads(self.request("GET", path, 200)[1])

    @staticmethod
    def comparable(reply):
        return reply

    @staticmethod
    def get_argument(label):
        return "/payloads/" + label

    @staticmethod
    def expected(body):
        return body

    def register(self):
        location = self.request("POST", "/queues", 201)[0].getheader("Location") or ""
        prefix, _, queue = location.rpartition("/")
        return queue if prefix == "/queues" else None

    def send(self, queue, message):
        return self.request("PUT", "/queues/" + queue, 204, message)[1]

    def receive(self, queue):
        return json.loads(self.request("GET", "/queues/" + queue, 200)[1])

    def unregister(self, queue):
        return self.request("DELETE", "/queues/" + queue, 204)[1]

    @staticmethod
    def done(reply):
        return reply == b""  # 204, checked in request()

    @staticmethod
    def messages(reply):
        return reply.get("messages") if isinstance(reply, dict) else reply

    @staticmethod
    def message_argument(label, body):
        return body

    @staticmethod
    def expected_message(body):
        return body["message"]


MAKERS = {"xmlrpc": XmlrpcClient, "zeep": ZeepClient, "json": JsonClient}
PING_REPLY = {"xmlrpc": "pong", "zeep": "pong", "json": {"text": "pong"}}


def check(reply, want, what):
    found = difference(reply, want, what)
    if found:
        raise RuntimeError("verification failed: " + found)


def check_queue(queue, what):
    if not isinstance(queue, str) or not queue:
        raise RuntimeError("verification failed: %s: no queue id, got %r" % (what, queue))


class Runner:
    """One operation of one client, as bench's round trips run it: untimed
    set-up (a queue, a message to receive), the timed call, then the check
    and clean-up (a sent message is received back and compared), untimed."""

    def __init__(self, name, client, operation, label, payloads):
        self.name, self.client, self.operation, self.label = name, client, operation, label
        self.queue = None
        self.reply = None
        body = payloads.get(label)
        if operation == "get":
            self.argument = client.get_argument(label)
            self.want = client.expected(body)
        elif operation in ("send", "receive"):
            self.argument = client.message_argument(label, body)
            self.want = [client.expected_message(body)]

    def set_up(self):
        if self.operation in ("send", "receive", "unregister") and self.queue is None:
            self.queue = self.client.register()
            check_queue(self.queue, "register")
        if self.operation == "receive":
            if not self.client.done(self.client.send(self.queue, self.argument)):
                raise RuntimeError("verification failed: send before receive: unexpected reply")

    def call(self):
        client, op = self.client, self.operation
        if op == "ping":
            self.reply = client.ping()
        elif op == "get":
            self.reply = client.get(self.argument)
        elif op == "register":
            self.reply = client.register()
        elif op == "send":
            self.reply = client.send(self.queue, self.argument)
        elif op == "receive":
            self.reply = client.receive(self.queue)
        else:
            self.reply = client.unregister(self.queue)
            self.queue = None

    def check_and_clean_up(self, what):
        client, op, reply = self.client, self.operation, self.reply
        if op == "ping":
            check(reply, PING_REPLY[self.name], what)
        elif op == "get":
            check(client.comparable(reply), self.want, what)
        elif op == "receive":
            check(client.messages(reply), self.want, what)
        elif op == "register":
            check_queue(reply, what)
            client.unregister(reply)
        elif not client.done(reply):
            raise RuntimeError("verification failed: %s: %s replied %r" % (what, op, reply))
        if op == "send":
            check(client.messages(client.receive(self.queue)), self.want,
                  what + ", received back")

    def close(self):
        queue, self.queue = self.queue, None
        if queue is not None:
            try:
                self.client.unregister(queue)
            except Exception:  # noqa: BLE001 - the row's own error, if any, is what counts
                pass


def case_name(name, operation, label, phase):
    parts = ["rtt", CLIENTS[name], "python-" + name, operation] + ([label] if label else [])
    return "/".join(parts + [phase])


def steady(name, address, operation, label, payloads, calls, max_seconds):
    """Per-call times (ns) of one client after a verified warm-up call."""
    runner = Runner(name, MAKERS[name](address), operation, label, payloads)
    try:
        runner.set_up()
        runner.call()
        runner.check_and_clean_up("first reply")
        times = []
        deadline = time.monotonic() + max_seconds
        while len(times) < calls and time.monotonic() < deadline:
            runner.set_up()
            start = time.perf_counter_ns()
            runner.call()
            times.append(time.perf_counter_ns() - start)
            runner.check_and_clean_up("reply %d" % len(times))
        return times
    finally:
        runner.close()


def cold(args, name, address, operation, label, payloads):
    """The first call in a fresh interpreter, as that child reports it (ns).
    This process's own client sets up the queue before and checks and
    cleans up after, so the child makes only the one call."""
    helper = Runner(name, MAKERS[name](address), operation, label, payloads)
    try:
        helper.set_up()
        out = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--cold-call", name, address, operation,
             label or "", helper.queue or "", "--payload-json", args.payload_json],
            capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            lines = out.stderr.strip().splitlines()
            raise RuntimeError(lines[-1] if lines else "the cold call exited with %d"
                               % out.returncode)
        fields = out.stdout.split()
        if operation == "register":
            helper.client.unregister(fields[1])
        elif operation == "send":
            check(helper.client.messages(helper.client.receive(helper.queue)), helper.want,
                  "cold send, received back")
        elif operation == "unregister":
            helper.queue = None
        return int(fields[0])
    finally:
        helper.close()


def cold_call(args):
    name, address, operation, label, queue = args.cold_call
    label = label or None
    payloads = catalogue(args.payload_json, [label]) if label else {}
    start = time.perf_counter_ns()
    client = MAKERS[name](address)
    constructed = time.perf_counter_ns() - start
    # Not timed: building the argument (zeep's send asks the server for it).
    runner = Runner(name, client, operation, label, payloads)
    runner.queue = queue or None
    start = time.perf_counter_ns()
    runner.call()
    elapsed = constructed + time.perf_counter_ns() - start
    if operation == "register":
        check_queue(runner.reply, "cold reply")
    elif operation != "send":
        runner.check_and_clean_up("cold reply")
    elif not client.done(runner.reply):
        raise RuntimeError("verification failed: cold reply: send replied %r" % runner.reply)
    print(elapsed, runner.reply if operation == "register" else "")


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
    # It prints every stack it serves; the clients here call these three.
    while not {"gsoap", "xmlrpc-c", "beast"} <= endpoints.keys():
        line = server.stdout.readline()
        if not line:
            raise RuntimeError("wsbench-server exited before printing its endpoints")
        stack, address = line.split()
        endpoints[stack] = address
    return server, endpoints


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", help="the wsbench-server binary")
    parser.add_argument("--payload-json", required=True, help="the payload_json helper")
    parser.add_argument("--clients", default="xmlrpc,zeep,json",
                        help="comma-separated, of: %(default)s")
    parser.add_argument("--repetitions", type=int, default=6)
    parser.add_argument("--calls", type=int, help="timed calls per repetition (default 200; "
                        "--quick: 50)")
    parser.add_argument("--max-seconds", type=float,
                        help="time a steady repetition may take, whatever --calls says "
                        "(default 2; --quick: 0.5)")
    parser.add_argument("--quick", action="store_true",
                        help="E3 at %s items only, and fewer calls per repetition"
                        % " and ".join(map(str, QUICK_SIZES)))
    parser.add_argument("--operations", metavar="REGEX",
                        help="only the operations whose path (ping, get/ints/200, "
                        "send/message-a/100, ...) matches")
    parser.add_argument("--out", help="write the JSON here (default: stdout)")
    parser.add_argument("--cold-call", nargs=5,
                        metavar=("CLIENT", "ADDRESS", "OP", "LABEL", "QUEUE"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.cold_call:
        return parser, args
    if args.calls is None:
        args.calls = 50 if args.quick else 200
    if args.max_seconds is None:
        args.max_seconds = 0.5 if args.quick else 2.0
    if not args.server:
        parser.error("--server is required")
    try:
        args.operations = re.compile(args.operations or "")
    except re.error as e:
        parser.error("--operations: %s" % e)
    args.names = args.clients.split(",")
    unknown = [n for n in args.names if n not in MAKERS]
    if unknown or args.repetitions < 1 or args.calls < 1 or args.max_seconds <= 0:
        parser.error("clients are %s; repetitions and calls at least 1, --max-seconds above 0"
                     % ",".join(MAKERS))
    return parser, args


def zeep_version():
    try:
        import zeep
        return zeep.__version__
    except ImportError:
        return "not installed"


def main():
    parser, args = parse_args()
    if args.cold_call:
        return cold_call(args)
    names = args.names
    if "zeep" in names and zeep_version() == "not installed":
        print("driver: zeep is not installed (apt-get install python3-zeep): no zeep rows",
              file=sys.stderr)
        names.remove("zeep")
    cases = [(op, label) for op, label in operations(QUICK_SIZES if args.quick else SIZES)
             if args.operations.search(op + ("/" + label if label else ""))]
    if not cases:
        parser.error("--operations matches no operation")
    payloads = catalogue(args.payload_json, list(dict.fromkeys(l for _, l in cases if l)))
    server, endpoints = start_server(args.server)
    rows = []
    try:
        for phase in ("steady", "cold"):
            for name in names:
                for operation, label in cases:
                    case = case_name(name, operation, label, phase)
                    address = endpoints[CLIENTS[name]]
                    for index in range(args.repetitions):
                        try:
                            if phase == "steady":
                                times = steady(name, address, operation, label, payloads,
                                               args.calls, args.max_seconds)
                            else:
                                times = [cold(args, name, address, operation, label, payloads)]
                            rows.append(row(case, index, args.repetitions, times))
                        except Exception as e:  # noqa: BLE001 - reported in the row, as bench does
                            rows.append(error_row(case, index, args.repetitions, str(e)))
                        print("%s: repetition %d of %d" % (case, index + 1, args.repetitions),
                              file=sys.stderr)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

    result = {
        "context": {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "host_name": platform.node(),
            "num_cpus": os.cpu_count(),
            "load_avg": " ".join("%.2f" % v for v in os.getloadavg()),
            "kernel": platform.release(),
            "command_line": " ".join(sys.argv),
            "runtime": "python " + platform.python_version(),
            "zeep_version": zeep_version(),
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
