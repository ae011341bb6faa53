#!/usr/bin/env python3
"""The "Results at a glance" block of a published run, from its files.

  scripts/glance.py FOLDER [--link PATH] [--readme README.md]

FOLDER holds an experiments run (ping.json, the other runs' JSON, PNGs).
The block has one row per stack and encoding of E1's ping round trip
(rtt/<stack>/<codec>/ping/same in ping.json), the papers' claims counted
by verdict (decided the way scripts/experiments.py decides them, from the
same JSON, not read back from report.md), where FOLDER has count.json
(scripts/count --default-sweep) the instructions per ping of the same
case, a line naming the machine,
commit and date, and the E1 plot. scripts/publish writes it between
README.md's `<!-- glance:begin -->` and `<!-- glance:end -->` markers;
without --readme this prints it.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summarize  # noqa: E402  (the statistics rules of every table)
import claims as claims_mod  # noqa: E402  (the verdicts)
import experiments  # noqa: E402  (the experiments, their runs and result loaders)
from experiment_tables import cell  # noqa: E402  (a table cell: one line, bars escaped)

BEGIN, END = "<!-- glance:begin -->", "<!-- glance:end -->"
PING = "ping.json"
COUNT = "count.json"
# The plot the block shows: E1 is the ping round trip the table is about.
PLOT = "e1.png"

# What each encoding is, in the words a reader choosing a protocol uses.
PROTOCOLS = {"soap": "SOAP", "soap-mtom": "SOAP + MTOM", "soap-swa": "SOAP with Attachments",
             "xmlrpc": "XML-RPC", "json": "REST, JSON", "xml": "REST, XML",
             "protobuf": "REST, Protocol Buffers", "text": "REST, text/plain"}


# ---- the ping table ----

def protocol_of(stack):
    """The protocol a reader names: the codec's over HTTP, gRPC for the grpc
    stacks (HTTP/2, Protocol Buffers), "over TLS" for a -tls stack."""
    library, codec = stack.split("/")[:2]
    name = "gRPC" if library.removesuffix("-tls") == "grpc" else PROTOCOLS.get(codec, codec)
    return name + (" over TLS" if library.endswith("-tls") else "")


class PingRow:
    """One stack's ping: figures over repetitions, None where the run has none."""

    def __init__(self, name, case):
        self.name = name
        self.stack = name[len("rtt/"):-len("/ping/same")]
        self.protocol = protocol_of(self.stack)
        # Each repetition's median call (us -> ns, as summarize's tables).
        self.stat = summarize.Stat([v * 1e3 for v in case.values("p50_us")])
        self.n = summarize.samples_label(case)
        floor = case.values("floor_p50_us")
        self.floor_us = statistics.median(floor) if floor else None
        # ratio_p50: the repetition's median call over the raw TCP ping-pong
        # of the same byte counts timed in that same repetition, so machine
        # drift between rows does not enter the ratio.
        ratio = case.values("ratio_p50")
        self.ratio = statistics.median(ratio) if ratio else None
        req, resp = case.values("request_bytes"), case.values("response_bytes")
        self.request = statistics.median(req) if req else None
        self.response = statistics.median(resp) if resp else None
        self.reason = case.reason()


def ping_rows(folder):
    """The ping rows of FOLDER/ping.json, fastest first (rows without a
    figure last, with their reason)."""
    with open(os.path.join(folder, PING)) as f:
        data = json.load(f)
    cases = summarize.load_cases(data.get("benchmarks", []))
    rows = [PingRow(n, c) for n, c in cases.items()
            if n.startswith("rtt/") and n.endswith("/ping/same")]
    return sorted(rows, key=lambda r: (r.stat.median is None, r.stat.median or 0, r.stack)), \
        data.get("context", {})


def instructions_per_ping(folder):
    """{rtt/<stack>/<codec>/ping/same: entry} of FOLDER/count.json, or None."""
    path = os.path.join(folder, COUNT)
    return summarize.Instructions(path).by_case if os.path.exists(path) else None


def us(ns):
    return "-" if ns is None else f"{ns / 1e3:.4g}"


def ping_table(rows, counts=None):
    header = ["protocol", "stack/encoding", "median us", "CI95 us", "CV", "n",
              "TCP floor us", "x floor", "request + response bytes"]
    if counts is not None:
        header.append("instructions")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        s = r.stat
        ci = f"{s.ci[0] / 1e3:.4g}-{s.ci[1] / 1e3:.4g}" if s.ci else "none"
        wire = "-" if r.request is None or r.response is None else \
            f"{r.request:,.0f} + {r.response:,.0f}"
        cells = [r.protocol, f"`{r.stack}`", us(s.median), ci if s.n else "-",
                 summarize.fmt_cv(s), r.n,
                 "-" if r.floor_us is None else f"{r.floor_us:.4g}",
                 "-" if r.ratio is None else f"{r.ratio:.2f}",
                 wire]
        if counts is not None:
            entry = counts.get(r.name, {})
            cells.append(f"{entry['instructions_per_op']:,}" if "instructions_per_op" in entry
                         else entry.get("error") or entry.get("skipped") or "not counted")
        if r.reason:
            cells[1] += f" ({r.reason})"
        lines.append("| " + " | ".join(cell(c) for c in cells)
                     + " |")
    return "\n".join(lines)


# ---- the claims ----

VERDICTS = ["holds", "does not hold", "inconclusive", "not measurable here"]


def verdict_kind(text):
    """The verdict's kind: one of VERDICTS, 'error', or None (not applicable)."""
    for kind in VERDICTS:
        if text.startswith(kind):
            return kind
    if text.startswith("error"):
        return "error"
    return None


def claim_decisions(folder):
    """(claim row, decision) per claim in docs/papers/claims.csv, decided on
    FOLDER's runs exactly as scripts/experiments.py's report decides them."""
    rows = experiments.read_csv(experiments.CLAIMS)
    experiments.check_claims(rows)
    for exp in experiments.EXPERIMENTS:
        mine = [c for c in rows if c["experiment"] == exp.key]
        if not mine:
            continue
        loader = experiments.LoadResults if exp.key in ("E7", "E8") else experiments.Results
        results = loader(folder, exp.runs) if exp.runs else None
        reason = exp.needs or (("; ".join(results.missing)) if results and results.missing
                               and not results.cases else None)
        for c in mine:
            if reason:
                yield c, {"lib": f"not measurable here: {reason}", "common": "-", "who": "-"}
            else:
                yield c, claims_mod.decide(c, results)


def claim_counts(folder):
    """{'lib': {kind: n}, 'common': {kind: n}, 'protocol': n, 'flipped':
    {factor: n}}: verdicts by the library stacks (every claim), by the common
    Beast transport (the claims that compare stacks), how many every factor
    leaves the same, and how many each factor flips."""
    counts = {"lib": dict.fromkeys(VERDICTS + ["error"], 0),
              "common": dict.fromkeys(VERDICTS + ["error"], 0), "protocol": 0,
              "flipped": dict.fromkeys((f.name for f in claims_mod.FACTORS), 0), "claims": 0}
    for _, d in claim_decisions(folder):
        counts["claims"] += 1
        counts["lib"][verdict_kind(d["lib"]) or "error"] += 1
        kind = verdict_kind(d["common"])
        if kind:  # "not needed (one stack)" and "not run" are not verdicts
            counts["common"][kind] += 1
        if d["who"].startswith("protocol: both"):
            counts["protocol"] += 1
        else:
            # "stack, json: the HTTP stack's and ...": the factors that flip it.
            names = d["who"].split(":")[0].split(", ")
            for name in names:
                if name in counts["flipped"]:
                    counts["flipped"][name] += 1
    return counts


def claims_table(counts):
    kinds = VERDICTS + (["error"] if counts["lib"]["error"] or counts["common"]["error"] else [])
    header = ["decided by", *kinds, "claims"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for key, label in (("lib", "each library's own stack"),
                       ("common", "the same encodings over the common Beast transport "
                                  "(the claims that compare stacks)")):
        row = [counts[key][k] for k in kinds]
        lines.append("| " + " | ".join([label] + [str(v) for v in row] + [str(sum(row))]) + " |")
    return "\n".join(lines)


# ---- the block ----

def machine_line(ctx, link, date=None):
    commit = (ctx.get("source_git_commit") or "unknown")[:7]
    dirty = summarize.truthy(ctx.get("source_git_dirty"))
    kernel = " ".join(str(ctx.get("kernel", "")).split()[:2])
    date = date or str(ctx.get("date", ""))[:10]
    return (f"Measured on {ctx.get('cpu_model', 'an unknown CPU')}, {ctx.get('num_cpus', '?')} "
            f"vCPUs, {kernel or 'unknown kernel'}; link {ctx.get('link', 'loopback')}, client and "
            f"server placement `{ctx.get('wsbench_placement', '?')}`; commit `{commit}`"
            + (" (**built from a modified tree**)" if dirty else "")
            + f", {date}."
            # The folder's own index needs no link to itself.
            + ("" if link == "." else f" Everything, with the machine and the method: "
               f"[{link}]({link}/) (report.md, report.html, machine.md, bench-summary.md)."))


def glance(folder, link, date=None):
    """The block's markdown (without the markers)."""
    rows, ctx = ping_rows(folder)
    instructions = instructions_per_ping(folder)
    counts = claim_counts(folder)
    source = "this folder" if link == "." else link
    parts = [f"<!-- generated by scripts/publish from {source}; edit that run, not this "
             "table -->",
             machine_line(ctx, link, date),
             "**Ping round trip** (E1: a call returning a fixed string, client and server on "
             "this machine; median over repetitions of each repetition's median call, its "
             "distribution-free CI95 and CV ('!' above 5%), n = repetitions x calls; TCP "
             "floor: a raw TCP ping-pong of the same byte counts in the same repetition, "
             "x floor the ratio; bytes on the socket, HTTP headers included"
             + ("; instructions per call, client and in-process server, by callgrind "
                "(scripts/count, count.json): they repeat to about 0.3% where times move "
                "20-50%" if instructions is not None else "") + "):",
             ping_table(rows, instructions),
             f"**The papers' claims** ({counts['claims']} claims, docs/papers/claims.csv; "
             "a verdict holds only when the whole 95% interval is on one side):",
             claims_table(counts),
             f"Of the claims decided again with another factor, {counts['protocol']} are the "
             "protocol's (every factor agrees); a factor's substitution flips "
             + ", ".join(f"{counts['flipped'][f.name]} ({f.label('')[4:]})"
                         for f in claims_mod.FACTORS) + "."]
    if os.path.exists(os.path.join(folder, PLOT)):
        parts.append(f"![E1: ping round trip, wsbench beside the paper]({link}/{PLOT})")
    return "\n\n".join(parts)


def replace_block(text, block):
    """text with the markers' content replaced; None if the markers are absent."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        return None
    return text[:start + len(BEGIN)] + "\n" + block + "\n" + text[end:]


def update_readme(path, block):
    """Rewrites the block in README; returns a note if it could not."""
    with open(path) as f:
        text = f.read()
    new = replace_block(text, block)
    if new is None:
        return f"{path}: no {BEGIN} ... {END} markers; the glance was not written there"
    if new != text:
        with open(path, "w") as f:
            f.write(new)
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder", help="a published run's folder (or an experiments run's)")
    ap.add_argument("--link", help="the folder's path as the block links it (default: FOLDER)")
    ap.add_argument("--readme", help="write the block between this file's glance markers")
    args = ap.parse_args(argv)
    block = glance(args.folder, args.link or args.folder.rstrip("/"))
    if not args.readme:
        print(block)
        return 0
    note = update_readme(args.readme, block)
    if note:
        print(f"glance: {note}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
