#!/usr/bin/env python3
"""Pivot a wsbench Google Benchmark JSON file into readable tables.

Usage: scripts/summarize.py results/bench-....json

One table per measured step (encode, decode, bind, write, read, unbind):
rows are payloads, columns codecs, cells the time per operation. With
--benchmark_repetitions the median aggregate is used. A further table gives
wire bytes per codec and payload, and the memcpy floor is shown beside the
encode table. Cases that were skipped show their reason once, below.
"""
import json
import sys

UNIT_TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
STEPS = ["encode", "decode", "bind", "write", "read", "unbind"]


def fmt_time(ns):
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def fmt_bytes(n):
    return "-" if n is None else f"{int(n):,}"


def print_table(title, header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    print(f"\n{title}")
    line = "  ".join(str(h).rjust(w) if i else str(h).ljust(w) for i, (h, w) in enumerate(zip(header, widths)))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths))))


def main(path):
    with open(path) as f:
        data = json.load(f)
    rtt_rows = []
    results = {}  # (step, codec, payload) -> (ns, wire)
    errors = {}
    codecs, payloads = [], []
    have_median = any(b.get("aggregate_name") == "median" for b in data["benchmarks"])
    for b in data["benchmarks"]:
        if have_median and b.get("run_type") == "iteration":
            continue
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        parts = name.split("/")
        if parts[0] == "rtt":
            if b.get("error_occurred"):
                errors.setdefault(b.get("error_message", "error"), []).append(name)
            else:
                rtt_rows.append((name[4:].removesuffix("/manual_time"), b))
            continue
        if parts[0] == "memcpy":
            step, codec, payload = "memcpy", "memcpy", "/".join(parts[1:])
        elif parts[0] in STEPS:
            step, codec, payload = parts[0], parts[1], "/".join(parts[2:])
        else:
            continue
        if payload not in payloads:
            payloads.append(payload)
        if codec != "memcpy" and codec not in codecs:
            codecs.append(codec)
        if b.get("error_occurred"):
            errors.setdefault(b.get("error_message", "error"), []).append(name)
            continue
        ns = b["real_time"] * UNIT_TO_NS[b.get("time_unit", "ns")]
        results[(step, codec, payload)] = (ns, b.get("wire_bytes"))

    for step in STEPS:
        if not any(k[0] == step for k in results):
            continue
        step_codecs = [c for c in codecs if any((step, c, p) in results for p in payloads)]
        header = ["payload"] + (["memcpy"] if step == "encode" else []) + step_codecs
        rows = []
        for p in payloads:
            row = [p]
            if step == "encode":
                row.append(fmt_time(results.get(("memcpy", "memcpy", p), (None,))[0]))
            row += [fmt_time(results.get((step, c, p), (None,))[0]) for c in step_codecs]
            rows.append(row)
        print_table(f"{step}: time per operation", header, rows)

    rows = []
    for p in payloads:
        row = [p, fmt_bytes(results.get(("memcpy", "memcpy", p), (None, None))[1])]
        for c in codecs:
            wire = results.get(("encode", c, p), results.get(("decode", c, p), (None, None)))[1]
            row.append(fmt_bytes(wire))
        rows.append(row)
    print_table("wire bytes (raw payload bytes under 'raw')", ["payload", "raw"] + codecs, rows)

    if rtt_rows:
        rows = []
        for name, b in rtt_rows:
            ratio = b.get("ratio_p50")
            rows.append([name, fmt_time(b.get("p50_us", 0) * 1e3), fmt_time(b.get("p99_us", 0) * 1e3),
                         fmt_time(b.get("floor_p50_us") * 1e3) if "floor_p50_us" in b else "-",
                         f"{ratio:.2f}x" if ratio else "-",
                         fmt_bytes(b.get("request_bytes")), fmt_bytes(b.get("response_bytes"))])
        print_table("round trips (stack/codec/operation/payload/placement); floor = raw TCP "
                    "ping-pong of the same byte counts",
                    ["case", "p50", "p99", "floor p50", "p50/floor", "req bytes", "resp bytes"], rows)

        # Seven columns, one per phase; a merged phase "a+b" (a point the
        # stack does not expose) sits in column a and marks b with "^".
        order = ["client_marshal", "request_transfer", "server_parse", "service", "server_marshal",
                 "response_transfer", "client_parse"]
        rows = []
        for name, b in rtt_rows:
            cells = {}
            for k, v in b.items():
                if not k.startswith("phase:"):
                    continue
                parts = k[len("phase:"):-len("_us")].split("+")
                if parts[0] in order:
                    cells[parts[0]] = fmt_time(v * 1e3)
                    for merged in parts[1:]:
                        cells[merged] = "^"
            row = [name] + [cells.get(p, "") for p in order]
            row.append(f"{b['phase_sum_ratio']:.3f}" if "phase_sum_ratio" in b else "-")
            rows.append(row)
        print_table("phases, mean per call ('^': merged into the phase to its left, the stack "
                    "exposes no point between them); sum/rtt should be ~1",
                    ["case"] + order + ["sum/rtt"], rows)

    if errors:
        print("\nskipped cases:")
        for message, names in errors.items():
            shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
            print(f"  {message}: {shown}")
    ctx = data.get("context", {})
    print(f"\nhost {ctx.get('host_name', '?')}, {ctx.get('num_cpus', '?')} CPUs, "
          f"build {ctx.get('wsbench_build_type', '?')}, sweep {ctx.get('wsbench_sweep', '?')}, "
          f"{ctx.get('date', '')}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
