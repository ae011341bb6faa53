#!/usr/bin/env python3
"""Merge bench runs of one repetition each into one Google Benchmark JSON file.

Usage: scripts/merge_runs.py OUT RUN.json...

scripts/bench --randomize-layout runs every repetition in a process of its
own, each with another memory layout; this makes one file of them, shaped as
a single run with --benchmark_repetitions=<number of runs> would be:

- every per-repetition row, with repetition_index set to its run;
- mean, median, stddev and cv aggregates, computed here as Google Benchmark
  computes them (stddev with n - 1; cv = stddev / mean);
- a skipped case once, not once per run;
- the first run's context, with calibration_before_ns and
  calibration_after_ns holding every run's samples in run order,
  steal_during_run_pct over the sum of the runs' ticks, and layout_runs
  listing each run's layout (environment size, stack offset), steal and
  command line.
"""
import json
import statistics
import sys

# Row members that are not counters.
FIXED = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
         "repetitions", "repetition_index", "threads", "iterations", "real_time",
         "cpu_time", "time_unit", "label", "error_occurred", "error_message",
         "aggregate_name", "aggregate_unit"}


def aggregates(rows):
    """Google Benchmark's four aggregates of one case's repetitions."""
    first = rows[0]
    values = {"real_time": [r["real_time"] for r in rows],
              "cpu_time": [r["cpu_time"] for r in rows]}
    for key, value in first.items():
        if key not in FIXED and isinstance(value, (int, float)):
            values[key] = [r.get(key, 0.0) for r in rows]
    n = len(rows)

    def stddev(xs):
        return statistics.stdev(xs) if n > 1 else 0.0

    def cv(xs):
        mean = statistics.fmean(xs)
        return stddev(xs) / mean if mean else 0.0

    out = []
    for name, fn, unit in (("mean", statistics.fmean, "time"),
                           ("median", statistics.median, "time"),
                           ("stddev", stddev, "time"), ("cv", cv, "percentage")):
        row = {k: first[k] for k in ("family_index", "per_family_instance_index", "run_name",
                                     "threads", "time_unit", "label") if k in first}
        row.update({"name": first["run_name"] + "_" + name, "run_type": "aggregate",
                    "repetitions": n, "aggregate_name": name, "aggregate_unit": unit,
                    "iterations": n})
        row.update({k: fn(v) for k, v in values.items()})
        out.append(row)
    return out


def merge(runs):
    context = dict(runs[0]["context"])
    before, after, layout = [], [], []
    ticks = steal = 0
    have_ticks = True
    for run in runs:
        c = run["context"]
        before += c.get("calibration_before_ns") or []
        after += c.get("calibration_after_ns") or []
        if isinstance(c.get("cpu_ticks_during_run"), int):
            ticks += c["cpu_ticks_during_run"]
            steal += c["steal_ticks_during_run"]
        else:
            have_ticks = False
        layout.append({k: c.get(k) for k in ("environment_bytes", "layout_stack_offset_bytes",
                                             "steal_during_run_pct", "command_line", "date")})
    context["calibration_before_ns"] = before
    context["calibration_after_ns"] = after
    if have_ticks:
        context["cpu_ticks_during_run"] = ticks
        context["steal_ticks_during_run"] = steal
        context["steal_during_run_pct"] = 100.0 * steal / ticks if ticks else 0.0
    else:
        context["steal_during_run_pct"] = "unavailable"
    context["layout_runs"] = layout

    benchmarks, by_case, order = [], {}, []
    for index, run in enumerate(runs):
        for row in run["benchmarks"]:
            if row.get("run_type") == "aggregate":
                continue  # recomputed over all runs below
            case = row["run_name"]
            if case not in by_case:
                by_case[case] = []
                order.append(case)
            if row.get("error_occurred"):
                if index == 0:
                    benchmarks.append(row)
                continue
            row = dict(row, repetitions=len(runs), repetition_index=index)
            by_case[case].append(row)
    for case in order:
        rows = by_case[case]
        benchmarks += rows
        if rows:
            benchmarks += aggregates(rows)
    return {"context": context, "benchmarks": benchmarks}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs = []
    for path in sys.argv[2:]:
        with open(path) as f:
            runs.append(json.load(f))
    with open(sys.argv[1], "w") as f:
        json.dump(merge(runs), f, indent=2)


if __name__ == "__main__":
    main()
