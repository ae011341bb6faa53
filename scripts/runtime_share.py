#!/usr/bin/env python3
"""Managed runtimes beside the native clients: the runtime share.

  scripts/runtime_share.py run OUTDIR [python,php,java|all] [--quick] [--repetitions N] [--calls N]
  scripts/runtime_share.py report OUTDIR

`run` calls runtimes/<R>/run for each named runtime (a runtime whose run
is missing or cannot install its toolchain is recorded as not available,
with the reason), then runs bench's native round trips of the same cases
in the same session, and writes OUTDIR/runtimes.json (what ran, how long,
why not), the JSON of every run, and share.md. `report` rewrites share.md.

A managed row rtt/<stack>/<R>-<client>/<op>[/<payload>]/steady is paired
with the native row rtt/<stack>/<codec>/<op>[/<payload>]/same of the same
stack and codec (NATIVE_CODEC); the runtime share is 1 - native/managed
over the medians of the repetitions' median calls, with a percentile
bootstrap CI95 that resamples the repetitions of both sides.
"""
import argparse
import json
import os
import random
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summarize  # noqa: E402  (Stat: median and its CI95 over repetitions)
from progress import Progress  # noqa: E402  (a line per run: how far, how long left)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BENCH = os.path.join(ROOT, "build", "release", "bench")
SERVER = os.path.join(ROOT, "build", "release", "wsbench-server")
PAYLOAD_JSON = os.path.join(ROOT, "build", "release", "tests", "payload_json")
RUNTIMES = ["python", "php", "java"]
MANIFEST = "runtimes.json"
NATIVE = "native.json"

SIZES = [200, 400, 800, 1600, 3200]
QUICK_SIZES = [200, 3200]
MESSAGE = "message-a/100"
# Native stacks and codecs the managed clients call (the pairing below).
NATIVE_STACKS = ["gsoap/soap", "xmlrpc-c/xmlrpc", "beast/json", "beast/xml", "beast/protobuf"]
PLACEMENT = "same"
# Quick native runs fix the calls per repetition, as scripts/experiments --quick.
QUICK_ITERATIONS = 30
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 20240601
# No run may take longer than this (a full Java run with its build is the longest).
RUN_TIMEOUT_S = 3 * 3600


def experiments(sizes):
    """E1, E3, E5: (key, title, [(operation, payload or None)])."""
    return [
        ("E1", "ping", [("ping", None)]),
        ("E3", "get of ints, strings and objects x N",
         [("get", f"{kind}/{n}") for kind in ("ints", "strings", "objects") for n in sizes]),
        ("E5", "messaging: register, send, receive, unregister",
         [("register", None), ("send", MESSAGE), ("receive", MESSAGE), ("unregister", None)]),
    ]


def op_path(operation, payload):
    return operation + (f"/{payload}" if payload else "")


def native_name(stack_codec, operation, payload):
    return f"rtt/{stack_codec}/{op_path(operation, payload)}/{PLACEMENT}"


# The managed client's name says which native client it stands beside: on
# gsoap the SOAP client, on xmlrpc-c the XML-RPC one; on beast the body
# format, read from the client's name (first match wins).
BEAST_CODEC_WORDS = [("protobuf", "protobuf"), ("proto", "protobuf"), ("jackson", "json"),
                     ("json", "json"), ("jaxb", "xml"), ("simplexml", "xml"), ("xml", "xml")]


def native_codec(stack, client):
    """The codec of the native client a managed one is compared with, or None."""
    if stack == "gsoap":
        return "soap"
    if stack == "xmlrpc-c":
        return "xmlrpc"
    if stack == "beast":
        lowered = client.lower()
        for word, codec in BEAST_CODEC_WORDS:
            if word in lowered:
                return codec
    return None


# A managed client against a native server; rows of managed servers
# (rtt/<R>-server/...) are not paired here.
MANAGED = re.compile(r"^rtt/(?P<stack>gsoap|xmlrpc-c|beast)/(?P<runtime>[a-z0-9]+)-"
                     r"(?P<client>[^/]+)/(?P<op>.+)/(?P<phase>steady|cold|warmup)$")


def parse_managed(name):
    """(stack, runtime, client, operation path, phase) of a managed client's row, or None."""
    m = MANAGED.match(name)
    return (m["stack"], m["runtime"], m["client"], m["op"], m["phase"]) if m else None


# ---- statistics ----

def share(native, managed):
    """1 - native / managed over the medians."""
    return 1 - statistics.median(native) / statistics.median(managed)


def bootstrap_share(native, managed, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED):
    """(share, CI95 low, CI95 high): the share of the medians, and the 2.5th
    and 97.5th percentiles of the share over resamples that draw each
    side's repetitions with replacement. Fixed seed: a report rewritten
    from the same files shows the same interval."""
    if not native or not managed:
        raise ValueError("bootstrap_share needs values on both sides")
    rng = random.Random(seed)
    shares = sorted(
        1 - statistics.median(rng.choices(native, k=len(native)))
        / statistics.median(rng.choices(managed, k=len(managed)))
        for _ in range(resamples))
    lo = shares[int(0.025 * (resamples - 1))]
    hi = shares[int(round(0.975 * (resamples - 1)))]
    return share(native, managed), lo, hi


# ---- results ----

class Results:
    """A runtimes folder: the manifest, the native cases and each runtime's."""

    def __init__(self, outdir):
        self.outdir = outdir
        with open(os.path.join(outdir, MANIFEST)) as f:
            self.manifest = json.load(f)
        self.native = self.load(self.manifest.get("native", {}))
        self.managed = {}
        for runtime, entry in self.manifest.get("runtimes", {}).items():
            self.managed[runtime] = self.load(entry)

    def load(self, entry):
        path = entry.get("file")
        if not path or not os.path.exists(os.path.join(self.outdir, path)):
            return {}
        try:
            with open(os.path.join(self.outdir, path)) as f:
                data = json.load(f)
        except ValueError as e:
            entry.setdefault("reason", f"{path} unreadable: {e}")
            return {}
        entry["context"] = data.get("context", {})
        return summarize.load_cases(data.get("benchmarks", []))

    def unavailable(self):
        """[(runtime, reason)] of the runtimes without rows."""
        out = []
        for runtime, entry in self.manifest.get("runtimes", {}).items():
            if not self.managed.get(runtime):
                out.append((runtime, entry.get("reason") or "it wrote no rows"))
        return out

    def clients(self, operation, payload):
        """{(runtime, stack, client): {phase: Case}} for one operation."""
        wanted = op_path(operation, payload)
        out = {}
        for runtime, cases in self.managed.items():
            for name, case in cases.items():
                parsed = parse_managed(name)
                if parsed and parsed[3] == wanted:
                    stack, _, client, _, phase = parsed
                    out.setdefault((runtime, stack, client), {})[phase] = case
        return dict(sorted(out.items()))


def values_ns(case):
    return [v * 1e3 for v in case.values("p50_us")] if case else []


def fmt_number(x):
    """4 significant digits, without exponents: 0.1234, 12.34, 12,340."""
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def stat_cell(values, scale=1e3):
    """'median [lo-hi]' in us (scale 1e3) or ms (1e6); '-' for none."""
    if not values:
        return "-"
    s = summarize.Stat(values)
    ci = (f" [{fmt_number(s.ci[0] / scale)}-{fmt_number(s.ci[1] / scale)}]" if s.ci
          else f" (n={s.n}, no CI)")
    return f"{fmt_number(s.median / scale)}{ci}"


def share_cell(native, managed):
    if not native or not managed:
        return "-"
    point, lo, hi = bootstrap_share(native, managed)
    return f"{point:.3f} [{lo:.3f}-{hi:.3f}]"


def reason_of(case):
    return case.reason() if case is not None else ""


HEADER = ["operation", "native", "native us", "managed client", "steady us", "runtime share",
          "cold ms", "warm-up us", "note"]


def experiment_table(results, operations):
    """The markdown table of one experiment: per operation, each managed
    client beside its native pair, and a row per runtime without rows."""
    rows = []
    for operation, payload in operations:
        for (runtime, stack, client), phases in results.clients(operation, payload).items():
            codec = native_codec(stack, client)
            steady = phases.get("steady")
            notes = [reason_of(steady)] if reason_of(steady) else []
            if codec is None:
                native_label, native = "-", []
                notes.append(f"no native client pairs with {client} on {stack}")
            else:
                native_label = f"{stack}/{codec}"
                case = results.native.get(native_name(native_label, operation, payload))
                native = values_ns(case)
                if not native:
                    notes.append("native: " + (reason_of(case) or "not in the run"))
            managed = values_ns(steady)
            rows.append([op_path(operation, payload), native_label, stat_cell(native),
                         f"{runtime}-{client}", stat_cell(managed), share_cell(native, managed),
                         stat_cell(values_ns(phases.get("cold")), 1e6),
                         stat_cell(values_ns(phases.get("warmup"))),
                         "; ".join(n for n in notes if n)])
    for runtime, reason in results.unavailable():
        rows.append(["(all)", "-", "-", runtime, "-", "-", "-", "-", f"not available: {reason}"])
    return table(HEADER, rows)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def method_lines(results):
    m = results.manifest
    lines = [f"- command: `{m.get('command', '')}`", f"- date: {m.get('date', '')}",
             f"- native: `{m.get('native', {}).get('command', '')}` "
             f"({m.get('native', {}).get('seconds', '-')} s)"]
    ctx = m.get("native", {}).get("context", {})
    for key in ("source_git_commit", "cpu_model", "num_cpus", "kernel", "load_avg"):
        if key in ctx:
            lines.append(f"- {key}: `{ctx[key]}`")
    for runtime, entry in m.get("runtimes", {}).items():
        ctx = entry.get("context", {})
        what = ctx.get("runtime", entry.get("status", ""))
        lines.append(f"- {runtime}: {what}, {entry.get('seconds', '-')} s, "
                     f"{entry.get('status', '')}")
    return "\n".join(lines)


ABOUT = ("Round trips in microseconds (cold first calls in milliseconds): median over "
         "repetitions of each repetition's median call, [distribution-free CI95]. Runtime "
         "share = 1 - native/managed with a percentile bootstrap CI95 over the repetitions of "
         "both (fixed seed). The native rows are bench's, pinned to one vCPU with the server "
         "(`same`); the managed clients run unpinned, pay their HTTP library too, and the "
         "share compares steady state only: cold = the first call of a fresh process, client "
         "construction included; warm-up = the calls after it that a JIT needs (Java).")


def experiment_sections(results, sizes=None, heading="##"):
    """[(key, markdown)] of E1, E3, E5."""
    sizes = sizes or results.manifest.get("sizes", SIZES)
    return [(key, f"{heading} {key}: {title}\n\n" + experiment_table(results, operations))
            for key, title, operations in experiments(sizes)]


def write_share(outdir):
    results = Results(outdir)
    parts = ["# Runtime share: managed clients beside native ones", ABOUT,
             "Machine and runs (the machine's load is in load_avg):\n\n" + method_lines(results)]
    parts += [text for _, text in experiment_sections(results)]
    path = os.path.join(outdir, "share.md")
    with open(path, "w") as f:
        f.write("\n\n".join(parts) + "\n")
    return path


# ---- running ----

def native_filter(sizes):
    ops = ["ping", "get/(ints|strings|objects)/(" + "|".join(map(str, sizes)) + ")",
           "register", f"send/{MESSAGE}", f"receive/{MESSAGE}", "unregister"]
    return (f"^rtt/({'|'.join(NATIVE_STACKS)})/({'|'.join(ops)})/{PLACEMENT}"
            + "(/iterations:[0-9]+)?(/manual_time)?$")


def shown(cmd):
    """A command as the report prints it: paths inside the tree relative to it."""
    return " ".join(shlex.quote(os.path.relpath(c, ROOT) if c.startswith(ROOT + os.sep) else c)
                    for c in cmd)


def run_logged(cmd, log_path, timeout):
    """Runs cmd with its output in log_path; its exit code, or None if it
    outlived timeout seconds (then its whole process group is killed: a
    runtime's run starts a server of its own)."""
    with open(log_path, "w") as log:
        child = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True)
        try:
            return child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            return None


def last_line(path):
    with open(path, errors="replace") as f:
        lines = [line.strip() for line in f if line.strip()]
    return lines[-1] if lines else "no output"


def run_runtime(outdir, runtime, args):
    script = os.path.join(ROOT, "runtimes", runtime, "run")
    entry = {"file": f"runtime-{runtime}.json"}
    if not os.access(script, os.X_OK):
        entry.update(status="not available",
                     reason=f"runtimes/{runtime}/run does not exist in this tree")
        print(f"runtimes: {runtime}: not available: {entry['reason']}", flush=True)
        return entry
    cmd = [script, "--server", SERVER, "--payload-json", PAYLOAD_JSON,
           "--out", os.path.join(outdir, entry["file"])]
    cmd += ["--quick"] if args.quick else []
    cmd += ["--repetitions", str(args.repetitions)] if args.repetitions else []
    cmd += ["--calls", str(args.calls)] if args.calls else []
    entry["command"] = shown(cmd)
    log = os.path.join(outdir, f"runtime-{runtime}.log")
    print(f"runtimes: {runtime}: {entry['command']}", flush=True)
    started = time.monotonic()
    code = run_logged(cmd, log, RUN_TIMEOUT_S)
    entry["seconds"] = round(time.monotonic() - started)
    entry["exit"] = code
    if code is None:
        entry.update(status="failed", reason=f"stopped after {RUN_TIMEOUT_S} s")
    elif code == 77:
        entry.update(status="not available", reason=last_line(log))
    elif not os.path.exists(os.path.join(outdir, entry["file"])):
        entry.update(status="failed", reason=f"exit {code}, no JSON: {last_line(log)}")
    else:
        entry["status"] = "ok" if code == 0 else f"exit {code}: some rows failed (see the notes)"
    print(f"runtimes: {runtime}: {entry['status']} in {entry['seconds']} s"
          + (f": {entry['reason']}" if "reason" in entry else ""), flush=True)
    return entry


def run_native(outdir, sizes, args):
    cmd = [BENCH, f"--benchmark_filter={native_filter(sizes)}",
           f"--benchmark_out={os.path.join(outdir, NATIVE)}", "--benchmark_out_format=json",
           "--full"]
    cmd += [f"--iterations={args.calls or QUICK_ITERATIONS}"] if args.quick or args.calls else []
    cmd += [f"--benchmark_repetitions={args.repetitions}"] if args.repetitions else []
    entry = {"file": NATIVE, "command": shown(cmd)}
    print(f"runtimes: native: {entry['command']}", flush=True)
    started = time.monotonic()
    entry["exit"] = run_logged(cmd, os.path.join(outdir, "native.log"), RUN_TIMEOUT_S)
    entry["seconds"] = round(time.monotonic() - started)
    print(f"runtimes: native: exit {entry['exit']} in {entry['seconds']} s", flush=True)
    return entry


def parse_runtimes(text):
    names = RUNTIMES if text == "all" else text.split(",")
    unknown = [n for n in names if n not in RUNTIMES]
    if unknown or not names:
        raise ValueError(f"unknown runtime(s) {', '.join(unknown)}: use "
                         f"{','.join(RUNTIMES)} or all")
    return list(dict.fromkeys(names))


def run(outdir, args):
    names = parse_runtimes(args.runtimes)
    sizes = QUICK_SIZES if args.quick else SIZES
    os.makedirs(outdir, exist_ok=True)
    started = time.monotonic()
    manifest = {"command": shown(sys.argv),
                "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "sizes": sizes, "runtimes": {}}
    progress = Progress("runtimes", len(names) + 1)
    print(f"runtimes: results in {outdir}/", file=sys.stderr, flush=True)
    for runtime in names:
        progress.begin(f"{runtime} clients")
        manifest["runtimes"][runtime] = run_runtime(outdir, runtime, args)
        progress.advance()
    progress.begin("native clients of the same cases")
    manifest["native"] = run_native(outdir, sizes, args)
    manifest["seconds"] = round(time.monotonic() - started)
    with open(os.path.join(outdir, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1)
    path = write_share(outdir)
    print(f"runtimes: {path} ({manifest['seconds']} s in all)")
    # A runtime that is not available is reported, not a failure of the run.
    exits = [manifest["native"]["exit"]] + [e.get("exit", 0) for e in manifest["runtimes"].values()]
    return 1 if any(code not in (0, 77) for code in exits) else 0  # None: timed out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("outdir")
    r.add_argument("runtimes", nargs="?", default="all", help="python,php,java or all")
    r.add_argument("--quick", action="store_true",
                   help=f"E3 at {QUICK_SIZES} items; fewer calls per repetition")
    r.add_argument("--repetitions", type=int, help="per case, managed and native (default 6)")
    r.add_argument("--calls", type=int, help="timed calls per repetition, managed and native")
    p = sub.add_parser("report")
    p.add_argument("outdir")
    args = ap.parse_args(argv)
    if args.command == "report":
        print(write_share(args.outdir))
        return 0
    if (args.repetitions is not None and args.repetitions < 1) or (
            args.calls is not None and args.calls < 1):
        ap.error("--repetitions and --calls take a number above 0")
    try:
        parse_runtimes(args.runtimes)
    except ValueError as e:
        ap.error(str(e))
    return run(args.outdir, args)


if __name__ == "__main__":
    sys.exit(main())
