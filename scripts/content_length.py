"""What gSOAP's Content-Length costs: encode/soap/<payload> (gSOAP's default
output, a counting pass over the envelope, then the envelope) against
encode-chunked/soap/<payload> (SOAP_IO_CHUNK: the envelope once, in HTTP
chunks, no length needed), for scripts/summarize.py. The two rows write the
same envelope (bench verifies it before timing), so their difference is the
counting pass (docs/reference/codecs.md)."""

from anchor_pairs import paired_ratios

DEFAULT, CHUNKED = "encode/soap/", "encode-chunked/soap/"


def pairs(names):
    """(default case, chunked case) for every chunked row among `names`
    whose default row is there too, in the order of `names`."""
    present = set(names)
    return [(DEFAULT + n[len(CHUNKED):], n) for n in names
            if n.startswith(CHUNKED) and DEFAULT + n[len(CHUNKED):] in present]


def instruction_share(by_case, default, chunked):
    """The counting pass's share of an encode by instructions
    (1 - chunked/default), or None unless both rows were counted."""
    counts = [by_case.get(n, {}).get("instructions_per_op") for n in (default, chunked)]
    if None in counts or not counts[0]:
        return None
    return 1 - counts[1] / counts[0]


def content_length_table(out, cases, stat, fmt_time, instructions=None):
    """summarize.py's table: each row's median time per encode over
    repetitions, and the counting pass's share of the default encode,
    1 - chunked/default, from per-repetition ratios paired by repetition
    index, with the CI95 of their median."""
    rows = []
    for default, chunked in pairs(list(cases)):
        d, c = stat(cases[default].times_ns()), stat(cases[chunked].times_ns())
        r = stat(paired_ratios(cases[chunked].runs, cases[default].runs, key="real_time"))
        share = f"{1 - r.median:.1%}" if r.n else "-"
        ci = f"{1 - r.ci[1]:.1%}-{1 - r.ci[0]:.1%}" if r.ci else f"none (n={r.n})"
        row = [default[len(DEFAULT):], fmt_time(d.median), fmt_time(c.median), share, ci, str(r.n)]
        if instructions:
            s = instruction_share(instructions.by_case, default, chunked)
            row.append("-" if s is None else f"{s:.1%}")
        rows.append(row + [cases[default].reason() or cases[chunked].reason()])
    if not rows:
        return
    header = ["payload", "encode/soap", "encode-chunked/soap", "counting pass", "CI95",
              "pairs"] + (["by instr"] if instructions else []) + ["note"]
    out.table("gSOAP's Content-Length: its counting pass as a share of a soap encode,\n"
              "1 - encode-chunked/encode (SOAP_IO_CHUNK writes the same envelope with no\n"
              "length), median over repetitions paired by index; CI95 as above",
              header, rows)
