"""What a run found, in one screen, for scripts/summarize.py: the order of
the round-trip rows, the warning that opens a summary of an unoptimised
binary, and the headline block that ends every summary (each protocol's
ping against the floor, each stack against its anchor, the slowest and
noisiest rows with the command that repeats them, where the files are).
"""
import os
import re
import shlex
import statistics

from anchor_pairs import pairs, paired_ratios

CV_LIMIT = 0.05
SHOWN = 3  # slowest and noisiest rows in the headline
# The operations in the order docs/reference/operations.md lists them;
# others follow alphabetically.
OPERATIONS = ["ping", "get", "echo", "primes", "define", "put"]
# A stack's own codec, whose ping stands for its protocol in the headline.
OWN_CODECS = ["json", "soap", "xmlrpc", "protobuf"]
OPTIMISED_TYPES = ("Release", "RelWithDebInfo")
# Repeating noisy rows together: an alternation of at most this many names,
# else the whole run again.
MAX_NAMES_IN_FILTER = 8


def natural_key(text):
    """'ints/800' before 'ints/3200': digit runs compare as numbers."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text) if t]


def rtt_key(name):
    """Round trips by stack, codec, operation, payload, then connection and
    placement; the anchor rows after the stacks, by library. Names are
    rtt/<stack>/<codec>/<operation>[/<payload>][/new-connection]/<placement>
    and anchor/<library>/<operation>[/<payload>]/<placement>."""
    parts = name.split("/")
    anchor = parts[0] == "anchor"
    stack, codec = (parts[1], "") if anchor else (parts[1], parts[2] if len(parts) > 2 else "")
    rest = parts[2:] if anchor else parts[3:]
    op = rest[0] if rest else ""
    tail = rest[1:]
    placement = tail[-1] if tail else ""
    middle = tail[:-1]
    new_connection = "new-connection" in middle
    payload = "/".join(p for p in middle if p != "new-connection")
    op_rank = OPERATIONS.index(op) if op in OPERATIONS else len(OPERATIONS)
    return (anchor, natural_key(stack), codec, op_rank, op, natural_key(payload), new_connection,
            placement)


def unoptimised(ctx):
    """Why the binary that wrote `ctx` is not an optimised build, or None:
    a build type other than Release or RelWithDebInfo, or compile flags
    without -O2 or -O3. A context that records neither says nothing."""
    reasons = []
    if "wsbench_build_type" in ctx:
        build_type = str(ctx["wsbench_build_type"])
        if build_type not in OPTIMISED_TYPES:
            reasons.append(f"build type '{build_type}'")
    if "wsbench_cxx_flags" in ctx:
        flags = str(ctx["wsbench_cxx_flags"]).split()
        if not any(f in ("-O2", "-O3") for f in flags):
            reasons.append(f"compile flags '{' '.join(flags)}' without -O2 or -O3")
    if not reasons:
        return None
    return ("WARNING: NOT AN OPTIMISED BUILD (" + ", ".join(reasons) + "): these times do not "
            "describe the libraries as anyone runs them. Build with scripts/bench (the release "
            "preset) or configure with -DCMAKE_BUILD_TYPE=RelWithDebInfo.")


def filter_regex(names):
    """A --benchmark_filter that selects exactly these cases (Google
    Benchmark adds /manual_time and /iterations:N to a case's name)."""
    escaped = [re.sub(r"([.\[\](){}*+?|^$\\])", r"\\\1", n) for n in names]
    body = escaped[0] if len(escaped) == 1 else "(" + "|".join(escaped) + ")"
    return f"^{body}(/|$)"


def repeat_command(ctx, repetitions, names=None):
    """scripts/bench with the run's own options (its filter too, unless
    names are given: then a filter for just those cases) and `repetitions`."""
    words = shlex.split(str(ctx.get("command_line", "")))[1:]
    dropped = ("--benchmark_out", "--benchmark_out_format", "--benchmark_repetitions") + \
        (("--benchmark_filter",) if names else ())
    kept = [w for w in words if w.split("=")[0] not in dropped]
    if ctx.get("layout_runs"):
        kept.insert(0, "--randomize-layout")
    if names:
        kept.append("--benchmark_filter=" + filter_regex(names))
    kept.append(f"--benchmark_repetitions={repetitions}")
    return "scripts/bench " + " ".join(shlex.quote(w) for w in kept)


def more_repetitions(n):
    """Twice the repetitions, at least 12: the CI95 of a median narrows with
    the square root of n (the CV itself is the machine's)."""
    return max(2 * n, 12)


class Row:
    """One case as the headline sees it: its median and CV over repetitions."""

    def __init__(self, name, case, stat):
        self.name, self.case = name, case
        if name.startswith(("rtt/", "anchor/")):
            self.stat = stat([v * 1e3 for v in case.values("p50_us")])
        else:
            self.stat = stat(case.times_ns())


def ping_lines(rows, fmt_time):
    """One ping per stack: its own codec's (json, soap, xmlrpc, protobuf),
    on a kept connection, first placement; p50 against the floor's."""
    chosen = {}
    for row in rows:
        parts = row.name.split("/")
        if parts[0] != "rtt" or len(parts) < 5 or parts[3] != "ping" or "new-connection" in parts:
            continue
        stack, codec = parts[1], parts[2]
        rank = OWN_CODECS.index(codec) if codec in OWN_CODECS else len(OWN_CODECS)
        if row.stat.n and (stack not in chosen or rank < chosen[stack][0]):
            chosen[stack] = (rank, row)
    lines = []
    for stack in sorted(chosen, key=natural_key):
        row = chosen[stack][1]
        floor = row.case.values("floor_p50_us")
        ratio = row.case.values("ratio_p50")
        lines.append([row.name.removeprefix("rtt/"), fmt_time(row.stat.median),
                      fmt_time(statistics.median(floor) * 1e3) if floor else "-",
                      f"{statistics.median(ratio):.2f}x" if ratio else "-", cv_text(row)])
    return lines


def anchor_lines(cases, stat):
    """Each stack's ping against its anchor's ping (the first pair of a
    library when it has no ping): the median of the paired ratios."""
    by_library = {}
    for stack, anchor in sorted(pairs(list(cases)), key=lambda p: rtt_key(p[1])):
        current = by_library.get(anchor.split("/")[1])
        if current is None or ("/ping/" in anchor and "/ping/" not in current[1]):
            by_library[anchor.split("/")[1]] = (stack, anchor)
    lines = []
    for library in sorted(by_library, key=natural_key):
        stack, anchor = by_library[library]
        r = stat(paired_ratios(cases[stack].runs, cases[anchor].runs))
        if not r.n:
            continue
        ci = f"CI95 {r.ci[0]:.2f}-{r.ci[1]:.2f}" if r.ci else f"no CI95 (n={r.n})"
        lines.append([stack.removeprefix("rtt/"), anchor, f"{r.median:.2f}x", ci])
    return lines


def cv_text(row):
    cv = row.stat.cv
    return "CV -" if cv is None else f"CV {100 * cv:.1f}%" + ("!" if cv > CV_LIMIT else "")


def aligned(lines, indent="    "):
    """Columns padded to their widest cell, the first left, the rest right."""
    if not lines:
        return []
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    return [indent + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(line, widths))).rstrip()
            for line in lines]


def headline(cases, ctx, json_path, stat, fmt_time):
    """The closing block's lines."""
    rows = [Row(name, case, stat) for name, case in cases.items()]
    measured = [r for r in rows if r.stat.n]
    out = ["", "=" * 78, "HEADLINE" + ("  [DIRTY TREE]" if _dirty(ctx) else "")]
    warning = unoptimised(ctx)
    if warning:
        out.append("  " + warning)
    reps = max((r.stat.n for r in measured), default=0)
    out.append(f"  {plural(len(cases), 'case')}, {len(measured)} with figures, up to "
               f"{plural(reps, 'repetition')} each; times are medians over repetitions")
    pings = ping_lines(measured, fmt_time)
    if pings:
        out.append("  ping per stack (its own codec) against the floor, raw TCP ping-pong of the "
                   "same bytes:")
        out += aligned([["case", "p50", "floor", "p50/floor", "CV"]] + pings)
    anchors = anchor_lines(cases, stat)
    if anchors:
        out.append("  each stack against its anchor, the library's own minimal client and "
                   "server (stack/anchor, paired by repetition):")
        out += aligned([["stack", "anchor", "stack/anchor", "CI95"]] + anchors)
    if measured:
        out.append(f"  slowest {plural(min(SHOWN, len(measured)), 'row')}:")
        slowest = sorted(measured, key=lambda r: -r.stat.median)[:SHOWN]
        out += aligned([[r.name, fmt_time(r.stat.median), cv_text(r)] for r in slowest])
    noisy = sorted((r for r in measured if r.stat.cv is not None and r.stat.cv > CV_LIMIT),
                   key=lambda r: -r.stat.cv)
    if noisy:
        out.append(f"  noisiest rows: {len(noisy)} of {len(measured)} with a CV over "
                   f"{100 * CV_LIMIT:.0f}% ('!' in the tables); each again with more "
                   "repetitions:")
        for r in noisy[:SHOWN]:
            out += aligned([[r.name, fmt_time(r.stat.median), cv_text(r)]])
            out.append("      " + repeat_command(ctx, more_repetitions(r.stat.n), [r.name]))
        n = more_repetitions(max(r.stat.n for r in noisy))
        if len(noisy) == 1:
            pass  # its own command above is the one
        elif len(noisy) <= MAX_NAMES_IN_FILTER:
            out.append(f"    all {len(noisy)} together:")
            out.append("      " + repeat_command(ctx, n, [r.name for r in noisy]))
        else:
            out.append("    the whole run again with more repetitions:")
            out.append("      " + repeat_command(ctx, n))
        out.append("    (more repetitions narrow the CI95 of each median; the CV is the "
                   "machine's and stays)")
    elif measured:
        out.append(f"  no row has a CV over {100 * CV_LIMIT:.0f}%")
    out.append(f"  full JSON: {json_path}")
    console = os.path.join(os.path.dirname(json_path), "console.txt")
    if os.path.exists(console):
        out.append(f"  Google Benchmark's console output: {console}")
    return out


def plural(n, noun):
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _dirty(ctx):
    return str(ctx.get("source_git_dirty", "")).strip().lower() in ("true", "1", "yes", "dirty")
