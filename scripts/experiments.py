#!/usr/bin/env python3
"""The studies' experiments, run and laid out beside the papers' figures.

  scripts/experiments.py run OUTDIR [E1 ... E9 | all] [--quick] [--runtimes R,...]
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
import csv
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runtime_share  # noqa: E402  (managed runtimes beside the native rows)
import summarize  # noqa: E402  (the statistics rules of every table)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
FIGURES = os.path.join(ROOT, "docs", "papers", "figures.csv")
CLAIMS = os.path.join(ROOT, "docs", "papers", "claims.csv")
BENCH = os.path.join(ROOT, "build", "release", "bench")
LOAD = os.path.join(ROOT, "build", "release", "wsbench-load")
E9_SCRIPT = os.path.join(ROOT, "scripts", "e9")

SIZES = [200, 400, 800, 1600, 3200]
KINDS = {"ints": "Int", "strings": "String", "objects": "Object"}
# The paper's protocol -> our case prefix. cai-ottosson's REST answered XML
# (Zend), aihkisalo-paaso's REST spoke XML, JSON and Protostuff.
# REST's ping in JSON, as the other REST rows; beast/text (the string as a
# text/plain body) is listed beside it.
E1_PROTOCOLS = {"SOAP": "gsoap/soap", "REST": "beast/json", "XML-RPC": "xmlrpc-c/xmlrpc"}
E3_PROTOCOLS = {"SOAP": "gsoap/soap", "REST": "beast/xml", "XML-RPC": "xmlrpc-c/xmlrpc"}
E4_FORMATS = {"REST XML": "beast/xml", "REST JSON": "beast/json", "REST GPB": "beast/protobuf",
              "SOAP XML": "gsoap/soap", "SOAP MTOM": "gsoap/soap-mtom"}
MESSAGES = ["message-a/100", "message-b/128KiB"]
OPS = [("REG", "register", None), ("SEND", "send", True), ("RCV", "receive", True),
       ("UREG", "unregister", None)]
ALL_STACKS = ["gsoap/soap", "gsoap/soap-mtom", "xmlrpc-c/xmlrpc", "beast/json", "beast/xml",
              "beast/protobuf", "beast/text", "beast/soap", "beast/soap-mtom", "beast/xmlrpc"]


def rtt(stack, op, payload=None):
    return f"rtt/{stack}/{op}" + (f"/{payload}" if payload else "") + "/same"


# ---- the runs: one bench invocation each, shared between experiments ----

def alternation(items):
    return "(" + "|".join(items) + ")"


RUNS = {
    "ping": {"filter": "^rtt/[^/]+/[^/]+/ping/same"},
    # E2's claim sets the parse beside the query it is part of.
    "parse": {"filter": "^(decode/xml(-dom)?/ints/" + alternation(map(str, SIZES[:3]))
                        + "(/|$)|rtt/beast/xml/get/ints/800/same)", "full": True,
              # Codec rows of tens of microseconds need Google Benchmark's own
              # sizing: 30 of them would be one scheduler slice.
              "sized": True},
    "query": {"filter": "^rtt/" + alternation(sorted(set(E3_PROTOCOLS.values()) | {"beast/json"}))
                        + "/get/(ints|strings|objects)/[0-9]+/same", "full": True},
    "messaging": {"filter": "^rtt/" + alternation(E4_FORMATS.values())
                            + "/(register|send|receive|unregister)(/|$)", "full": True},
}
# Quick runs fix the calls per repetition instead of sizing them to 2 s.
QUICK_ITERATIONS = 30
# E7 and E8 run in wsbench-load, E9 in scripts/e9: their full and quick
# arguments. E8 quick: the same ramp to 21 users and search to 128, in
# steps of 0.25 s instead of 1 s (ramp) and 0.5 s (search), fewer search
# steps; E7 quick: each cell once instead of 3 times.
LOAD_RUNS = {
    "e7": {"full": ["--experiment", "E7"], "quick": ["--experiment", "E7", "--repeat", "1"]},
    "e8": {"full": ["--experiment", "E8"],
           "quick": ["--experiment", "E8", "--ramp-every", "0.25", "--hold", "0.25",
                     "--search", "32:16:128"]},
}
E9_LINK = "lan100"  # cha-et-al's 100 Mbit/s


class Experiment:
    def __init__(self, key, title, paper, runs, render, needs=None):
        self.key, self.title, self.paper, self.runs, self.render = key, title, paper, runs, render
        self.needs = needs  # why it cannot run yet, if a part of the suite is missing


# ---- results ----

def read_runs(outdir, runs, missing):
    """Yields (run, its JSON) for each OUTDIR/<run>.json that exists and
    parses; appends why to `missing` for each that does not."""
    for run in runs:
        path = os.path.join(outdir, f"{run}.json")
        if not os.path.exists(path):
            missing.append(f"run `{run}` absent ({os.path.basename(path)})")
            continue
        try:
            with open(path) as f:
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
            key = "p50_us" if name.startswith("rtt/") else None
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
        """The E7 cell: `column` SOAP, REST or SOAP+REST, the run of `stack`."""
        for r in self.runs:
            if (r.get("experiment") == "E7" and r.get("column") == column
                    and r.get("shape") == shape and r["target"].startswith(stack + " ")):
                return r
        return None

    def e8(self, stack, size):
        for r in self.runs:
            if (r.get("experiment") == "E8" and r.get("size") == size
                    and r["target"].startswith(stack + " ")):
                return r
        return None

    def e8_sizes(self):
        return list(dict.fromkeys(r["size"] for r in self.runs if r.get("experiment") == "E8"))


def mean_ci(run):
    """The 95% interval of a cell's mean latency (ms): normal, from n and sd."""
    lat, n = run["latency_ms"], run["n"]
    if not n or lat.get("stddev") is None or lat.get("mean") is None:
        return None
    half = 1.96 * lat["stddev"] / math.sqrt(n)
    return lat["mean"] - half, lat["mean"] + half


# ---- claims: rules over our results, three-valued ----

class Unmeasurable(Exception):
    pass


class ClaimContext:
    """The functions a rule in claims.csv may call. Comparisons use the CI95
    of each median: a claim holds only where the intervals decide it, does
    not hold where they decide against it, and is inconclusive otherwise."""

    def __init__(self, results):
        self.results = results
        self.used = []

    def _stat(self, name, key=None):
        s = self.results.stat(name, key)
        if s is None or s.median is None:
            raise Unmeasurable(f"{name}: {self.results.reason(name)}")
        if s.ci is None:
            raise Unmeasurable(f"{name}: too few repetitions for a CI95 (n={s.n})")
        self.used.append(f"{name} {summarize.fmt_time(s.median)} "
                         f"[{summarize.fmt_range(*s.ci)}]")
        return s

    def faster(self, a, b, by=1.0):
        """a's median at least `by` times below b's, with both CI95s."""
        sa, sb = self._stat(a), self._stat(b)
        if sb.ci[0] >= by * sa.ci[1]:
            return True
        if sb.ci[1] < by * sa.ci[0]:
            return False
        return None

    def ratio_between(self, a, b, lo, hi):
        """The ratio of a's median to b's within [lo, hi], over the range the
        CI95s allow: holds if the whole range is inside, fails if none is."""
        sa, sb = self._stat(a), self._stat(b)
        r_lo, r_hi = sa.ci[0] / sb.ci[1], sa.ci[1] / sb.ci[0]
        self.used.append(f"ratio {sa.median / sb.median:.3g} (CI range {r_lo:.3g}-{r_hi:.3g})")
        if lo <= r_lo and r_hi <= hi:
            return True
        if r_hi < lo or r_lo > hi:
            return False
        return None

    def faster_total(self, a_names, b_names, by=1.0):
        """The sum of a's medians at least `by` times below b's, with the
        CI95 bounds summed (conservative)."""
        sa, sb = [self._stat(n) for n in a_names], [self._stat(n) for n in b_names]
        a_lo, a_hi = sum(s.ci[0] for s in sa), sum(s.ci[1] for s in sa)
        b_lo, b_hi = sum(s.ci[0] for s in sb), sum(s.ci[1] for s in sb)
        self.used.append(f"totals {summarize.fmt_time(sum(s.median for s in sa))} against "
                         f"{summarize.fmt_time(sum(s.median for s in sb))}: "
                         f"{sum(s.median for s in sb) / sum(s.median for s in sa):.3g}x")
        if b_lo >= by * a_hi:
            return True
        if b_hi < by * a_lo:
            return False
        return None

    def share_below(self, part, whole, limit, part_key=None):
        """part's median / whole's median below limit (medians only)."""
        sp, sw = self._stat(part, part_key), self._stat(whole)
        share = sp.median / sw.median
        self.used.append(f"share {100 * share:.3g}%")
        return share < limit

    def bytes_ratio(self, a, b, key, lo, hi):
        """Exact byte counts (the same in every repetition): a / b in [lo, hi]."""
        va, vb = self.results.counter(a, key), self.results.counter(b, key)
        if va is None or vb is None:
            missing = a if va is None else b
            raise Unmeasurable(f"{missing}: {self.results.reason(missing)}")
        self.used.append(f"{a} {key} {va:,.0f}; {b} {vb:,.0f}; ratio {va / vb:.3g}")
        return lo <= va / vb <= hi

    def unexplained_below(self, name, limit):
        """The client phases explain the round trip within limit (a share)."""
        s = self._stat(name)
        gap = self.results.counter(name, "phase_unexplained_us")
        if gap is None:
            raise Unmeasurable(f"{name}: no phase columns (run with probes)")
        share = abs(gap) * 1e3 / s.median
        self.used.append(f"unexplained {gap:.3g} us = {100 * share:.2g}%")
        return share < limit

    @staticmethod
    def all_of(*verdicts):
        if any(v is False for v in verdicts):
            return False
        return None if any(v is None for v in verdicts) else True

    @staticmethod
    def not_(verdict):
        return None if verdict is None else not verdict

    # The functions a rule may call, and what an undecided rule is called.
    RULE_FUNCTIONS = ("faster", "faster_total", "ratio_between", "share_below", "bytes_ratio",
                      "unexplained_below", "all_of", "not_")
    UNDECIDED = "inconclusive (CI95s overlap)"

    def evaluate(self, rule):
        names = {n: getattr(self, n) for n in self.RULE_FUNCTIONS}
        names["rtt"] = rtt
        self.used = []
        try:
            verdict = eval(rule, {"__builtins__": {}}, names)  # rules are repo data
        except Unmeasurable as e:
            return "not measurable here", str(e)
        text = {True: "holds", False: "does not hold", None: self.UNDECIDED}
        return text[verdict], "; ".join(self.used)


class LoadClaimContext(ClaimContext):
    """Rules over wsbench-load runs (E7, E8)."""

    RULE_FUNCTIONS = ("e7_ratio", "e7_rest_faster_in_most", "e8_more", "e8_serves_more",
                      "all_of", "not_")
    UNDECIDED = "inconclusive"

    def e7_ratio(self, shape, lo, hi, column_rest="REST", column_soap="SOAP"):
        """REST's mean latency over SOAP's in one cell, within [lo, hi] over
        the range the means' 95% intervals allow."""
        rest = self.results.e7(column_rest, "beast/json", shape)
        soap = self.results.e7(column_soap, "gsoap/soap", shape)
        if rest is None or soap is None:
            raise Unmeasurable(f"E7 {shape}: no {'REST' if rest is None else 'SOAP'} cell")
        cr, cs = mean_ci(rest), mean_ci(soap)
        if cr is None or cs is None:
            raise Unmeasurable(f"E7 {shape}: no successful calls to average")
        r_lo, r_hi = cr[0] / cs[1], cr[1] / cs[0]
        ratio = rest["latency_ms"]["mean"] / soap["latency_ms"]["mean"]
        self.used.append(f"{shape}: REST/SOAP {ratio:.3g} (95% range {r_lo:.3g}-{r_hi:.3g})")
        if lo <= r_lo and r_hi <= hi:
            return True
        if r_hi < lo or r_lo > hi:
            return False
        return None

    def e7_rest_faster_in_most(self):
        """REST's mean below SOAP's, decided by the 95% intervals, in more
        than half of the cells (each shape, alone and simultaneous)."""
        verdicts = []
        for shape in E7_SHAPES:
            for rest_col, soap_col in (("REST", "SOAP"), ("SOAP+REST", "SOAP+REST")):
                verdicts.append(self.e7_ratio(shape, 0, 1, rest_col, soap_col))
        wins, losses = verdicts.count(True), verdicts.count(False)
        self.used.append(f"REST faster in {wins} of {len(verdicts)} cells, slower in {losses}")
        if wins * 2 > len(verdicts):
            return True
        return False if losses * 2 >= len(verdicts) else None

    def _ramp_figure(self, stack, size, key):
        run = self.results.e8(stack, size)
        if run is None:
            raise Unmeasurable(f"E8: no {stack} run at {size}")
        values = [s[key] for s in run["steps"] if s[key] is not None and s["users"] <= 21]
        if not values:
            raise Unmeasurable(f"E8: {stack} at {size} has no {key} over the ramp")
        return statistics.median(values)

    def _server_figure(self, stack, size, key):
        run = self.results.e8(stack, size)
        if run is None:
            raise Unmeasurable(f"E8: no {stack} run at {size}")
        value = (run.get("server") or {}).get(key)
        if value is None:
            raise Unmeasurable(f"E8: {stack} at {size} has no server {key}")
        return value

    def e8_more(self, heavier, lighter, key):
        """heavier's figure above lighter's at every size run: a step key's
        median over the ramp's steps (1-21 users), or cpu_ms_per_request,
        the server's CPU time per call over the whole run (the CPU cost once
        a closed loop keeps every server at 100% of its vCPU)."""
        sizes = self.results.e8_sizes()
        if not sizes:
            raise Unmeasurable("E8: no runs")
        figure = self._server_figure if key == "cpu_ms_per_request" else self._ramp_figure
        verdicts = []
        for size in sizes:
            h, li = figure(heavier, size, key), figure(lighter, size, key)
            self.used.append(f"{size} {key}: {heavier} {h:.3g}, {lighter} {li:.3g}")
            verdicts.append(h > li)
        return all(verdicts)

    def e8_serves_more(self, more, fewer, size="x1"):
        """more's most users served above fewer's; undecided where both
        reached the search's bound."""
        a, b = self.results.e8(more, size), self.results.e8(fewer, size)
        if a is None or b is None:
            raise Unmeasurable(f"E8: no {more if a is None else fewer} run at {size}")
        def shown(r):
            return (">=" if r["max_users_at_bound"] else "") + str(r["max_users"])
        for r, stack in ((a, more), (b, fewer)):
            if r.get("overran"):
                raise Unmeasurable(f"E8: the {stack} run at {size} overran (calls stuck past "
                                   "the timeout with none failed: the machine stalled it)")
        self.used.append(f"{size}: {more} {shown(a)}, {fewer} {shown(b)} users")
        if a["max_users_at_bound"] and b["max_users_at_bound"]:
            self.used.append("both served the search's bound")
            return None
        return a["max_users"] > b["max_users"]



def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def paper_values(figures, experiment):
    return [r for r in figures if r["experiment"] == experiment]


def paper_value(figures, experiment, **match):
    rows = [r for r in paper_values(figures, experiment)
            if all(str(r[k]) == str(v) for k, v in match.items())]
    if len(rows) != 1:
        raise KeyError(f"{experiment} {match}: {len(rows)} rows in figures.csv")
    return float(rows[0]["value"])


# ---- rendering ----

def fmt_ms(ns):
    return "-" if ns is None else f"{ns / 1e6:.4g}"


def ours_cells(results, name):
    s = results.stat(name)
    if s is None:
        return ["-", "-", "-", results.reason(name)]
    ci = f"{s.ci[0] / 1e6:.4g}-{s.ci[1] / 1e6:.4g}" if s.ci else f"none (n={s.n})"
    return [fmt_ms(s.median), ci, summarize.fmt_cv(s), ""]


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def ratio_text(x, y):
    return "-" if not x or not y else f"{x / y:.3g}"


class Plot:
    """One PNG per figure, when matplotlib is importable."""

    def __init__(self, outdir):
        self.outdir = outdir
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            self.plt = plt
        except Exception as e:  # absent or broken: tables only
            self.plt, self.why = None, f"no plot: matplotlib unavailable ({type(e).__name__})"

    def lines(self, name, title, xlabel, ylabel, series, logx=False, logy=True):
        """series: [(label, xs, ys, style)]; returns the markdown that shows it."""
        if self.plt is None:
            return f"_{self.why}_"
        fig, ax = self.plt.subplots(figsize=(6.4, 4.0))
        for label, xs, ys, style in series:
            pts = [(x, y) for x, y in zip(xs, ys) if y is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(os.path.join(self.outdir, name), dpi=100)
        self.plt.close(fig)
        return f"![{title}]({name})"

    def bars(self, name, title, ylabel, groups, series):
        """groups: x labels; series: [(label, values)]."""
        if self.plt is None:
            return f"_{self.why}_"
        fig, ax = self.plt.subplots(figsize=(6.4, 4.0))
        width = 0.8 / max(len(series), 1)
        for i, (label, values) in enumerate(series):
            xs = [g + i * width for g in range(len(groups))]
            ax.bar(xs, [v if v is not None else 0 for v in values], width, label=label)
        ax.set_xticks([g + width * (len(series) - 1) / 2 for g in range(len(groups))])
        ax.set_xticklabels(groups)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.set_yscale("log")
        ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(os.path.join(self.outdir, name), dpi=100)
        self.plt.close(fig)
        return f"![{title}]({name})"


def render_e1(results, figures, plot):
    rows, ours, theirs = [], [], []
    for protocol, stack in E1_PROTOCOLS.items():
        name = rtt(stack, "ping")
        paper_ms = paper_value(figures, "E1", protocol=protocol) * 1e3
        s = results.stat(name)
        cells = ours_cells(results, name)
        rows.append([protocol, stack, f"{paper_ms:.4g}"] + cells[:3]
                    + [ratio_text(paper_ms * 1e6, s.median if s else None), cells[3]])
        ours.append(s.median / 1e6 if s else None)
        theirs.append(paper_ms)
    for stack in ALL_STACKS:
        if stack in E1_PROTOCOLS.values():
            continue
        cells = ours_cells(results, rtt(stack, "ping"))
        rows.append(["(also)", stack, "-"] + cells[:3] + ["-", cells[3]])
    out = [table(["paper", "ours", "paper ms", "median ms", "CI95 ms", "CV", "paper/ours", "note"],
                 rows)]
    out.append(between_protocols(list(E1_PROTOCOLS), theirs, ours))
    out.append(plot.bars("e1.png", "E1: ping round trip", "ms", list(E1_PROTOCOLS),
                         [("paper (PHP, two hosts)", theirs), ("wsbench (native, loopback)", ours)]))
    return out


def between_protocols(protocols, theirs, ours):
    """Each protocol against the first: the comparison the papers draw."""
    base = protocols[0]
    rows = []
    for i, p in enumerate(protocols[1:], 1):
        rows.append([f"{p} / {base}", ratio_text(theirs[i], theirs[0]), ratio_text(ours[i], ours[0])])
    return "Between protocols (ratio of medians; paper: of means):\n\n" + table(
        ["ratio", "paper", "ours"], rows)


def render_e2(results, figures, plot):
    rows, ours, theirs, dom = [], [], [], []
    for n in SIZES[:3]:
        paper_ms = paper_value(figures, "E2", param=n) * 1e3
        name = f"decode/xml/ints/{n}"
        s = results.stat(name)
        cells = ours_cells(results, name)
        d = results.stat(f"decode/xml-dom/ints/{n}")
        rows.append([n, f"{paper_ms:.4g}"] + cells[:3]
                    + [ratio_text(paper_ms * 1e6, s.median if s else None),
                       fmt_ms(d.median) if d else "-", cells[3]])
        ours.append(s.median / 1e6 if s else None)
        theirs.append(paper_ms)
        dom.append(d.median / 1e6 if d else None)
    out = [table(["strings", "paper ms (simplexml DOM)", "ours: streaming median ms", "CI95 ms",
                  "CV", "paper/ours", "ours: DOM median ms", "note"], rows)]
    out.append(plot.lines("e2.png", "E2: parse N numeric strings into ints", "strings", "ms",
                          [("paper (PHP simplexml)", SIZES[:3], theirs, "o--"),
                           ("wsbench libxml2 reader", SIZES[:3], ours, "s-"),
                           ("wsbench libxml2 DOM", SIZES[:3], dom, "^-")]))
    return out


def render_e3(results, figures, plot):
    out = []
    for kind, label in KINDS.items():
        rows, series = [], []
        for protocol, stack in E3_PROTOCOLS.items():
            ours, theirs = [], []
            for n in SIZES:
                name = rtt(stack, "get", f"{kind}/{n}")
                paper_ms = paper_value(figures, "E3", protocol=protocol, case=kind, param=n) * 1e3
                s = results.stat(name)
                cells = ours_cells(results, name)
                rows.append([protocol, stack, n, f"{paper_ms:.4g}"] + cells[:3]
                            + [ratio_text(paper_ms * 1e6, s.median if s else None), cells[3]])
                ours.append(s.median / 1e6 if s else None)
                theirs.append(paper_ms)
            series += [(f"{protocol} paper", SIZES, theirs, "o--"),
                       (f"{protocol} ours ({stack})", SIZES, ours, "s-")]
        out.append(f"**{label}** (cai-ottosson {paper_values_source(figures, 'E3', kind)})\n\n"
                   + table(["paper", "ours", "N", "paper ms", "median ms", "CI95 ms", "CV",
                            "paper/ours", "note"], rows))
        out.append(plot.lines(f"e3-{kind}.png", f"E3: get {kind}[N]", "items", "ms", series,
                              logx=True))
    return out


def paper_values_source(figures, experiment, case):
    sources = {r["source"] for r in paper_values(figures, experiment) if r["case"] == case}
    return ", ".join(sorted(sources))


def slug(payload):
    return payload.replace("/", "-")


def render_e4(results, figures, plot):
    out = []
    for payload in MESSAGES:
        rows = []
        # The plot: each format's SEND, the message itself, paper beside ours.
        send = {"paper request": [], "ours request": [], "paper response": [],
                "ours response": []}
        for fmt, stack in E4_FORMATS.items():
            for op_label, op, with_payload in OPS:
                name = rtt(stack, op, payload if with_payload else None)
                for direction, key in (("request", "request_bytes"), ("response", "response_bytes")):
                    try:
                        paper = paper_value(figures, "E4", protocol=fmt, param=payload,
                                            case=f"{op_label} {direction}")
                    except KeyError:
                        paper = None
                    ours = results.counter(name, key)
                    rows.append([fmt, stack, op_label, direction,
                                 "-" if paper is None else f"{paper:,.0f}",
                                 "-" if ours is None else f"{ours:,.0f}",
                                 ratio_text(paper, ours),
                                 "" if ours is not None else results.reason(name)])
                    if op == "send":
                        send[f"paper {direction}"].append(paper)
                        send[f"ours {direction}"].append(ours)
        out.append(f"**{payload}** (aihkisalo-paaso Table II; HTTP bytes, headers included)\n\n"
                   + table(["paper", "ours", "op", "direction", "paper bytes", "ours bytes",
                            "paper/ours", "note"], rows))
        out.append(plot.bars(f"e4-{slug(payload)}.png", f"E4: send {payload}, HTTP bytes",
                             "bytes", list(E4_FORMATS), list(send.items())))
    return out


def render_e5(results, figures, plot):
    out = []
    for payload in MESSAGES:
        rows, series = [], []
        for fmt, stack in E4_FORMATS.items():
            cells_by_op, medians = [], []
            for op_label, op, with_payload in OPS:
                s = results.stat(rtt(stack, op, payload if with_payload else None))
                cells_by_op.append("-" if s is None else
                                   f"{s.median / 1e3:.4g} [{s.ci[0] / 1e3:.4g}-{s.ci[1] / 1e3:.4g}]"
                                   if s.ci else f"{s.median / 1e3:.4g}")
                medians.append(s.median / 1e3 if s else None)
            rows.append([fmt, stack] + cells_by_op)
            series.append((f"{fmt} ({stack})", medians))
        out.append(f"**{payload}**: round trip p50 in us, median over repetitions [CI95] "
                   "(the paper plots these, Figs. 3-4, without printed values)\n\n"
                   + table(["paper", "ours"] + [o[0] for o in OPS], rows))
        out.append(plot.bars(f"e5-{slug(payload)}.png", f"E5: {payload} round trips (ours)",
                             "us", [o[0] for o in OPS], series))
    return out


def render_e6(results, figures, plot):
    phases = summarize.PHASES
    rows, sends = [], []
    for fmt, stack in E4_FORMATS.items():
        for op in ("send", "receive"):
            name = rtt(stack, op, MESSAGES[0])
            case = results.cases.get(name)
            cells = []
            for p in phases:
                keys = [k for r in (case.runs if case else []) for k in r
                        if k.startswith(f"phase:{p}")]
                values = case.values(keys[0]) if keys else []
                cells.append(f"{statistics.median(values):.4g}" if values else "-")
            gap = results.counter(name, "phase_unexplained_us")
            rows.append([fmt, f"{op} {MESSAGES[0]}"] + cells
                        + ["-" if gap is None else f"{gap:.3g}",
                           "" if case and case.runs else results.reason(name)])
            if op == "send":
                sends.append([float(c) if c != "-" else None for c in cells])
    # The plot: where each format's send of message-a spends its time.
    series = [(p, [phase_times[i] for phase_times in sends]) for i, p in enumerate(phases)]
    return [table(["paper", "operation"] + [f"{p} us" for p in phases]
                  + ["unexplained us", "note"], rows),
            plot.bars("e6.png", f"E6: phases of send {MESSAGES[0]}", "us", list(E4_FORMATS),
                      series)]


E7_SHAPES = ["10x4", "40x1", "20x2"]
# The paper's columns: each protocol alone, then each during the
# simultaneous run; ours: SOAP gsoap/soap, REST beast/json.
E7_COLUMNS = [("REST", "REST", "beast/json", "primes(100000) alone"),
              ("SOAP", "SOAP", "gsoap/soap", "primes(100000) alone"),
              ("REST w/ SOAP", "SOAP+REST", "beast/json", "primes(100000) simultaneous"),
              ("SOAP w/ REST", "SOAP+REST", "gsoap/soap", "primes(100000) simultaneous")]


def fmt_num(x, digits=4):
    return "-" if x is None else f"{x:,.{digits}g}" if abs(x) < 10 ** digits else f"{x:,.0f}"


def render_e7(results, figures, plot):
    rows, groups, theirs, ours = [], [], [], []
    for shape in E7_SHAPES:
        for label, column, stack, case in E7_COLUMNS:
            protocol = label.split()[0]
            paper = {stat: paper_value(figures, "E7", protocol=protocol, case=case, param=shape,
                                       statistic=stat)
                     for stat in ("mean", "min", "max", "stdev")}
            run = results.e7(column, stack, shape)
            if run is None:
                rows.append([shape, label, stack] + [fmt_num(paper[k]) for k in paper]
                            + ["-"] * 7 + ["not in the run"])
                ours_mean = None
            else:
                lat = run["latency_ms"]
                ci = mean_ci(run)
                failed = sum(run["errors"].values())
                rows.append([shape, label, stack] + [fmt_num(paper[k]) for k in paper]
                            + [fmt_num(lat["mean"]),
                               "-" if ci is None else f"{fmt_num(ci[0])}-{fmt_num(ci[1])}",
                               fmt_num(lat["min"]), fmt_num(lat["max"]), fmt_num(lat["stddev"]),
                               fmt_num(run.get("server", {}).get("cpu_ms_per_request")),
                               ratio_text(paper["mean"], lat["mean"]),
                               f"n={run['n']}" + (f", {failed} failed" if failed else "")])
                ours_mean = lat["mean"]
            groups.append(f"{shape}\n{label}")
            theirs.append(paper["mean"])
            ours.append(ours_mean)
    out = [table(["threads x calls", "column", "ours", "paper avg ms", "paper min", "paper max",
                  "paper sd", "ours avg ms", "95% CI of avg", "ours min", "ours max", "ours sd",
                  "server CPU ms/call", "paper/ours", "note"], rows)]
    ratio_rows = []
    for shape in E7_SHAPES:
        for (rest_label, soap_label) in (("REST", "SOAP"), ("REST w/ SOAP", "SOAP w/ REST")):
            i = E7_SHAPES.index(shape) * len(E7_COLUMNS)
            labels = [c[0] for c in E7_COLUMNS]
            r, so = i + labels.index(rest_label), i + labels.index(soap_label)
            ratio_rows.append([shape, f"{rest_label} / {soap_label}", ratio_text(theirs[r], theirs[so]),
                               ratio_text(ours[r], ours[so])])
    out.append("Between protocols (ratio of mean latencies; below 1: REST faster):\n\n"
               + table(["threads x calls", "ratio", "paper", "ours"], ratio_rows))
    out.append(plot.bars("e7.png", "E7: mean latency of primes(100000)", "ms", groups,
                         [("paper (Java, WildFly, JMeter)", theirs),
                          ("wsbench (native, loopback)", ours)]))
    return out


E8_STACKS = [("SOAP", "gsoap/soap"), ("XML-RPC", "xmlrpc-c/xmlrpc"), ("REST", "beast/json"),
             ("REST", "beast/xml")]
E8_USERS = [1, 5, 10, 15, 21]


def paper_range(figures, protocol, what):
    try:
        return (paper_value(figures, "E8", protocol=protocol, statistic=f"{what}_min"),
                paper_value(figures, "E8", protocol=protocol, statistic=f"{what}_max"))
    except KeyError:
        return None


def cpu_us_per_call(run):
    ms = run.get("server", {}).get("cpu_ms_per_request")
    return None if ms is None else 1e3 * ms


def render_e8(results, figures, plot):
    ctx = next(iter(results.contexts.values()), {})
    out = [f"Ramp: {ctx.get('e8_ramp', '?')}; search: {ctx.get('e8_search', '?')}; "
           f"{ctx.get('e8_define_percent', '?')}% define, the rest put. CPU %: the server "
           "process's user+system CPU over each step's wall time (100 = one vCPU; the paper's "
           "is the share of the whole phone); RSS: the largest sample in the step. The paper "
           "gives ranges over all its tests (section 5.3) and the most users per protocol "
           "(5.4), not per size. Each user calls again as soon as a reply arrives, so a "
           "server that answers faster gets more calls: CPU per call tells the protocols' costs "
           "apart, CPU % what the load cost."]
    rows = []
    for size in results.e8_sizes():
        for protocol, stack in E8_STACKS:
            run = results.e8(stack, size)
            if run is None:
                continue
            by_users = {s["users"]: s for s in run["steps"]}
            at_max = by_users.get(run["max_users"])
            cpu = [by_users.get(u, {}).get("cpu_percent") for u in E8_USERS]
            rss = [by_users.get(u, {}).get("rss_mb") for u in E8_USERS]
            cpu_paper, rss_paper = paper_range(figures, protocol, "cpu_percent"), \
                paper_range(figures, protocol, "memory_mb")
            try:
                users_paper = fmt_num(paper_value(figures, "E8", protocol=protocol,
                                                  statistic="max_users"))
            except KeyError:
                users_paper = "-"
            failed = sum(run["errors"].values())
            rows.append([stack, size] + [fmt_num(c, 3) for c in cpu]
                        + [fmt_num(at_max and at_max["cpu_percent"], 3),
                           "-" if cpu_paper is None else f"{cpu_paper[0]:g}-{cpu_paper[1]:g}"]
                        + [fmt_num(r, 3) for r in rss]
                        + [fmt_num(at_max and at_max["rss_mb"], 3),
                           "-" if rss_paper is None else f"{rss_paper[0]:g}-{rss_paper[1]:g}",
                           (">=" if run["max_users_at_bound"] else "") + str(run["max_users"])
                           + (" (overran)" if run.get("overran") else ""),
                           users_paper,
                           fmt_num(cpu_us_per_call(run), 3),
                           f"{run['n']:,} ok, {failed} failed"])
    out.append(table(["ours", "size"] + [f"CPU % @{u}" for u in E8_USERS]
                     + ["CPU % @max", "paper CPU %"] + [f"RSS MB @{u}" for u in E8_USERS]
                     + ["RSS MB @max", "paper MB", "max users", "paper max users",
                        "server CPU us/call", "calls"],
                     rows))
    size = (results.e8_sizes() or ["x1"])[0]
    for key, unit, name, what in (("cpu_percent", "CPU % of one vCPU", "e8-cpu.png",
                                   "cpu_percent"),
                                  ("rss_mb", "RSS MB", "e8-rss.png", "memory_mb")):
        series = []
        for protocol, stack in E8_STACKS:
            run = results.e8(stack, size)
            if run is not None:
                series.append((f"{stack} (ours)", [s["users"] for s in run["steps"]],
                               [s[key] for s in run["steps"]], "-"))
        for protocol in ("SOAP", "REST"):
            rng = paper_range(figures, protocol, what)
            if rng:
                series.append((f"paper {protocol} (range)", [1, 21, 21, 1, 1],
                               [rng[0], rng[0], rng[1], rng[1], rng[0]], "--"))
        out.append(plot.lines(name, f"E8: server {unit} per user step ({size})", "users", unit,
                              series, logx=True, logy=key == "cpu_percent"))
    return out


E9_VARIANTS = ["soap", "soap-swa", "soap-mtom"]
E9_PAYLOADS = [f"binary/{n}MiB" for n in (1, 4, 16, 32, 64)] + \
    [f"gml/{n}" for n in (1, 10, 100, 1000, 5000, 10000)]


def render_e9(results, figures, plot):
    ctx = next(iter(results.contexts.values()), {})
    link = ctx.get("link", "loopback")
    out = [f"Link: `{link}`" + (f" ({ctx['link_shaping']})" if ctx.get("link_shaping") else "")
           + (f". {results.link_note}" if getattr(results, "link_note", "") else ".")]
    rows, series = [], {v: ([], []) for v in E9_VARIANTS}
    for payload in E9_PAYLOADS:
        cells, rtts = [], {}
        present = False
        for v in E9_VARIANTS:
            rt = results.stat(rtt("gsoap/" + v, "get", payload))
            ser, de = results.stat(f"encode/{v}/{payload}"), results.stat(f"decode/{v}/{payload}")
            wire = results.counter(f"encode/{v}/{payload}", "wire_bytes")
            present = present or any(x is not None for x in (rt, ser, de))
            rtts[v] = rt.median if rt else None
            cells += ["-" if wire is None else f"{wire:,.0f}",
                      fmt_ms(rt.median if rt else None),
                      fmt_ms(ser.median if ser else None) + " / "
                      + fmt_ms(de.median if de else None)]
            if rt:
                mib = float(payload.split("/")[1][:-3]) if payload.startswith("binary") else None
                if mib:
                    series[v][0].append(mib)
                    series[v][1].append(rt.median / 1e6)
        if not present:
            continue
        rows.append([payload] + cells + [ratio_text(rtts["soap"], rtts["soap-swa"]),
                                         ratio_text(rtts["soap"], rtts["soap-mtom"])])
    header = ["payload"]
    for v in E9_VARIANTS:
        header += [f"{v} bytes", f"{v} rtt ms", f"{v} ser / deser ms"]
    out.append(table(header + ["rtt soap/swa", "rtt soap/mtom"], rows))
    paper_rows = [[r["source"], r["case"], r["param"], r["statistic"], r["value"], r["unit"],
                   r["note"]] for r in paper_values(figures, "E9")]
    out.append("The paper's figures (it prints three; the rest are plotted):\n\n"
               + table(["source", "case", "size", "statistic", "value", "unit", "note"],
                       paper_rows))
    mtom_ms = [r for r in paper_values(figures, "E9") if r["statistic"] == "approx"]
    plot_series = [(f"{v} (ours)", xs, ys, "s-") for v, (xs, ys) in series.items()]
    if mtom_ms:
        plot_series.append(("paper: MTOM ser+deser, 32 MiB", [32], [float(mtom_ms[0]["value"])],
                            "o"))
    out.append(plot.lines("e9.png", "E9: get round trip of a binary", "MiB", "ms", plot_series,
                          logx=True))
    return out


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
          "call is added.",
    "E8": "Mohamed and Wijesekera loaded a dictionary service on an Android host with users "
          "ramping up one per second to 21, at message sizes x1-x20, reporting CPU, memory and "
          "the most users served without a dropped request. Here `wsbench-load --experiment "
          "E8`: the SQLite dictionary (docs/dictionary.md) served by wsbench-server as a "
          "separate, sampled process per protocol and size; each user a closed-loop client; "
          "after the ramp the users keep rising in steps until the first failed call.",
    "E9": "Cha et al. compared standard SOAP (base64), SOAP with Attachments and MTOM for 1-64 "
          "MiB raster tiles and 1-10,000 GML buildings over a 100 Mbit/s link. Here "
          "`scripts/e9` on the gsoap stack: message size, `get` round trip, serialisation and "
          "deserialisation per variant.",
}


def method_lines(results):
    ctx = next(iter(results.contexts.values()), {})
    fields = [("commit", ctx.get("source_git_commit")),
              ("dirty tree", "YES" if summarize.truthy(ctx.get("source_git_dirty")) else "no"),
              ("CPU", ctx.get("cpu_model")), ("vCPUs", ctx.get("num_cpus")),
              ("kernel", ctx.get("kernel")), ("governor", ctx.get("cpu_governor")),
              ("placement", ctx.get("wsbench_placement")),
              ("link", ctx.get("link", "loopback")),
              ("date", ctx.get("date")), ("command", ctx.get("command_line"))]
    reps = {r.get("repetitions") for c in results.cases.values() for r in c.runs}
    fields.append(("repetitions", ", ".join(str(r) for r in sorted(x for x in reps if x))))
    return "\n".join(f"- {k}: `{v}`" for k, v in fields if v not in (None, ""))


def write_report(outdir):
    figures = read_csv(FIGURES)
    claims = read_csv(CLAIMS)
    plot = Plot(outdir)
    sections, headline = [], []
    for exp in EXPERIMENTS:
        body = [f"## {exp.key}: {exp.title}", f"Paper: {exp.paper}. {ABOUT[exp.key]}"]
        loader = LoadResults if exp.key in ("E7", "E8") else Results
        results = loader(outdir, exp.runs) if exp.runs else None
        if results is not None and exp.key == "E9":
            note = os.path.join(outdir, "e9.link.txt")
            results.link_note = open(note).read().strip() if os.path.exists(note) else ""
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
                verdict, evidence = "not measurable here", reason
            elif not c["rule"]:
                verdict, evidence = "not measurable here", "no rule for this claim yet"
            else:
                context = LoadClaimContext if exp.key in ("E7", "E8") else ClaimContext
                verdict, evidence = context(results).evaluate(c["rule"])
            claim_rows.append([c["id"], c["claim"], c["source"], verdict, evidence])
            headline.append([c["id"], c["claim"], verdict])
        if claim_rows:
            body.append("Claims:\n\n" + table(["id", "the paper's claim", "source", "here",
                                               "decided by"], claim_rows))
        sections.append("\n\n".join(body))
    head = ["# wsbench: the studies' experiments, natively",
            f"Written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} from the result files "
            "in this folder. Times: median over repetitions with its distribution-free CI95 "
            "and CV (scripts/summarize.py's rules); round trips: each repetition's median call. "
            "Paper figures come from docs/papers/figures.csv with their table or section.",
            "## Which published conclusions survive natively\n\n"
            + table(["id", "the paper's claim", "here"], headline)]
    with open(os.path.join(outdir, "report.md"), "w") as f:
        f.write("\n\n".join(head + sections) + "\n")
    return os.path.join(outdir, "report.md")


# ---- managed runtimes (scripts/runtime_share.py) ----

RUNTIME_EXPERIMENTS = ("E1", "E3", "E5")
RUNTIMES_DIR = "runtimes"


def runtime_rows(outdir, key):
    """The experiment's managed-runtime rows from OUTDIR/runtimes, or the
    commands that produce them."""
    folder = os.path.join(outdir, RUNTIMES_DIR)
    if not os.path.exists(os.path.join(folder, runtime_share.MANIFEST)):
        return ("**Managed runtimes:** none in this folder. `scripts/runtimes python,php,java` "
                "measures them beside the native clients (results/runtimes-<UTC time>/share.md); "
                "`scripts/experiments E1 E3 E5 --runtimes python,php,java` runs them into this "
                f"report, as does a copy of such a folder at `{RUNTIMES_DIR}/` here.")
    results = runtime_share.Results(folder)
    sections = dict(runtime_share.experiment_sections(results, heading="###"))
    return ("**Managed runtimes** (from `runtimes/`, their own native run in the same session; "
            "how to read the share: README, Managed runtimes):\n\n" + sections[key])


# ---- running ----

def timed_run(outdir, run, cmd):
    """Runs cmd with its output in OUTDIR/run.log; True if it succeeded."""
    print(f"experiments: run {run}: {' '.join(shlex.quote(c) for c in cmd)}", flush=True)
    started = time.monotonic()
    with open(os.path.join(outdir, run + ".log"), "a") as log:
        code = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
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
    wanted = [e for e in EXPERIMENTS if keys == ["all"] or e.key in keys]
    unknown = set(keys) - {e.key for e in EXPERIMENTS} - {"all"}
    if unknown:
        sys.exit(f"experiments: unknown experiment(s) {', '.join(sorted(unknown))}")
    os.makedirs(outdir, exist_ok=True)
    runs = list(dict.fromkeys(r for e in wanted if not e.needs for r in e.runs))
    failed = []
    for run in runs:
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
    if runtimes:
        wanted_keys = {e.key for e in wanted}
        if wanted_keys & set(RUNTIME_EXPERIMENTS):
            args = argparse.Namespace(runtimes=runtimes, quick=quick, repetitions=None,
                                      calls=None)
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
    r.add_argument("experiments", nargs="*", default=["all"])
    r.add_argument("--quick", action="store_true",
                   help=f"{QUICK_ITERATIONS} calls per repetition instead of 200 or 2 s; E7 "
                        "each cell once; E8 0.25 s steps; E9 four payloads (scripts/e9 --quick)")
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
