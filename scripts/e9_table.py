#!/usr/bin/env python3
"""E9's table from a wsbench result file (scripts/e9 writes one).

Usage: scripts/e9_table.py results/e9/latest/e9.json

Two tables, a row per payload (binary 1-64 MiB, gml 1-10,000 buildings) and
columns per SOAP variant (soap: base64 inline; soap-swa: SOAP with
Attachments; soap-mtom: MTOM/XOP), all on the gsoap stack:

- uploads, the paper's direction (the client sends the payload, the server
  answers with a receipt of what it decoded, checked by the client): the
  round trip (median of the repetitions' median calls, and their range), and
  standard SOAP's round trip over SwA's and MTOM's (the median of the
  repetitions' ratios, each repetition's variants timed in one pass, and
  their range). cha-et-al report MTOM about 3x faster than standard SOAP
  for 10,000 buildings;
- the reverse direction (a `get`: the server sends): the message size
  (encoded body, wire_bytes), the get's round trip, serialisation (encode)
  and deserialisation (decode), each the median over repetitions, and the
  get's soap/swa and soap/mtom ratios.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import Printer, Stat, fmt_bytes, fmt_range, fmt_time, load_cases  # noqa: E402

VARIANTS = ["soap", "soap-swa", "soap-mtom"]
PAYLOADS = [f"binary/{n}MiB" for n in (1, 4, 16, 32, 64)] + \
           [f"gml/{n}" for n in (1, 10, 100, 1000, 5000, 10000)]


def median_time(cases, name):
    case = cases.get(name)
    if case is None or not case.runs:
        return None
    return Stat(case.times_ns()).median


def medians(cases, variant, op, payload):
    """Each repetition's median call of the op's round trip, in ns, in
    repetition order (the first placement run); [] if it did not run."""
    matches = [c for n, c in cases.items()
               if n.startswith(f"rtt/gsoap/{variant}/{op}/{payload}/") and c.runs]
    return [v * 1e3 for v in matches[0].values("p50_us")] if matches else []


def round_trip(cases, variant, payload, op="get"):
    """Median over repetitions of p50_us, in ns."""
    values = medians(cases, variant, op, payload)
    return statistics.median(values) if values else None


def ratio_cell(num, den):
    """num/den repetition by repetition (a pass holds one repetition of
    every case, so its ratio is a same-run one): "median (min-max)"."""
    if not num or len(num) != len(den):
        return "-"
    ratios = sorted(a / b for a, b in zip(num, den))
    return f"{statistics.median(ratios):.2f}x ({ratios[0]:.2f}-{ratios[-1]:.2f})"


def upload_table(out, cases):
    header = ["payload"]
    for v in VARIANTS:
        header += [f"{v} up", "range"]
    header += ["up soap/swa", "up soap/mtom"]
    rows = []
    for payload in PAYLOADS:
        row = [payload]
        times = {v: medians(cases, v, "upload", payload) for v in VARIANTS}
        for v in VARIANTS:
            t = times[v]
            row += [fmt_time(statistics.median(t)), fmt_range(min(t), max(t))] if t else ["-", "-"]
        row += [ratio_cell(times["soap"], times[v]) for v in ("soap-swa", "soap-mtom")]
        rows.append(row)
    out.table("E9 uploads, the paper's direction (gsoap stack; the client sends the payload, the\n"
              "server answers with a receipt of what it decoded; up = round trip, median of the\n"
              "repetitions' median calls; range = theirs; ratios: median (range) of the\n"
              "repetitions' ratios)", header, rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="Takes under a second; prints the table, writes nothing.")
    ap.add_argument("json", help="Google Benchmark JSON output of bench (scripts/e9)")
    args = ap.parse_args(argv)
    with open(args.json) as f:
        data = json.load(f)
    cases = load_cases(data.get("benchmarks", []))
    out = Printer(str(data.get("context", {}).get("source_git_dirty", "")).lower()
                  in ("true", "1", "dirty"))

    upload_table(out, cases)
    header = ["payload"]
    for v in VARIANTS:
        header += [f"{v} size", f"{v} get", f"{v} ser", f"{v} deser"]
    header += ["get soap/swa", "get soap/mtom"]
    rows = []
    for payload in PAYLOADS:
        row = [payload]
        rtts = {}
        for v in VARIANTS:
            wire = cases.get(f"encode/{v}/{payload}")
            size = statistics.median(wire.values("wire_bytes")) if wire and wire.runs else None
            rtt = round_trip(cases, v, payload)
            rtts[v] = rtt
            row += [fmt_bytes(size) if size is not None else "-",
                    fmt_time(rtt) if rtt is not None else "-",
                    *(fmt_time(t) if t is not None else "-"
                      for t in (median_time(cases, f"{s}/{v}/{payload}")
                                for s in ("encode", "decode")))]
        for v in ("soap-swa", "soap-mtom"):
            row.append(f"{rtts['soap'] / rtts[v]:.2f}x" if rtts["soap"] and rtts[v] else "-")
        rows.append(row)
    out.table("E9 gets: reverse direction (the server sends; the paper timed uploads)\n"
              "(gsoap stack; size = encoded body; get = round trip, median of the repetitions'\n"
              "median calls; ser/deser = encode/decode medians)", header, rows)


if __name__ == "__main__":
    main()
