#!/usr/bin/env python3
"""Two wsbench result files side by side, per case, with a significance test.

Usage: scripts/compare A B [--filter REGEX] [--alpha 0.05]

A and B are result files (bench.json) or the run folders holding one
(results/bench/<UTC time>/, results/bench/latest).

For every case in either file: the median over repetitions in A and in B
with their CI95 (the rules of scripts/summarize.py), the change of B's
median against A's, and a two-sided Mann-Whitney U test on the two sets of
per-repetition values (scipy.stats.mannwhitneyu, exact for small samples).
Round trips compare each repetition's median call (p50_us), every other
case its time per operation. The verdict is "slower"/"faster" only where p
is below alpha; with too few repetitions for p to reach alpha it says so.
Cases present in one file only, or failed in either, keep a row with the
reason. Both files' contexts (commit, CPU, kernel) head the output, since
a difference between machines or library versions is the usual question.
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summarize  # noqa: E402  (same directory; shares the statistics rules)


def case_values(case):
    """Per-repetition values in ns: p50 of each repetition's calls for a
    round trip (an anchor's too), else the time per operation."""
    if case.name.startswith(("rtt/", "anchor/")):
        return [v * 1e3 for v in case.values("p50_us")]
    return case.times_ns()


def min_p_value(n_a, n_b):
    """The smallest two-sided exact p a U test can give: both orderings
    completely separated, 2 / C(n_a + n_b, n_a)."""
    from math import comb
    return 2 / comb(n_a + n_b, n_a) if n_a and n_b else 1.0


def compare_case(a, b, alpha):
    """(A cells, B cells, change, p, verdict) for one case present in both."""
    va, vb = case_values(a), case_values(b)
    sa, sb = summarize.Stat(va), summarize.Stat(vb)
    if not va or not vb:
        reason = a.reason() if not va else b.reason()
        return sa, sb, None, None, reason or "no values"
    change = sb.median / sa.median - 1 if sa.median else None
    if min_p_value(len(va), len(vb)) >= alpha:
        return sa, sb, change, None, f"n too small for p < {alpha:g}"
    # SciPy only here, so --help and bad options need no SciPy (scripts/compare
    # makes an environment with it).
    from scipy.stats import mannwhitneyu
    p = mannwhitneyu(va, vb, alternative="two-sided", method="auto").pvalue
    if p >= alpha:
        verdict = "no significant change"
    else:
        verdict = "slower" if sb.median > sa.median else "faster"
    return sa, sb, change, p, verdict


def context_line(label, path, ctx):
    keys = [("commit", "source_git_commit"), ("cpu", "cpu_model"), ("kernel", "kernel"),
            ("date", "date"), ("placement", "wsbench_placement")]
    parts = [f"{k} {ctx[v]}" for k, v in keys if ctx.get(v)]
    dirty = summarize.truthy(ctx.get("source_git_dirty"))
    return f"{label}: {path}" + (" [DIRTY TREE]" if dirty else "") + "\n   " + ", ".join(parts)


def result_file(path):
    """The JSON file of a run: the path itself, or the only .json in a run folder."""
    if not os.path.isdir(path):
        return path
    found = sorted(f for f in os.listdir(path) if f.endswith(".json"))
    if len(found) != 1:
        sys.exit(f"compare: {path} holds {len(found)} JSON files, not one: name the file")
    return os.path.join(path, found[0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="Takes a second or two; prints a table, writes nothing.")
    ap.add_argument("a", help="baseline: a result file (Google Benchmark JSON from bench) or "
                              "its run folder")
    ap.add_argument("b", help="the result file or run folder compared with it")
    ap.add_argument("--filter", default="", help="only cases whose name matches this regex")
    ap.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    args = ap.parse_args(argv)

    files = []
    args.a, args.b = result_file(args.a), result_file(args.b)
    for path in (args.a, args.b):
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"compare: cannot read {path}: {e}")
        files.append((data.get("context", {}), summarize.load_cases(data.get("benchmarks", []))))
    (ctx_a, cases_a), (ctx_b, cases_b) = files
    print(context_line("A", args.a, ctx_a))
    print(context_line("B", args.b, ctx_b))

    pattern = re.compile(args.filter)
    names = [n for n in dict.fromkeys(list(cases_a) + list(cases_b)) if pattern.search(n)]
    rows = []
    counts = {}
    for name in names:
        a, b = cases_a.get(name), cases_b.get(name)
        if a is None or b is None:
            verdict = "only in B" if a is None else "only in A"
            rows.append([name, "-", "-", "-", "-", "-", "-", verdict])
            counts[verdict] = counts.get(verdict, 0) + 1
            continue
        sa, sb, change, p, verdict = compare_case(a, b, args.alpha)
        rows.append([name, summarize.fmt_time(sa.median), summarize.fmt_ci(sa),
                     summarize.fmt_time(sb.median), summarize.fmt_ci(sb),
                     "-" if change is None else f"{100 * change:+.1f}%",
                     "-" if p is None else f"{p:.3g}", verdict])
        key = verdict if verdict in ("slower", "faster", "no significant change") else "other"
        counts[key] = counts.get(key, 0) + 1
    out = summarize.Printer(False)
    out.table(f"B against A: median over repetitions, CI95 of each median, change of B's "
              f"median, two-sided Mann-Whitney U p (alpha {args.alpha:g})",
              ["case", "A median", "A CI95", "B median", "B CI95", "change", "p", "verdict"],
              rows)
    print("\n" + ", ".join(f"{v} {k}" for k, v in counts.items()))
    tested = counts.get("slower", 0) + counts.get("faster", 0) + counts.get("no significant change", 0)
    if tested:
        print(f"of {tested} tests, about {args.alpha * tested:.1f} fall below alpha {args.alpha:g} "
              f"by chance alone when nothing changed")


if __name__ == "__main__":
    main()
