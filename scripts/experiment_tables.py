"""The report's tables and plots per experiment: our figures beside the
papers' (docs/papers/figures.csv), each with its interval or the reason it
has none."""
import csv
import os
import statistics

import summarize  # noqa: E402  (the statistics rules of every table)
import claims  # noqa: E402  (intervals shared with the rules)
from claims import rtt  # noqa: E402  (case names, shared with the rules)

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
# E6 also splits the same encodings over the common Beast transport.
E6_FORMATS = dict(E4_FORMATS, **{"SOAP XML (Beast)": "beast/soap",
                                 "SOAP MTOM (Beast)": "beast/soap-mtom"})
MESSAGES = ["message-a/100", "message-b/128KiB"]
OPS = [("REG", "register", None), ("SEND", "send", True), ("RCV", "receive", True),
       ("UREG", "unregister", None)]
ALL_STACKS = ["gsoap/soap", "gsoap/soap-mtom", "xmlrpc-c/xmlrpc", "beast/json", "beast/xml",
              "beast/protobuf", "beast/text", "beast/soap", "beast/soap-mtom", "beast/xmlrpc"]


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
    # A case some of whose repetitions failed says so beside its figure.
    return [fmt_ms(s.median), ci, summarize.fmt_cv(s), results.reason(name)]


def cell(value):
    """A table cell: one line, its bars escaped."""
    return " ".join(str(value).split()).replace("|", "\\|")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
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

    def bars(self, name, title, ylabel, groups, series, logy=True):
        """groups: x labels; series: [(label, values)]; a linear y axis
        for ratios near 1 (logy=False)."""
        if self.plt is None:
            return f"_{self.why}_"
        fig, ax = self.plt.subplots(figsize=(6.4, 4.0))
        width = 0.8 / max(len(series), 1)
        for i, (label, values) in enumerate(series):
            xs = [g + i * width for g in range(len(groups))]
            ax.bar(xs, [v if v is not None else 0 for v in values], width, label=label)
        ax.set_xticks([g + width * (len(series) - 1) / 2 for g in range(len(groups))])
        # Long labels (stack/codec names) slanted, so they do not overlap.
        slant = any(len(str(g)) > 8 for g in groups)
        ax.set_xticklabels(groups, rotation=30 if slant else 0, ha="right" if slant else "center",
                           fontsize="small" if slant else None)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        if logy:
            ax.set_yscale("log")
        else:
            ax.axhline(1.0, color="grey", linewidth=0.8)
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
    for fmt, stack in E6_FORMATS.items():
        for op in ("send", "receive"):
            name = rtt(stack, op, MESSAGES[0])
            case = results.cases.get(name)
            cells = []
            for p in phases:
                values = case.values(f"phase:{p}_us") if case else []
                cells.append(f"{statistics.median(values):.4g}" if values else "-")
            gap = [gap_cell(case, f"{side}_gap") for side in ("phase", "server")]
            rows.append([fmt, f"{op} {MESSAGES[0]}"] + cells + gap
                        + [results.reason(name) if case else "not in the run"])
            if op == "send":
                sends.append([float(c) if c != "-" else None for c in cells])
    # The plot: where each format's send spends its time.
    series = [(p, [phase_times[i] for phase_times in sends]) for i, p in enumerate(phases)]
    return ["Phases: mean per call, median over repetitions (us). The gaps check the phases "
            "against clocks no phase shares: the round trip's outer timer (client) and a timer "
            "the server starts before reading the request's first byte; per call, sign kept "
            "(positive: time no phase covers; negative: time counted twice). Shown: median "
            "over repetitions of each repetition's 5th, 50th and 95th percentile gap, us, and "
            "the share of calls outside the tolerance.",
            table(["paper", "operation"] + [f"{p} us" for p in phases]
                  + ["client gap p5/p50/p95 us", "server gap p5/p50/p95 us", "note"], rows),
            plot.bars("e6.png", f"E6: phases of send {MESSAGES[0]}", "us", list(E6_FORMATS),
                      series)]


def gap_cell(case, prefix):
    """'p5 / p50 / p95 (k% outside)' of a row's per-call gaps, medians over
    repetitions; '-' where the row has none."""
    if case is None:
        return "-"
    parts = []
    for q in ("p05", "p50", "p95"):
        values = case.values(f"{prefix}_{q}_us")
        if not values:
            return "-"
        parts.append(f"{statistics.median(values):.3g}")
    failed = case.values(f"{prefix}_failed")
    outside = f" ({100 * statistics.median(failed):.2g}% outside)" if failed else ""
    return " / ".join(parts) + outside


E7_SHAPES = ["10x4", "40x1", "20x2"]
# The paper's columns: each protocol alone, then each during the
# simultaneous run; ours: SOAP gsoap/soap, REST beast/json.
# gRPC (grpc/protobuf) alone is ours, beyond the paper: no paper case.
# "on Beast": SOAP served by Beast's server beside REST, the concurrency
# model matched (beside the paper's figures for comparison, as the rest).
E7_COLUMNS = [("REST", "REST", "beast/json", "primes(100000) alone"),
              ("SOAP", "SOAP", "gsoap/soap", "primes(100000) alone"),
              ("REST w/ SOAP", "SOAP+REST", "beast/json", "primes(100000) simultaneous"),
              ("SOAP w/ REST", "SOAP+REST", "gsoap/soap", "primes(100000) simultaneous"),
              ("SOAP on Beast", "SOAP", "beast/soap", "primes(100000) alone"),
              ("REST w/ SOAP on Beast", "SOAP+REST on Beast", "beast/json",
               "primes(100000) simultaneous"),
              ("SOAP w/ REST on Beast", "SOAP+REST on Beast", "beast/soap",
               "primes(100000) simultaneous"),
              ("gRPC (ours)", "gRPC", "grpc/protobuf", None)]
MATCHED = "Beast I/O threads for every encoding"
OWN_SERVER = {"gsoap/soap": "gSOAP's own server, a thread per connection",
              "xmlrpc-c/xmlrpc": "Abyss's own server, a thread per connection",
              "grpc/protobuf": "gRPC's own server"}


def server_model(stack):
    """Whose concurrency model served a stack's load runs."""
    return OWN_SERVER.get(stack, MATCHED)


def fmt_num(x, digits=4):
    return "-" if x is None else f"{x:,.{digits}g}" if abs(x) < 10 ** digits else f"{x:,.0f}"


def over_repetitions(values):
    """'median [CI95]' of per-repetition values, or why there is no interval."""
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    st = summarize.Stat(values)
    if st.ci is None:
        return f"{fmt_num(st.median)} (n={st.n}, no CI95)"
    return f"{fmt_num(st.median)} [{fmt_num(st.ci[0])}-{fmt_num(st.ci[1])}]"


def failed_repetitions(runs):
    """'k of n repetitions had failed calls: kinds', or ''."""
    bad = [r for r in runs if sum(r["errors"].values())]
    if not bad:
        return ""
    kinds = sorted({k for r in bad for k, v in r["errors"].items() if v})
    return f"{len(bad)} of {len(runs)} repetitions had failed calls: {', '.join(kinds)}"


def render_e7(results, figures, plot):
    rows, groups, theirs, ours = [], [], [], []
    for shape in E7_SHAPES:
        for label, column, stack, case in E7_COLUMNS:
            protocol = label.split()[0]
            paper = {stat: None if case is None else
                     paper_value(figures, "E7", protocol=protocol, case=case, param=shape,
                                 statistic=stat)
                     for stat in ("mean", "min", "max", "stdev")}
            runs = results.e7(column, stack, shape)
            if not runs:
                # A run from before the matched rows: the library rows alone.
                if not label.endswith("on Beast"):
                    rows.append([shape, label, stack] + [fmt_num(paper[k]) for k in paper]
                                + ["-"] * 6 + ["not in the run", server_model(stack)])
                ours_mean = None
            else:
                stat = {k: [r["latency_ms"].get(k) for r in runs]
                        for k in ("mean", "min", "max", "stddev")}
                means = [m for m in stat["mean"] if m is not None]
                ours_mean = statistics.median(means) if means else None
                cpu = [r.get("server", {}).get("cpu_ms_per_request") for r in runs]
                note = f"{len(runs)} repetitions, {sum(r['n'] for r in runs)} calls"
                failed = failed_repetitions(runs)
                rows.append([shape, label, stack] + [fmt_num(paper[k]) for k in paper]
                            + [over_repetitions(stat[k]) for k in ("mean", "min", "max", "stddev")]
                            + [over_repetitions(cpu), ratio_text(paper["mean"], ours_mean),
                               note + (f"; {failed}" if failed else ""), server_model(stack)])
            groups.append(f"{shape}\n{label}")
            theirs.append(paper["mean"])
            ours.append(ours_mean)
    out = ["Ours: each statistic per repetition (a fresh server process), then its median over "
           "the repetitions [distribution-free CI95]. Server: SOAP runs twice, on each "
           "library's own server (gSOAP, a thread per connection) and on Beast's with the same "
           f"I/O thread as REST ('on Beast': {MATCHED}; both at once on one Beast server), so "
           "a gap between the two SOAP rows is the threading model's, not the encoding's.",
           table(["threads x calls", "column", "ours", "paper avg ms", "paper min", "paper max",
                  "paper sd", "ours avg ms", "ours min", "ours max", "ours sd",
                  "server CPU ms/call", "paper/ours", "note", "server"], rows)]
    ratio_rows = []
    for shape in E7_SHAPES:
        for first, second in (("REST", "SOAP"), ("REST w/ SOAP", "SOAP w/ REST"),
                              ("REST", "SOAP on Beast"),
                              ("REST w/ SOAP on Beast", "SOAP w/ REST on Beast"),
                              ("SOAP", "SOAP on Beast"), ("gRPC (ours)", "REST")):
            i = E7_SHAPES.index(shape) * len(E7_COLUMNS)
            labels = [c[0] for c in E7_COLUMNS]
            if first not in labels or second not in labels:
                continue
            r, so = i + labels.index(first), i + labels.index(second)
            if "on Beast" in first + second and None in (ours[r], ours[so]):
                continue  # a run from before the matched rows
            ratio_rows.append([shape, f"{first} / {second}", ratio_text(theirs[r], theirs[so]),
                               ratio_text(ours[r], ours[so])])
    out.append("Between protocols (ratio of mean latencies; below 1: the first faster):\n\n"
               + table(["threads x calls", "ratio", "paper", "ours"], ratio_rows))
    out.append(plot.bars("e7.png", "E7: mean latency of primes(100000)", "ms", groups,
                         [("paper (Java, WildFly, JMeter)", theirs),
                          ("wsbench (native, loopback)", ours)]))
    return out


# gRPC is ours, beyond the paper: figures.csv has no E8 row for it.
# SOAP and XML-RPC run twice: on their libraries' servers and on Beast's
# (server_model says which); the paper's figures stand beside both.
E8_STACKS = [("SOAP", "gsoap/soap"), ("XML-RPC", "xmlrpc-c/xmlrpc"), ("REST", "beast/json"),
             ("REST", "beast/xml"), ("SOAP", "beast/soap"), ("XML-RPC", "beast/xmlrpc"),
             ("gRPC", "grpc/protobuf")]
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


def step_median(runs, users, key):
    """A user step's figure, median over the repetitions that reached it."""
    values = [s[key] for r in runs for s in r["steps"]
              if s["users"] == users and s.get(key) is not None]
    return statistics.median(values) if values else None


def mean_t95(values):
    """E8's figure with the interval its claims use (claims.e8_interval),
    which stays in the quantity's range."""
    values = [v for v in values if v is not None]
    interval = claims.e8_interval(values)
    if interval is None:
        return fmt_num(values[0], 3) + " (n=1, no interval)" if values else "-"
    return f"{fmt_num(interval[0], 3)} [{fmt_num(interval[1], 3)}-{fmt_num(interval[2], 3)}]"


def render_e8(results, figures, plot):
    ctx = next(iter(results.contexts.values()), {})
    out = [f"Ramp: {ctx.get('e8_ramp', '?')}; search: {ctx.get('e8_search', '?')}; "
           f"{ctx.get('e8_define_percent', '?')}% define, the rest put. CPU %: the server "
           "process's user+system CPU over each step's wall time (100 = one vCPU; the paper's "
           "is the share of the whole phone); RSS: the largest sample in the step. The paper "
           "gives ranges over all its tests (section 5.3) and the most users per protocol "
           "(5.4), not per size. Each user calls again as soon as a reply arrives, so a "
           "server that answers faster gets more calls: CPU per call tells the protocols' costs "
           "apart, CPU % what the load cost. Server: SOAP and XML-RPC run on their libraries' "
           "own servers (gSOAP and Abyss, a thread per connection: memory and threads grow per "
           f"user) and again on Beast's ({MATCHED}), so memory and users served compare "
           "encodings on the matched rows. After the ramp the users grow until a call fails or "
           "the load side's limit; 'search ended' says which."]
    rows = []
    for size in results.e8_sizes():
        for protocol, stack in E8_STACKS:
            runs = results.e8(stack, size)
            if not runs:
                continue
            cpu = [step_median(runs, u, "cpu_percent") for u in E8_USERS]
            rss = [step_median(runs, u, "rss_mb") for u in E8_USERS]
            cpu_paper, rss_paper = paper_range(figures, protocol, "cpu_percent"), \
                paper_range(figures, protocol, "memory_mb")
            try:
                users_paper = fmt_num(paper_value(figures, "E8", protocol=protocol,
                                                  statistic="max_users"))
            except KeyError:
                users_paper = "-"
            users = ", ".join((">=" if r["max_users_at_bound"] else "") + str(r["max_users"])
                              + (" (overran)" if r.get("overran") else "") for r in runs)
            failed = failed_repetitions(runs)
            ended = "; ".join(dict.fromkeys(r.get("search_end") or "not recorded" for r in runs))
            rows.append([stack, size, len(runs), server_model(stack)]
                        + [fmt_num(c, 3) for c in cpu]
                        + ["-" if cpu_paper is None else f"{cpu_paper[0]:g}-{cpu_paper[1]:g}"]
                        + [fmt_num(r, 3) for r in rss]
                        + ["-" if rss_paper is None else f"{rss_paper[0]:g}-{rss_paper[1]:g}",
                           users, ended, users_paper, mean_t95([cpu_us_per_call(r) for r in runs]),
                           f"{sum(r['n'] for r in runs):,} ok" + (f"; {failed}" if failed else "")])
    out.append("CPU % and RSS per user step: median over the repetitions (each a fresh server "
               "process with its own ramp and search); most users served: each repetition's; "
               "server CPU per call: geometric mean over repetitions [Student-t 95% on the log "
               "scale, as its claims].")
    out.append(table(["ours", "size", "reps", "server"] + [f"CPU % @{u}" for u in E8_USERS]
                     + ["paper CPU %"] + [f"RSS MB @{u}" for u in E8_USERS]
                     + ["paper MB", "max users per repetition", "search ended", "paper max users",
                        "server CPU us/call", "calls"],
                     rows))
    size = (results.e8_sizes() or ["x1"])[0]
    for key, unit, name, what in (("cpu_percent", "CPU % of one vCPU", "e8-cpu.png",
                                   "cpu_percent"),
                                  ("rss_mb", "RSS MB", "e8-rss.png", "memory_mb")):
        series = []
        for protocol, stack in E8_STACKS:
            runs = results.e8(stack, size)
            if runs:
                users = sorted({s["users"] for r in runs for s in r["steps"]})
                series.append((f"{stack} (ours, median of {len(runs)})", users,
                               [step_median(runs, u, key) for u in users], "-"))
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
    # The paper's direction first: the client uploads, the server answers
    # with a receipt the client checks; the claims decide on these rows.
    up_rows, series = [], {v: ([], []) for v in E9_VARIANTS}
    for payload in E9_PAYLOADS:
        ups = {v: results.stat(rtt("gsoap/" + v, "upload", payload)) for v in E9_VARIANTS}
        if not any(ups.values()):
            continue
        for v, up in ups.items():
            if up and payload.startswith("binary"):
                series[v][0].append(float(payload.split("/")[1][:-3]))
                series[v][1].append(up.median / 1e6)
        medians = {v: up.median if up else None for v, up in ups.items()}
        cells = ["-" if up is None else fmt_ms(up.median) + (
            f" [{up.ci[0] / 1e6:.4g}-{up.ci[1] / 1e6:.4g}]" if up.ci else f" (n={up.n})")
            for up in ups.values()]
        up_rows.append([payload] + cells + [ratio_text(medians["soap"], medians[o])
                                            for o in ("soap-swa", "soap-mtom")])
    out.append("Uploads, the paper's direction (the client sends the payload; the server answers "
               "with a receipt of what it decoded, checked by the client): round trip, median "
               "[CI95] ms.\n\n" + table(["payload"] + [f"{v} upload ms" for v in E9_VARIANTS]
                                          + ["up soap/swa", "up soap/mtom"], up_rows))
    rows = []
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
        if not present:
            continue
        rows.append([payload] + cells + [ratio_text(rtts["soap"], rtts["soap-swa"]),
                                         ratio_text(rtts["soap"], rtts["soap-mtom"])])
    header = ["payload"]
    for v in E9_VARIANTS:
        header += [f"{v} bytes", f"{v} get ms", f"{v} ser / deser ms"]
    out.append("Gets: reverse direction (the server sends; the paper timed uploads): message "
               "size, round trip (median ms), serialisation / deserialisation.\n\n"
               + table(header + ["get soap/swa", "get soap/mtom"], rows))
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
    out.append(plot.lines("e9.png", "E9: upload round trip of a binary", "MiB", "ms", plot_series,
                          logx=True))
    return out
