#!/usr/bin/env python3
"""The studies' experiments, run and laid out beside the papers' figures.

  scripts/experiments.py run OUTDIR [E1 ... E9 | beyond | all] [--quick] [--runtimes R,...]
  scripts/experiments.py report OUTDIR

`run` executes the runs each named experiment needs into OUTDIR (one JSON
per run, shared by the experiments that read it: Google Benchmark's from
bench and scripts/e9, wsbench-load's for E7 and E8), then writes the report. `report` (re)writes OUTDIR/report.md and one
PNG per figure from the JSON files there, the papers' values in
docs/papers/figures.csv and the claims in docs/papers/claims.csv. An
experiment whose runs are absent or failed appears with the reason, never
with numbers. Plots need matplotlib; the tables never do. E1, E3 and E5
add the managed runtimes' rows and runtime shares from OUTDIR/runtimes
(written by --runtimes, see scripts/runtime_share.py), or say how to get them.
"""
import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runtime_share  # noqa: E402  (managed runtimes beside the native rows)
import summarize  # noqa: E402  (the statistics rules of every table)
import claims as claims_mod  # noqa: E402  (the papers' claims, decided on intervals)
from progress import Progress  # noqa: E402  (a line per run: how far, how long left)
import experiment_tables  # noqa: E402,F401  (the tables; tests read its formatting)
import beyond  # noqa: E402  (gRPC, TLS and simdjson: the section after the studies)
from experiment_tables import (E3_PROTOCOLS, E4_FORMATS, SIZES, read_csv, table,  # noqa: E402
                               render_e1, render_e2, render_e3, render_e4, render_e5, render_e6,
                               render_e7, render_e8, render_e9, Plot)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FIGURES = os.path.join(ROOT, "docs", "papers", "figures.csv")
CLAIMS = os.path.join(ROOT, "docs", "papers", "claims.csv")
BENCH = os.path.join(ROOT, "build", "release", "bench")
LOAD = os.path.join(ROOT, "build", "release", "wsbench-load")
E9_SCRIPT = os.path.join(ROOT, "scripts", "e9")

# The common Beast transport's rows of the same encodings, so that each
# protocol comparison is also decided on one HTTP stack (scripts/claims.py).
COMMON_QUERY = ["beast/soap", "beast/xmlrpc"]
COMMON_MESSAGING = ["beast/soap", "beast/soap-mtom"]
# The REST rows with the other codec library choice (base64 on one line;
# simdjson's parse), so a verdict that flips with it shows as the library's.
# Only the messaging run has them: E1-E3 compare no JSON, and their arrays
# carry no base64, so xml-unwrapped's bodies there are xml's.
CODEC_ALTERNATIVES = ["beast/xml-unwrapped", "beast/json-simdjson"]


# ---- the runs: one bench invocation each, shared between experiments ----

def alternation(items):
    return "(" + "|".join(items) + ")"


RUNS = {
    "ping": {"filter": "^rtt/[^/]+/[^/]+/ping/same"},
    # E2's claim sets the parse beside the query it is part of.
    "parse": {"filter": "^(decode/xml(-dom)?/ints/" + alternation(map(str, SIZES[:3]))
                        + "(/|$)|rtt/beast/xml/get/ints/" + alternation(map(str, SIZES[:3]))
                        + "/same)", "full": True,
              # Codec rows of tens of microseconds need Google Benchmark's own
              # sizing: 30 of them would be one scheduler slice.
              "sized": True},
    "query": {"filter": "^rtt/" + alternation(sorted(set(E3_PROTOCOLS.values()) | {"beast/json"}
                                                     | set(COMMON_QUERY)))
                        + "/get/(ints|strings|objects)/[0-9]+/same", "full": True},
    "messaging": {"filter": "^rtt/" + alternation(list(E4_FORMATS.values()) + COMMON_MESSAGING
                                                  + CODEC_ALTERNATIVES)
                            + "/(register|send|receive|unregister)(/|$)", "full": True},
    "beyond": beyond.RUN,
}
# Quick runs fix the calls per repetition instead of sizing them to 2 s.
QUICK_ITERATIONS = 30
# E7 and E8 run in wsbench-load, E9 in scripts/e9: their full and quick
# arguments. A full run repeats each E7 cell 6 times and each E8 ramp and
# search 3 times, each repetition against a fresh server process (the
# unit of their intervals). Quick: E7 as full (about 2.5 min); E8 one
# repetition, so its claims are undecided and say why, with steps of
# 0.25 s instead of 1 s (ramp) and 0.5 s (search) and fewer search steps.
LOAD_RUNS = {
    "e7": {"full": ["--experiment", "E7"], "quick": ["--experiment", "E7"]},
    "e8": {"full": ["--experiment", "E8"],
           "quick": ["--experiment", "E8", "--repeat", "1", "--ramp-every", "0.25", "--hold",
                     "0.25", "--search", "32:x2:1024"]},
}
E9_LINK = "lan100"  # cha-et-al's 100 Mbit/s
# Typical seconds of each run on 2 vCPUs, (full, quick), for the progress
# lines' estimate of the time left (scaled by how fast the runs done went);
# the managed runtimes' run under RUNTIMES_DIR.
TYPICAL_S = {"ping": (5, 5), "parse": (5, 5), "query": (220, 40), "messaging": (70, 15),
             "e7": (450, 450), "e8": (3000, 260), "e9": (1800, 270), "runtimes": (1800, 600),
             "beyond": beyond.TYPICAL_S}


class Experiment:
    def __init__(self, key, title, paper, runs, render, needs=None):
        self.key, self.title, self.paper, self.runs, self.render = key, title, paper, runs, render
        self.needs = needs  # why it cannot run yet, if a part of the suite is missing


# ---- results ----

def read_runs(outdir, runs, missing):
    """Yields (run, its JSON) for each OUTDIR/<run>.json (or .json.gz, as a
    published folder stores a large one) that exists and parses; appends why
    to `missing` for each that does not."""
    for run in runs:
        path = os.path.join(outdir, f"{run}.json")
        opener = open
        if not os.path.exists(path) and os.path.exists(path + ".gz"):
            path, opener = path + ".gz", __import__("gzip").open
        if not os.path.exists(path):
            missing.append(f"run `{run}` absent ({os.path.basename(path)})")
            continue
        try:
            with opener(path, "rt") as f:
                data = __import__("json").load(f)
        except ValueError as e:
            missing.append(f"run `{run}` unreadable: {e}")
            continue
        yield run, data


class Results:
    """The cases of one experiment's runs, and lookups that say what is missing."""

    def __init__(self, outdir, runs):
        self.cases, self.contexts, self.missing = {}, {}, []
        for run, data in read_runs(outdir, runs, self.missing):
            self.contexts[run] = data.get("context", {})
            self.cases.update(summarize.load_cases(data.get("benchmarks", [])))

    def stat(self, name, key=None):
        """Stat over repetitions (ns) of a case's figure, or None."""
        case = self.cases.get(name)
        if case is None or not case.runs:
            return None
        if key is None:
            key = "p50_us" if name.startswith(("rtt/", "anchor/")) else None
        values = [v * 1e3 for v in case.values(key)] if key else case.times_ns()
        return summarize.Stat(values) if values else None

    def counter(self, name, key):
        case = self.cases.get(name)
        values = case.values(key) if case else []
        return statistics.median(values) if values else None

    def reason(self, name):
        case = self.cases.get(name)
        if case is None:
            return "not in the run"
        return case.reason() or "no figure"


class LoadResults:
    """The runs of wsbench-load JSON files (E7, E8), and what is missing."""

    def __init__(self, outdir, runs):
        self.runs, self.contexts, self.missing, self.cases = [], {}, [], {}
        for run, data in read_runs(outdir, runs, self.missing):
            context = dict(data.get("context", {}))
            context.setdefault("wsbench_placement", context.get("load_placement"))
            self.contexts[run] = context
            self.runs += data.get("runs", [])
        if self.contexts and not self.runs:
            self.missing.append("the runs hold no results")

    def e7(self, column, stack, shape):
        """The E7 cell's repetitions: `column` SOAP, REST, SOAP+REST or gRPC."""
        return [r for r in self.runs if r.get("experiment") == "E7" and r.get("column") == column
                and r.get("shape") == shape and r["target"].startswith(stack + " ")]

    def e8(self, stack, size):
        """The E8 run's repetitions for a stack and size."""
        return [r for r in self.runs if r.get("experiment") == "E8" and r.get("size") == size
                and r["target"].startswith(stack + " ")]

    def e8_sizes(self):
        return list(dict.fromkeys(r["size"] for r in self.runs if r.get("experiment") == "E8"))



EXPERIMENTS = [
    Experiment("E1", "Network latency: a request returning a fixed string", "cai-ottosson",
               ["ping"], render_e1),
    Experiment("E2", "XML parsing latency: 200-800 numeric strings into ints", "cai-ottosson",
               ["parse"], render_e2),
    Experiment("E3", "Query latency: int, string and object arrays of 200-3200 items",
               "cai-ottosson", ["query"], render_e3),
    Experiment("E4", "HTTP message sizes per messaging operation", "aihkisalo-paaso",
               ["messaging"], render_e4),
    Experiment("E5", "Round trip per messaging operation", "aihkisalo-paaso", ["messaging"],
               render_e5),
    Experiment("E6", "The round trip split into phases", "aihkisalo-paaso", ["messaging"],
               render_e6),
    Experiment("E7", "Concurrent clients asking for 100,000 primes", "costa-bernardino", ["e7"],
               render_e7),
    Experiment("E8", "CPU, memory and users served as load ramps up", "mohamed-wijesekera",
               ["e8"], render_e8),
    Experiment("E9", "Standard SOAP vs SOAP with Attachments vs MTOM for large data", "cha-et-al",
               ["e9"], render_e9),
]
# After the studies: what none of them measured (scripts/beyond.py), run
# by `run ... beyond` or `all`.
BEYOND = Experiment("beyond", "Beyond the studies: gRPC, TLS, simdjson", "none (ours)", ["beyond"],
                    lambda results, figures, plot: beyond.render(results.cases, plot))

ABOUT = {
    "E1": "Cai and Ottosson timed, in PHP 5 with client and server on two hosts, a call that "
          "returns a hard-coded string: the fixed cost of each protocol's stack. Here the same "
          "call runs natively over loopback, so the figure is what each stack costs with the "
          "network reduced to the kernel's loopback path.",
    "E2": "The same study parsed a document of 200, 400 and 800 strings holding numbers into "
          "integers with PHP's simplexml (a DOM), to show how much parsing adds to a query. Here "
          "the XML codec's decode of ints/N is timed; the DOM rows appear where the build has "
          "the xml-dom path.",
    "E3": "The study's main benchmark (Zend Framework, mean of 100 calls): a client asks for an "
          "array of N ints, strings or objects and the server returns it. Here the `get` round "
          "trip of each stack, with the reply decoded and verified.",
    "E4": "Aihkisalo and Paaso captured with Wireshark the HTTP size of each messaging "
          "operation (register, send, receive, unregister) for message-a (100 records) and "
          "message-b (a 128 kB binary). Here the bytes are counted on the socket.",
    "E5": "The same study's round trip per operation (Java: Axis2 for SOAP, Jersey for REST, on "
          "Tomcat, loopback), plotted in its Figs. 3-4. Here the native round trips.",
    "E6": "It split each round trip into nine phases from nanosecond timestamps (client "
          "library, transfer, container, service and back). Here the seven phases every stack "
          "marks, with the share of the round trip they leave unexplained.",
    "E7": "Costa and Bernardino sent 40 requests for the first 100,000 primes as 10 threads x 4, "
          "40 x 1 and 20 x 2 from JMeter to Wildfly, SOAP alone, REST alone and both at once, "
          "and printed the average, minimum, maximum and standard deviation per cell. Here "
          "`wsbench-load --experiment E7`: a thread is a client with its own connection, SOAP is "
          "gsoap/soap, REST beast/json, both at once is one mixed run; the server's CPU per "
          "call is added. SOAP runs twice: on gSOAP's own server (a thread per connection) and "
          "on Beast's with the same I/O thread as REST (beast/soap; both at once on one Beast "
          "server), so the threading model and the encoding are told apart.",
    "E8": "Mohamed and Wijesekera loaded a dictionary service on an Android host with users "
          "ramping up one per second to 21, at message sizes x1-x20, reporting CPU, memory and "
          "the most users served without a dropped request. Here `wsbench-load --experiment "
          "E8`: the SQLite dictionary (docs/reference/operations.md) served by wsbench-server as a "
          "separate, sampled process per protocol and size; each user a closed-loop client; "
          "after the ramp the users keep rising by half each step until the first failed call "
          "or the load side's limit (file descriptors, threads, a cap), and each run records "
          "which ended it. SOAP and XML-RPC run on their libraries' own servers (gSOAP, Abyss: "
          "a thread per connection) and again on Beast's I/O threads (beast/soap, "
          "beast/xmlrpc), the concurrency model matched.",
    "E9": "Cha et al. compared standard SOAP (base64), SOAP with Attachments and MTOM for 1-64 "
          "MiB raster tiles and 1-10,000 GML buildings over a 100 Mbit/s link. Here "
          "`scripts/e9` on the gsoap stack: message size, `get` round trip, serialisation and "
          "deserialisation per variant.",
}


def method_lines(results):
    ctx = next(iter(results.contexts.values()), {})
    fields = [("commit (built)", ctx.get("source_git_commit")),
              ("dirty tree (built)",
               "YES" if summarize.truthy(ctx.get("source_git_dirty")) else "no"),
              ("checkout when run", ctx.get("checkout_git_commit")),
              ("WARNING", ctx.get("provenance_warning")),
              ("CPU", ctx.get("cpu_model")), ("vCPUs", ctx.get("num_cpus")),
              ("kernel", ctx.get("kernel")), ("governor", ctx.get("cpu_governor")),
              ("placement", ctx.get("wsbench_placement")),
              ("link", ctx.get("link", "loopback")),
              ("date", ctx.get("date")), ("command", ctx.get("command_line"))]
    reps = {r.get("repetitions") for c in results.cases.values() for r in c.runs}
    fields.append(("repetitions", ", ".join(str(r) for r in sorted(x for x in reps if x))))
    return "\n".join(f"- {k}: `{v}`" for k, v in fields if v not in (None, ""))


# One column per factor a verdict is decided again with (scripts/claims.py's
# FACTORS: the common transport first), then whose effect the verdict is.
FACTOR_COLUMNS = [f.column for f in claims_mod.FACTORS]
CLAIM_HEADER = ["id", "the paper says", "kind", "we test", "library stacks", *FACTOR_COLUMNS,
                "whose effect", "interval", "figures"]
CLAIM_COLUMNS = ["id", "experiment", "paper", "section", "kind", "quote", "claim", "rule",
                 "strength", "note"]
CLAIM_KINDS = {"stated": "stated by the paper", "table": "read off the paper's table by us"}

EXPERIMENTS_DOC = os.path.join(ROOT, "docs", "experiments", "README.md")
HOW_TO_READ_HEADING = "## The claims and how to read a verdict"


def how_to_read():
    """docs/experiments/README.md's section on verdicts, so the report and the docs
    say the same thing from one text."""
    with open(EXPERIMENTS_DOC) as f:
        text = f.read()
    start = text.index(HOW_TO_READ_HEADING)
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)].strip()


def check_claims(rows):
    """claims.csv's columns and kinds, so a malformed row fails loudly."""
    for row in rows:
        missing = [c for c in CLAIM_COLUMNS if row.get(c) is None]
        if missing:
            sys.exit(f"experiments: claims.csv row {row.get('id')}: no column {missing}")
        if row["kind"] not in CLAIM_KINDS:
            sys.exit(f"experiments: claims.csv {row['id']}: kind '{row['kind']}' is not one of "
                     f"{sorted(CLAIM_KINDS)}")


def claim_row(c, d):
    said = f"{c['quote']} ({c['paper']}, {c['section']})"
    test = c["claim"] + (f" **{c['strength']}**" if c["strength"] else "") \
        + (f" Note: {c['note']}" if c["note"] else "")
    return [c["id"], said, c["kind"], test, d["lib"], *factor_cells(d), d["who"], d["interval"],
            d["evidence"] or "-"]


def factor_cells(d):
    return [d.get("factors", {}).get(f.name, "-") for f in claims_mod.FACTORS]


def whose(d):
    """The headline's "whose effect": the label without the figures."""
    return "; ".join(p for p in d["who"].split("; ") if not p.startswith("first figure"))


def write_report(outdir):
    figures = read_csv(FIGURES)
    claims = read_csv(CLAIMS)
    check_claims(claims)
    plot = Plot(outdir)
    sections, headline = [], []
    for exp in EXPERIMENTS:
        body = [f"## {exp.key}: {exp.title}", f"Paper: {exp.paper}. {ABOUT[exp.key]}"]
        loader = LoadResults if exp.key in ("E7", "E8") else Results
        results = loader(outdir, exp.runs) if exp.runs else None
        if results is not None and exp.key == "E9":
            note = os.path.join(outdir, "e9.link.txt")
            results.link_note = ""
            if os.path.exists(note):
                with open(note) as f:
                    results.link_note = f.read().strip()
        reason = exp.needs or (("; ".join(results.missing)) if results and results.missing
                               and not results.cases else None)
        if reason:
            body.append(f"**Not run here:** {reason}.")
        else:
            body.append("Machine and method:\n\n" + method_lines(results))
            if results.missing:
                body.append("Missing: " + "; ".join(results.missing))
            body += exp.render(results, figures, plot)
        if exp.key in RUNTIME_EXPERIMENTS:
            body.append(runtime_rows(outdir, exp.key))
        claim_rows = []
        for c in (c for c in claims if c["experiment"] == exp.key):
            if reason:
                d = {"lib": f"not measurable here: {reason}", "common": "-", "who": "-",
                     "evidence": "", "interval": "-"}
            else:
                d = claims_mod.decide(c, results)
            claim_rows.append(claim_row(c, d))
            headline.append([c["id"], c["kind"], d["lib"],
                             *[claims_mod.verdict_kind(v) for v in factor_cells(d)], whose(d)])
        if claim_rows:
            body.append("Claims (the paper's words, what we test, the verdict by each "
                        "library's own stack, again with each factor varied: the same encodings "
                        "over the common Beast transport, XML with base64 unwrapped, JSON parsed by "
                        "simdjson; and whose "
                        "effect it is):\n\n" + table(CLAIM_HEADER, claim_rows))
        sections.append("\n\n".join(body))
    sections.append(beyond_section(outdir, plot))
    head = ["# wsbench: the studies' experiments, natively",
            f"Written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} from the result files "
            "in this folder. Paper figures come from docs/papers/figures.csv with their table or "
            "section; claims from docs/papers/claims.csv.",
            how_to_read(),
            "## Which published conclusions survive natively\n\n"
            + table(["id", "kind", "library stacks", *FACTOR_COLUMNS, "whose effect"],
                    headline)]
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n\n".join(head + sections) + "\n")
    return os.path.join(outdir, "report.md")


def beyond_section(outdir, plot):
    results = Results(outdir, BEYOND.runs)
    body = ["## Beyond the studies",
            "None of the five papers measured gRPC, TLS or a vectorised JSON parser; a reader "
            "choosing a protocol today asks about all three. Here they run on the same "
            "operations, floor and statistics as the experiments above, and the expectations "
            "at the end are ours, not the papers'."]
    if results.missing and not results.cases:
        body.append(f"**Not run here:** {'; '.join(results.missing)}. `scripts/experiments run "
                    "OUTDIR beyond` runs it.")
    else:
        body.append("Machine and method:\n\n" + method_lines(results))
        body += BEYOND.render(results, None, plot)
    return "\n\n".join(body)


# ---- managed runtimes (scripts/runtime_share.py) ----

RUNTIME_EXPERIMENTS = ("E1", "E3", "E5")
RUNTIMES_DIR = "runtimes"


def runtime_rows(outdir, key):
    """The experiment's managed-runtime rows from OUTDIR/runtimes, or the
    commands that produce them."""
    folder = os.path.join(outdir, RUNTIMES_DIR)
    if not os.path.exists(os.path.join(folder, runtime_share.MANIFEST)):
        return ("**Managed runtimes:** none in this folder. `scripts/runtimes python,php,java` "
                "measures them beside the native clients (results/runtimes/<UTC time>/share.md); "
                "`scripts/experiments E1 E3 E5 --runtimes python,php,java` runs them into this "
                f"report, as does a copy of such a folder at `{RUNTIMES_DIR}/` here.")
    results = runtime_share.Results(folder)
    sections = dict(runtime_share.experiment_sections(results, heading="###"))
    return ("**Managed runtimes** (from `runtimes/`, their own native run in the same session; "
            "how to read the share: docs/runtimes/README.md):\n\n" + sections[key])


# ---- running ----

# The progress lines of the runs that have them (wsbench-load's E7 and E8
# cells, scripts/e9's cases, bench's minute lines), shown as well as logged:
# those runs take minutes.
RUN_PROGRESS = re.compile(r"^((wsbench-load: E[78]|e9:) \[\d+/\d+\]|bench: running, )")


def timed_run(outdir, run, cmd):
    """Runs cmd with its output in OUTDIR/run.log; True if it succeeded."""
    print(f"experiments: run {run}: {' '.join(shlex.quote(c) for c in cmd)}", flush=True)
    started = time.monotonic()
    with open(os.path.join(outdir, run + ".log"), "a") as log:
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, errors="replace")
        for line in child.stdout:
            log.write(line)
            if RUN_PROGRESS.match(line):
                print("  " + line, end="", file=sys.stderr, flush=True)
        code = child.wait()
    print(f"experiments: run {run} took {time.monotonic() - started:.0f} s (exit {code})",
          flush=True)
    return code == 0


def run_e9(outdir, quick):
    """scripts/e9 over the paper's 100 Mbit/s link where this user may make
    one (root, iproute2's tc) and the run is not quick, else over loopback;
    OUTDIR/e9.link.txt says which and why."""
    out = os.path.join(outdir, "e9.json")
    cmd = [E9_SCRIPT, "--out", out] + (["--quick"] if quick else ["--benchmark_repetitions=6"])
    if quick:
        # Over lan100 the quick rows alone moved over 3 GB (round trips and
        # their floors) and took more than 10 minutes.
        why = f"over loopback: --quick does not use {E9_LINK} (its round trips take over 10 min)"
    elif os.geteuid() != 0:
        why = f"over loopback: {E9_LINK} needs root"
    elif not (shutil.which("tc") and shutil.which("ip")):
        why = f"over loopback: {E9_LINK} needs ip and tc (Debian iproute2)"
    else:
        ok = timed_run(outdir, "e9", cmd + [f"--link={E9_LINK}"])
        try:
            with open(out) as f:
                link = __import__("json").load(f).get("context", {}).get("link", "")
        except (OSError, ValueError):
            link = ""
        if link == E9_LINK:
            note = f"over {E9_LINK}, as the paper's 100 Mbit/s link"
            with open(os.path.join(outdir, "e9.link.txt"), "w") as f:
                f.write(note + "\n")
            return ok
        why = f"over loopback: {link or E9_LINK + ' did not run'}"
    with open(os.path.join(outdir, "e9.link.txt"), "w") as f:
        f.write(why + "\n")
    return timed_run(outdir, "e9", cmd)


def run_experiments(outdir, keys, quick, runtimes=None):
    wanted = [e for e in EXPERIMENTS + [BEYOND] if keys == ["all"] or e.key in keys]
    unknown = set(keys) - {e.key for e in EXPERIMENTS + [BEYOND]} - {"all"}
    if unknown:
        sys.exit(f"experiments: unknown experiment(s) {', '.join(sorted(unknown))}")
    os.makedirs(outdir, exist_ok=True)
    runs = list(dict.fromkeys(r for e in wanted if not e.needs for r in e.runs))
    with_runtimes = bool(runtimes) and bool({e.key for e in wanted} & set(RUNTIME_EXPERIMENTS))
    steps = runs + ([RUNTIMES_DIR] if with_runtimes else [])
    progress = Progress("experiments", len(steps),
                        typical=[TYPICAL_S[s][1 if quick else 0] for s in steps])
    print(f"experiments: results in {outdir}/", file=sys.stderr, flush=True)
    failed = []
    for run in runs:
        progress.begin(f"run {run} for " + ", ".join(e.key for e in wanted if run in e.runs))
        progress.advance()
        if run in LOAD_RUNS:
            cmd = [LOAD, "--out", os.path.join(outdir, run + ".json")] \
                + LOAD_RUNS[run]["quick" if quick else "full"]
            if not timed_run(outdir, run, cmd):
                failed.append(run)
            continue
        if run == "e9":
            if not run_e9(outdir, quick):
                failed.append(run)
            continue
        spec = RUNS[run]
        cmd = [BENCH, f"--benchmark_filter={spec['filter']}",
               f"--benchmark_out={os.path.join(outdir, run + '.json')}",
               "--benchmark_out_format=json"]
        if spec.get("full"):
            cmd.append("--full")
        if quick and not spec.get("sized"):
            cmd.append(f"--iterations={QUICK_ITERATIONS}")
        if not timed_run(outdir, run, cmd):
            failed.append(run)
    if with_runtimes:
        progress.begin(f"managed runtimes {runtimes} for " + ", ".join(
            e.key for e in wanted if e.key in RUNTIME_EXPERIMENTS))
        args = argparse.Namespace(runtimes=runtimes, quick=quick, repetitions=None, calls=None)
        if runtime_share.run(os.path.join(outdir, RUNTIMES_DIR), args) != 0:
            failed.append(RUNTIMES_DIR)
    path = write_report(outdir)
    print(f"experiments: report {path}")
    return 1 if failed else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("outdir")
    r.add_argument("experiments", nargs="*", default=["all"],
                   help="E1 ... E9, beyond (gRPC, TLS, simdjson) or all (the default)")
    r.add_argument("--quick", action="store_true",
                   help=f"{QUICK_ITERATIONS} calls per repetition instead of 200 or 2 s; E8 "
                        "one repetition (its claims undecided: a full run has 3) of 0.25 s "
                        "steps; E9 four payloads (scripts/e9 --quick)")
    r.add_argument("--runtimes", metavar="R,...",
                   help="also run these managed runtimes (python,php,java or all) into "
                        "OUTDIR/runtimes: E1, E3 and E5 show them (scripts/runtime_share.py)")
    p = sub.add_parser("report")
    p.add_argument("outdir")
    args = ap.parse_args(argv)
    if args.command == "run":
        if args.runtimes:
            try:
                runtime_share.parse_runtimes(args.runtimes)
            except ValueError as e:
                ap.error(str(e))
        return run_experiments(args.outdir, args.experiments or ["all"], args.quick,
                               args.runtimes)
    print(write_report(args.outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
