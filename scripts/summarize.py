#!/usr/bin/env python3
"""Tables a researcher can cite, from a wsbench Google Benchmark JSON file.

Usage: scripts/summarize.py [--instructions results/count/latest/count.json]
                            results/bench/latest/bench.json

Every figure comes from the per-repetition rows (Google Benchmark's own
aggregates are ignored), so one repetition and many are read the same way:

  median  the median over repetitions of the case's time per operation
          (round trips: of each repetition's median call, p50_us);
  CI95    distribution-free 95% confidence interval of that median, from
          order statistics at binomial ranks; none below 6 repetitions;
  CV      sample standard deviation / mean over the repetitions, marked
          "!" above 5%;
  n       repetitions (round trips: repetitions x calls per repetition).

One table per measured step (encode, decode, bind, write, read, unbind),
one row per payload and codec, the memcpy floor first in the encode table;
then wire bytes, round trips (anchor rows among them), their phases, and
each stack against its anchor. A case that was skipped or failed keeps its
row in each of its tables, with the reason. The header
gives the run's context and, when the context has calibration samples, how
noisy the machine was; a run from a modified tree says DIRTY TREE on every
table. --instructions adds the instructions per operation that scripts/count
measured.

Rows come in a reader's order (codec rows by payload and codec, round trips
by stack, codec, operation and payload), not the order the interleaved
repetitions finished in. A summary of an unoptimised build opens with a
warning; every summary ends with the headline block (scripts/headline.py):
each stack's ping against the floor and against its anchor, the slowest and
noisiest rows with the command that repeats them, and where the JSON is.
"""
import argparse
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from anchor_pairs import anchor_table  # noqa: E402  (stack against anchor)
from content_length import content_length_table  # noqa: E402  (gSOAP's counting pass)
from headline import headline, natural_key, rtt_key, unoptimised  # noqa: E402  (the last screen)

UNIT_TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
STEPS = ["encode", "decode", "bind", "write", "read", "unbind"]
PHASES = ["client_marshal", "request_transfer", "server_parse", "service", "server_marshal",
          "response_transfer", "client_parse"]
CONFIDENCE = 0.95
CV_LIMIT = 0.05
# Messages of cases that did not apply, as opposed to ones that went wrong
# (bench/codec_bench.cpp).
SKIP_PREFIXES = ("unsupported:", "not applicable:")


# ---- statistics: the rules of bench/harness/stats.h ----

def median_ci_ranks(n, confidence=CONFIDENCE):
    """1-based ranks (lo, hi) of the order statistics bounding the median
    with at least `confidence`, and the exact coverage, or None when n is
    too small. Coverage is 1 - 2 P(B <= lo - 1), B ~ Binomial(n, 1/2),
    computed in integers: P(B <= k) = sum(C(n, j), j <= k) / 2^n."""
    alpha_half = (1 - confidence) / 2
    best, below = None, 0
    for k in range(n // 2 + 1):
        below += math.comb(n, k)
        if below > alpha_half * 2 ** n:
            break
        best = (k + 1, n - k, 1 - 2 * below / 2 ** n)
    return best


def min_samples_for_percentile(percent):
    """n >= 100 / (100 - percent): below that the nearest-rank percentile
    is the maximum (p90: 10, p99: 100)."""
    return -(-100 // (100 - percent))


class Stat:
    """median, CI95 of the median, CV over one cell's per-repetition values."""

    def __init__(self, values):
        values = sorted(values)
        self.n = len(values)
        self.median = statistics.median(values) if values else None
        ranks = median_ci_ranks(self.n)
        self.ci = (values[ranks[0] - 1], values[ranks[1] - 1]) if ranks else None
        mean = statistics.fmean(values) if values else 0
        self.cv = statistics.stdev(values) / mean if self.n >= 2 and mean > 0 else None

    @property
    def noisy(self):
        return self.cv is not None and self.cv > CV_LIMIT


# ---- formatting ----

def time_unit(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= scale:
            return unit, scale
    return "ns", 1.0


def fmt_time(ns):
    if ns is None:
        return "-"
    unit, scale = time_unit(ns)
    return f"{ns / scale:.4g} {unit}"


def fmt_range(lo, hi):
    unit, scale = time_unit(lo)
    return f"{lo / scale:.4g}-{hi / scale:.4g} {unit}"


def fmt_ci(s):
    if s.ci:
        return fmt_range(*s.ci)
    return f"none (n<{min_n_for_ci()})" if s.n else "-"


def min_n_for_ci():
    return next(n for n in range(1, 100) if median_ci_ranks(n))


def fmt_cv(s):
    return "-" if s.cv is None else f"{100 * s.cv:.1f}%" + ("!" if s.noisy else "")


def fmt_bytes(n):
    return "-" if n is None else f"{int(n):,}"


def fmt_count(n):
    return "-" if n is None else f"{n:,}"


# ---- the run ----

class Case:
    """One benchmark case: its successful repetitions and failed ones."""

    def __init__(self, name):
        self.name = name
        self.runs = []    # per-repetition rows that measured something
        self.errors = []  # messages of the repetitions that did not
        self.aggregates_only = False

    def values(self, key):
        return [r[key] for r in self.runs if isinstance(r.get(key), (int, float))]

    def times_ns(self):
        return [r["real_time"] * UNIT_TO_NS[r.get("time_unit", "ns")] for r in self.runs]

    def reason(self):
        """Why the case (or some of its repetitions) has no figure; "" if none."""
        if self.aggregates_only:
            return "only aggregates in the file (run without --benchmark_report_aggregates_only)"
        if not self.errors:
            return ""
        messages = list(dict.fromkeys(self.errors))
        message = "; ".join(messages)
        if self.runs:
            total = len(self.runs) + len(self.errors)
            return f"{len(self.errors)} of {total} repetitions failed: {message}"
        kind = "skipped" if all(m.startswith(SKIP_PREFIXES) for m in messages) else "FAILED"
        return f"{kind}: {message}"


def case_name(row):
    """The case a row belongs to: run_name without the fixed-count and
    manual-time suffixes Google Benchmark adds."""
    name = row.get("run_name") or row["name"]
    name = re.sub(r"/iterations:\d+", "", name)
    return name.removesuffix("/manual_time")


def load_cases(benchmarks):
    cases = {}
    for row in benchmarks:
        case = cases.setdefault(case_name(row), Case(case_name(row)))
        if row.get("run_type") == "aggregate":
            continue
        if row.get("error_occurred"):
            case.errors.append(row.get("error_message") or "error")
        else:
            case.runs.append(row)
    for case in cases.values():
        case.aggregates_only = not case.runs and not case.errors
    return cases


def truthy(value):
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "dirty")
    return bool(value)


def numbers(value):
    """Calibration samples: a JSON list, or a string holding one."""
    if isinstance(value, list):
        return [float(v) for v in value]
    if isinstance(value, str):
        return [float(v) for v in re.findall(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", value)]
    return []


class Printer:
    def __init__(self, dirty):
        self.mark = "  [DIRTY TREE]" if dirty else ""

    def table(self, title, header, rows, notes=()):
        widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]

        def line(cells):
            # Names and notes read left to right, figures line up on the right.
            return "  ".join(str(c).ljust(w) if i == 0 or header[i] == "note" else str(c).rjust(w)
                             for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
        first, _, rest = title.partition("\n")
        print(f"\n{first}{self.mark}" + (f"\n{rest}" if rest else ""))
        print(line(header))
        print("-" * len(line(header)))
        for r in rows:
            print(line(r))
        for n in notes:
            print(n)


def print_header(ctx, path):
    # The keys bench writes (bench/harness/environment.cpp, bench/main.cpp).
    dirty = truthy(ctx.get("source_git_dirty"))
    warning = unoptimised(ctx)
    if warning:
        print(warning + "\n")
    print(f"wsbench results: {path}" + ("  DIRTY TREE (uncommitted changes)" if dirty else ""))
    steal = ctx.get("steal_during_run_pct")
    fields = [
        ("commit", ctx.get("source_git_commit")),
        ("dirty", "yes" if dirty else ("no" if "source_git_dirty" in ctx else None)),
        ("date", ctx.get("date")),
        ("host", ctx.get("host_name")),
        ("kernel", ctx.get("kernel")),
        ("cpu", ctx.get("cpu_model")),
        ("cpus", ctx.get("num_cpus")),
        ("governor", ctx.get("cpu_governor")),
        ("steal", None if steal is None else f"{float(steal):.3g}%"),
        ("load avg", ctx.get("load_avg")),
        ("build", ctx.get("wsbench_build_type")),
        ("flags", ctx.get("wsbench_cxx_flags")),
        ("sweep", ctx.get("wsbench_sweep")),
        ("strings", ctx.get("wsbench_payload_strings")),
        ("placement", ctx.get("wsbench_placement")),
        ("probes", ctx.get("probes")),
        ("phases", ctx.get("server_phases")),
        ("link", ctx.get("link")),
        ("shaping", ctx.get("link_shaping")),
        ("heap", ctx.get("heap_policy")),
        ("alloc", ctx.get("alloc_policy")),
        ("command", ctx.get("command_line")),
    ]
    for label, value in fields:
        if value is None:
            continue
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        print(f"  {label:<10}{value}")

    before = numbers(ctx.get("calibration_before_ns"))
    after = numbers(ctx.get("calibration_after_ns"))
    if before or after:
        print("  machine noise (a fixed loop timed before and after the run):")
        for label, samples in (("before", before), ("after", after)):
            if not samples:
                print(f"    {label:<7}not recorded")
                continue
            s = Stat(samples)
            spread = (max(samples) - min(samples)) / s.median if s.median else math.nan
            print(f"    {label:<7}median {fmt_time(s.median)}, spread (max-min)/median "
                  f"{100 * spread:.1f}%, CV {fmt_cv(s)}, n {s.n}")
        if before and after:
            drift = statistics.median(after) / statistics.median(before) - 1
            print(f"    after/before medians: {100 * drift:+.1f}%")
    print(f"\nCells: median over repetitions; CI95 of that median from order statistics at "
          f"binomial ranks\n(none for n < {min_n_for_ci()}); CV = stddev/mean over repetitions, "
          f"'!' above {100 * CV_LIMIT:.0f}%; n = repetitions\n(round trips: repetitions x calls "
          f"per repetition).")
    return dirty


def stat_cells(stat, n_label):
    if not stat.n:
        return ["-", "-", "-", n_label]
    return [fmt_time(stat.median), fmt_ci(stat), fmt_cv(stat), n_label]


# encode = bind + write and decode = read + unbind: the stage ratio columns.
STAGE_PARTS = {"encode": ("bind", "write"), "decode": ("read", "unbind")}


def stage_ratio_cell(cases, step, codec, payload):
    """median(step) / (median(part1) + median(part2)), with the range the
    three CI95s allow (whole/(sum of the upper bounds) to whole/(sum of the
    lower bounds)); '*' marks a range that excludes 1. "-" without stages."""
    names = [f"{step}/{codec}/{payload}"] + [f"{p}/{codec}/{payload}" for p in STAGE_PARTS[step]]
    stats = [Stat(cases[n].times_ns()) if n in cases else None for n in names]
    if any(s is None or not s.n for s in stats):
        return "-"
    whole, a, b = stats
    cell = f"{whole.median / (a.median + b.median):.3f}"
    if whole.ci and a.ci and b.ci:
        lo = whole.ci[0] / (a.ci[1] + b.ci[1])
        hi = whole.ci[1] / (a.ci[0] + b.ci[0])
        cell += f" ({lo:.2f}-{hi:.2f})" + ("" if lo <= 1 <= hi else "*")
    return cell


def instruction_ratio_cell(instructions, step, codec, payload):
    """The same ratio in instructions per operation (scripts/count)."""
    names = [f"{step}/{codec}/{payload}"] + [f"{p}/{codec}/{payload}" for p in STAGE_PARTS[step]]
    counts = [instructions.by_case.get(n, {}).get("instructions_per_op") for n in names]
    if any(c is None for c in counts) or counts[1] + counts[2] == 0:
        return "-"
    return f"{counts[0] / (counts[1] + counts[2]):.4f}"


def median_cell(case, key, fmt):
    values = case.values(key)
    return fmt(statistics.median(values)) if values else "-"


def step_tables(out, cases, payloads, codecs, instructions):
    faults = any(c.values("page_faults_per_op") for c in cases.values())
    for step in STEPS:
        step_cases = {k: c for k, c in cases.items() if k.split("/")[0] == step}
        if not step_cases:
            continue
        parts = STAGE_PARTS.get(step)
        ratio = parts is not None and any(k.split("/")[0] in parts for k in cases)
        header = ["payload", "codec", "median", "CI95", "CV", "n"]
        if faults:
            header.append("faults/op")
        if ratio:
            header.append(f"{step}/({'+'.join(parts)})")
        if instructions:
            header.append("instr/op")
            if ratio:
                header.append("instr ratio")
        header.append("note")
        rows = []
        for payload in payloads:
            names = ([f"memcpy/{payload}"] if step == "encode" else []) + \
                    [f"{step}/{codec}/{payload}" for codec in codecs]
            for name in names:
                case = cases.get(name)
                if case is None:
                    continue
                stat = Stat(case.times_ns())
                codec = "memcpy" if name.startswith("memcpy/") else name.split("/")[1]
                row = [payload, codec] + stat_cells(stat, str(stat.n))
                if faults:
                    row.append(median_cell(case, "page_faults_per_op", lambda v: f"{v:.3g}"))
                memcpy = codec == "memcpy"
                if ratio:
                    row.append("" if memcpy else stage_ratio_cell(cases, step, codec, payload))
                if instructions:
                    row.append(instructions.cell(name))
                    if ratio:
                        row.append("" if memcpy else
                                   instruction_ratio_cell(instructions, step, codec, payload))
                row.append(case.reason())
                rows.append(row)
        notes = []
        if ratio:
            notes.append(f"{step}/({'+'.join(parts)}): ratio of the medians; in brackets the "
                         "range their CI95s allow, '*' if it excludes 1.")
        if faults:
            notes.append("faults/op: minor page faults per iteration (median over repetitions).")
        out.table(f"{step}: time per operation", header, rows, notes)


def wire_table(out, cases, payloads, codecs):
    reasons = []

    def cell(payload, codec):
        found = [cases[n] for n in (f"encode/{codec}/{payload}", f"decode/{codec}/{payload}")
                 if n in cases]
        for case in found:
            sizes = set(case.values("wire_bytes"))
            if sizes:
                return fmt_bytes(sizes.pop()) if len(sizes) == 1 else "varies!"
        if not found:
            return "-"
        reason = found[0].reason() or "no wire_bytes"
        if reason not in reasons:
            reasons.append(reason)
        return f"[{reasons.index(reason) + 1}]"

    rows = []
    for payload in payloads:
        raw = next((c.values("raw_bytes")[0] for n, c in cases.items()
                    if not n.startswith("rtt/") and n.endswith("/" + payload)
                    and c.values("raw_bytes")), None)
        rows.append([payload, fmt_bytes(raw)] + [cell(payload, c) for c in codecs])
    notes = [f"  [{i + 1}] {r}" for i, r in enumerate(reasons)]
    out.table("wire bytes (raw payload bytes under 'raw'; [k]: no figure, reason below)",
              ["payload", "raw"] + codecs, rows, notes)


def samples_label(case):
    per_rep = case.values("n") or [r.get("iterations") for r in case.runs]
    if not per_rep:
        return str(len(case.runs)) if case.runs else "0"
    lo, hi = int(min(per_rep)), int(max(per_rep))
    return f"{len(case.runs)}x{lo}" if lo == hi else f"{len(case.runs)}x{lo}-{hi}"


def percentile_cell(case, percent):
    """The median over repetitions of a percentile counter, or why it is
    absent: the calls per repetition were too few to support it."""
    values = case.values(f"p{percent}_us")
    if case.runs and len(values) == len(case.runs):
        return fmt_time(statistics.median(values) * 1e3)
    if not case.runs:
        return "-"
    return f"n<{min_samples_for_percentile(percent)}"


def rtt_tables(out, rtt, instructions):
    header = ["case", "p50", "CI95", "CV", "n", "p90", "p99", "floor p50", "p50/floor",
              "req bytes", "resp bytes"]
    # Over a shaped link (bench --link): what the link alone needs per call.
    linked = any(case.values("wire_limit_ms") for _, case in rtt)
    if linked:
        header.append("wire limit")
    if instructions:
        header.append("instr/op")
    header.append("note")
    rows = []
    for name, case in rtt:
        stat = Stat([v * 1e3 for v in case.values("p50_us")])
        floor = case.values("floor_p50_us")
        ratio = case.values("ratio_p50")
        row = [name.removeprefix("rtt/")] + stat_cells(stat, samples_label(case)) + [
            percentile_cell(case, 90), percentile_cell(case, 99),
            fmt_time(statistics.median(floor) * 1e3) if floor else "-",
            f"{statistics.median(ratio):.2f}x" if ratio else "-",
            fmt_bytes(statistics.median(case.values("request_bytes")))
            if case.values("request_bytes") else "-",
            fmt_bytes(statistics.median(case.values("response_bytes")))
            if case.values("response_bytes") else "-"]
        if linked:
            limit = case.values("wire_limit_ms")
            row.append(fmt_time(statistics.median(limit) * 1e6) if limit else "-")
        if instructions:
            row.append(instructions.cell(name))
        row.append(case.reason())
        rows.append(row)
    out.table("round trips (stack/codec/operation/payload/placement): p50 = each repetition's "
              "median call;\nfloor = raw TCP ping-pong of the same byte counts; p90/p99 'n<k': "
              "too few calls per repetition to report it", header, rows)

    # Seven columns, one per phase; a merged phase "a+b" (a point the stack
    # does not expose) sits in column a and marks b with "^".
    rows = []
    worst = []
    for name, case in rtt:
        if name.startswith("anchor/"):
            continue  # no probes: no phases (docs/anchors.md)
        cells = {}
        cvs = []
        for key in sorted({k for r in case.runs for k in r if k.startswith("phase:")}):
            parts = key[len("phase:"):-len("_us")].split("+")
            if parts[0] not in PHASES:
                continue
            stat = Stat([v * 1e3 for v in case.values(key)])
            cells[parts[0]] = fmt_time(stat.median) + ("!" if stat.noisy else "")
            if stat.cv is not None:
                cvs.append(stat.cv)
            for merged in parts[1:]:
                cells[merged] = "^"
        row = [name.removeprefix("rtt/")] + [cells.get(p, "") for p in PHASES]
        row += [gap_cell(case, "phase_gap"), gap_cell(case, "server_gap"), str(len(case.runs)),
                f"{100 * max(cvs):.1f}%" if cvs else "-", case.reason()]
        rows.append(row)
        worst.extend(cvs)
    out.table("phases: median over repetitions of the mean per call ('^': merged into the "
              "phase to its left,\nthe stack exposes no point between them; '!': that phase's "
              "CV above 5%); unexplained: the round trip timed\naround the call, and the "
              "server's served time per request, minus what their phases add up to, median "
              "call\n('*': some calls off by more than 1 us and 5%)",
              ["case"] + PHASES + ["unexplained", "server unexpl.", "n", "max CV", "note"], rows)


def gap_cell(case, key):
    """Median over repetitions of a check's median gap per call; '*' if
    any call of any repetition failed it."""
    values = case.values(key + "_p50_us")
    if not values:
        return "-"
    failed = any(v > 0 for v in case.values(key + "_failed"))
    return fmt_time(statistics.median(values) * 1e3) + ("*" if failed else "")


class Instructions:
    """scripts/count output: instructions per operation by case."""

    def __init__(self, path):
        with open(path) as f:
            data = json.load(f)
        self.by_case = {}
        for entry in data.get("results", []):
            self.by_case[case_name({"name": entry["case"]})] = entry
        self.used = set()

    def cell(self, name):
        entry = self.by_case.get(name)
        if entry is None:
            return "-"
        self.used.add(name)
        if "instructions_per_op" in entry:
            return fmt_count(entry["instructions_per_op"]) + (" ~1%" if "note" in entry else "")
        return "n/a" if "skipped" in entry else "error"

    def print_rest(self, out):
        """Counted cases that no table above holds, and every count that
        failed, with its reason."""
        rows = [[n, fmt_count(e.get("instructions_per_op")), e.get("error", "")]
                for n, e in self.by_case.items() if n not in self.used or "error" in e]
        if rows:
            out.table("instructions per operation (scripts/count): cases not in the tables "
                      "above, and failures", ["case", "instr/op", "note"], rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", help="Google Benchmark JSON output of bench")
    ap.add_argument("--instructions", metavar="FILE",
                    help="scripts/count output (results/count/<UTC time>/count.json) to add "
                         "instructions per op")
    args = ap.parse_args(argv)
    with open(args.json) as f:
        data = json.load(f)
    instructions = Instructions(args.instructions) if args.instructions else None

    ctx = data.get("context", {})
    out = Printer(print_header(ctx, args.json))
    # Rows in a reader's order, not the order the interleaved repetitions
    # finished in: codec rows by name, round trips by stack, codec,
    # operation and payload (headline.rtt_key).
    cases = dict(sorted(load_cases(data.get("benchmarks", [])).items(),
                        key=lambda item: (1, rtt_key(item[0]))
                        if item[0].startswith(("rtt/", "anchor/")) else (0, natural_key(item[0]))))

    payloads, codecs = [], []
    for name in cases:
        parts = name.split("/")
        if parts[0] == "memcpy":
            payload = "/".join(parts[1:])
        elif parts[0] in STEPS:
            payload = "/".join(parts[2:])
            if parts[1] not in codecs:
                codecs.append(parts[1])
        else:
            continue
        if payload not in payloads:
            payloads.append(payload)
    payloads.sort(key=natural_key)
    codecs.sort(key=natural_key)

    step_tables(out, cases, payloads, codecs, instructions)
    if codecs:
        wire_table(out, cases, payloads, codecs)
    content_length_table(out, cases, Stat, fmt_time, instructions)
    rtt = [(n, c) for n, c in cases.items() if n.startswith(("rtt/", "anchor/"))]
    if rtt:
        rtt_tables(out, rtt, instructions)
        anchor_table(out, cases, Stat, fmt_time, instructions)
    if instructions:
        instructions.print_rest(out)

    by_reason = {}
    for name, case in cases.items():
        if case.reason():
            by_reason.setdefault(case.reason(), []).append(name)
    if by_reason:
        print("\ncases without a figure in some or all repetitions (also in their tables):")
        for reason, names in by_reason.items():
            shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
            print(f"  {reason}: {shown}")
    print("\n".join(headline(cases, ctx, args.json, Stat, fmt_time)))


if __name__ == "__main__":
    main()
