#!/usr/bin/env python3
"""E9's table from a wsbench result file (scripts/e9 writes one).

Usage: scripts/e9_table.py results/e9/latest/e9.json

One row per payload (binary 1-64 MiB, gml 1-10,000 buildings), and for each
SOAP variant (soap: base64 inline; soap-swa: SOAP with Attachments; soap-mtom:
MTOM/XOP) the message size (encoded response body, wire_bytes), the round
trip of a `get` on the gsoap stack (median of the repetitions' median calls),
serialisation (encode) and deserialisation (decode), each the median over
repetitions. The last two columns divide standard SOAP's round trip by SwA's
and MTOM's: cha-et-al report MTOM about 3x faster than standard SOAP for
32 MiB and for 10,000 buildings.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import Printer, Stat, fmt_bytes, fmt_time, load_cases  # noqa: E402

VARIANTS = ["soap", "soap-swa", "soap-mtom"]
PAYLOADS = [f"binary/{n}MiB" for n in (1, 4, 16, 32, 64)] + \
           [f"gml/{n}" for n in (1, 10, 100, 1000, 5000, 10000)]


def median_time(cases, name):
    case = cases.get(name)
    if case is None or not case.runs:
        return None
    return Stat(case.times_ns()).median


def round_trip(cases, variant, payload):
    """Median over repetitions of p50_us, in ns (the first placement run)."""
    matches = [c for n, c in cases.items()
               if n.startswith(f"rtt/gsoap/{variant}/get/{payload}/") and c.runs]
    if not matches:
        return None
    return statistics.median(matches[0].values("p50_us")) * 1e3


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

    header = ["payload"]
    for v in VARIANTS:
        header += [f"{v} size", f"{v} rtt", f"{v} ser", f"{v} deser"]
    header += ["rtt soap/swa", "rtt soap/mtom"]
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
    out.table("E9: standard SOAP vs SwA vs MTOM (gsoap stack; size = encoded response body;\n"
              "rtt = get round trip, median of the repetitions' median calls; ser/deser = "
              "encode/decode medians)", header, rows)


if __name__ == "__main__":
    main()
