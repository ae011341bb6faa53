"""Stack/anchor pairs: each anchor row of bench (bench/anchors/, run as
anchor/<library>/...) and the stack row it anchors (rtt/<stack>/<codec>/...,
the same operation, payload and placement), for scripts/summarize.py (time)
and scripts/count.py (instructions). docs/anchors.md says what an anchor is.
"""

# The stack and codec each anchor's library anchors (bench/anchors/anchors.cpp;
# tests/scripts/anchor_pairs_test.py checks the two agree through bench's list).
# gRPC has two: its examples serve with the synchronous or the callback API.
ANCHORED = {"beast": "beast/json", "gsoap": "gsoap/soap", "xmlrpc-c": "xmlrpc-c/xmlrpc",
            "grpc-sync": "grpc/protobuf", "grpc-callback": "grpc/protobuf"}


def stack_case(anchor_case):
    """'anchor/beast/ping/same' -> 'rtt/beast/json/ping/same'; None for a name
    that is not an anchor row of a known library."""
    parts = anchor_case.split("/")
    if len(parts) < 3 or parts[0] != "anchor" or parts[1] not in ANCHORED:
        return None
    return "/".join(["rtt", ANCHORED[parts[1]]] + parts[2:])


def pairs(names):
    """(stack case, anchor case) for every anchor case among `names` whose
    stack case is there too, in the order of `names`."""
    present = set(names)
    return [(stack_case(n), n) for n in names if stack_case(n) in present]


def paired_ratios(stack_runs, anchor_runs, key="p50_us"):
    """stack/anchor per repetition, the two rows' repetitions paired by
    their repetition_index (the run's position under scripts/bench
    --randomize-layout: the same process and layout); a repetition only
    one row has, or without the figure, is left out."""
    def by_index(runs):
        return {r.get("repetition_index", i): r[key] for i, r in enumerate(runs)
                if isinstance(r.get(key), (int, float))}
    stack, anchor = by_index(stack_runs), by_index(anchor_runs)
    return [stack[i] / anchor[i] for i in sorted(stack.keys() & anchor.keys()) if anchor[i] > 0]


def instruction_ratio(by_case, stack, anchor):
    """stack/anchor in instructions per operation, or None unless both
    rows were counted."""
    counts = [by_case.get(n, {}).get("instructions_per_op") for n in (stack, anchor)]
    if None in counts or not counts[1]:
        return None
    return counts[0] / counts[1]


def anchor_table(out, cases, stat, fmt_time, instructions=None):
    """summarize.py's table of the pairs: each row's p50 (median over
    repetitions), and stack/anchor: the median of the per-repetition ratios
    with its CI95 (summarize.Stat's order statistics over those ratios)."""
    rows = []
    for stack, anchor in pairs(list(cases)):
        s = stat([v * 1e3 for v in cases[stack].values("p50_us")])
        a = stat([v * 1e3 for v in cases[anchor].values("p50_us")])
        r = stat(paired_ratios(cases[stack].runs, cases[anchor].runs))
        row = [anchor[len("anchor/"):], fmt_time(s.median), fmt_time(a.median),
               f"{r.median:.3f}" if r.n else "-",
               f"{r.ci[0]:.3f}-{r.ci[1]:.3f}" if r.ci else f"none (n={r.n})", str(r.n)]
        if instructions:
            ratio = instruction_ratio(instructions.by_case, stack, anchor)
            row.append("-" if ratio is None else f"{ratio:.3f}")
        rows.append(row + [cases[stack].reason() or cases[anchor].reason()])
    if not rows:
        return
    header = ["anchor (library/operation/...)", "stack p50", "anchor p50", "stack/anchor",
              "CI95", "pairs"] + (["instr ratio"] if instructions else []) + ["note"]
    out.table("stack against anchor: each library's own minimal client and server "
              "(docs/anchors.md);\nstack/anchor = median over repetitions of the stack row's "
              "p50 / the anchor row's,\npaired by repetition index; CI95 of that median as above",
              header, rows)
