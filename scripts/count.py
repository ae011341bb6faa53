#!/usr/bin/env python3
"""Instruction counts per operation under callgrind.

scripts/count drives it: it builds the bench, installs valgrind and picks
the output folder (results/count/<UTC time>/count.json). Each case runs
twice under callgrind, for N and MULTIPLIER x N iterations; the difference
over the extra iterations is one operation's count. A line per case on
stderr says how far the run is.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

from anchor_pairs import instruction_ratio, pairs
from progress import Progress

TIMEOUT_S = 900
# Round trips: client and server threads (bench's rtt/ rows and the
# anchors' rows beside them).
ROUND_TRIP = ("rtt/", "anchor/")


def ere_escape(text):
    """Escapes for Google Benchmark's POSIX extended regex (re.escape's "\\-"
    is not valid there)."""
    return re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", text)


# Every run gets argv and environment of the same total size, so the stack
# and what the bench copies from them onto the heap start at the same
# addresses for every case and iteration count. Without this the count of a
# case dominated by strncmp/memcpy over large buffers (encode/soap-mtom/
# binary/1MiB) moved by half with the length of the filter: glibc picks its
# copy and compare loops by alignment.
FILTER_CHARS = 400
PAD_TOTAL = 1024


def dictionary_dir():
    """The folder wsbench's dictionary database is found in (src/common/dictionary.cpp)."""
    if os.environ.get("WSBENCH_CACHE_DIR"):
        return os.environ["WSBENCH_CACHE_DIR"]
    if os.environ.get("XDG_CACHE_HOME"):
        return os.path.join(os.environ["XDG_CACHE_HOME"], "wsbench")
    return os.path.join(os.path.expanduser("~"), ".cache", "wsbench")


def fixed_layout(bench, case, iterations, floor=False):
    """The command and environment of one run, in a fixed layout."""
    # Google Benchmark appends "/iterations:N" (and "/manual_time") to names;
    # a case registered with a fixed count (unbind/soap: 200) gets N instead.
    base = re.sub(r"/iterations:\d+$", "", case.removesuffix("/manual_time"))
    regex = "^" + ere_escape(base) + "(/iterations:[0-9]+)?(/manual_time)?$"
    # An alternative no name can match pads the filter to a fixed length.
    regex += "|^" + "#" * max(1, FILTER_CHARS - len(regex) - 3) + "$"
    args = [bench, "--benchmark_filter=" + regex, f"--iterations={iterations:09d}",
            "--benchmark_repetitions=1", "--benchmark_format=json"]
    env = {"PATH": "/usr/bin:/bin", "LANG": "C"}
    # Where the dictionary database (E8) lives; the pad keeps the total size.
    env["WSBENCH_CACHE_DIR"] = dictionary_dir()
    if floor:  # the row's floor exchanges instead of its calls (profiling.h)
        env["WSBENCH_COUNT_FLOOR"] = "1"
    used = sum(len(a) + 1 for a in args) + sum(len(k) + len(v) + 2 for k, v in env.items())
    env["WSBENCH_COUNT_PAD"] = "x" * (PAD_TOTAL - used - len("WSBENCH_COUNT_PAD") - 2)
    return args, env


def run_callgrind(bench, case, iterations, workdir, floor=False):
    """Total instructions of one bench run with a fixed iteration count."""
    out = os.path.join(workdir, "callgrind.out")
    args, env = fixed_layout(bench, case, iterations, floor)
    # No address randomisation either, so the count repeats run to run.
    # Only the measured calls are instrumented (bench/harness/profiling.h).
    cmd = ["setarch", "-R", "valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
           "--instr-atstart=no", "--fair-sched=yes"] + args
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
    report = json.loads(proc.stdout)
    for b in report.get("benchmarks", []):
        if b.get("error_occurred"):
            raise RuntimeError(b.get("error_message", "benchmark error"))
    # With --instr-atstart=no the header's "summary:" is 0; "totals:" at the
    # end holds what the instrumented regions executed.
    with open(out) as f:
        totals = [int(line.split()[1]) for line in f if line.startswith("totals:")]
    if not totals:
        raise RuntimeError("no totals in callgrind output")
    return sum(totals)


def count_case(bench, case, n1, n2, floor=False):
    """One row of count.json."""
    entry = {"case": case, "iterations": [n1, n2]}
    if floor:
        entry["counted"] = "floor"
    if case.startswith(ROUND_TRIP):
        # Client and server threads interleave differently from run to run
        # (lock hand-offs, wake-ups, the curl transport's timers, the
        # asynchronous Beast server's 250 ms deadline sweep), so these counts
        # repeat to 0.01-0.3% at N = 10 (beast: about 3%), not to the
        # instruction as single-threaded codec cases do.
        entry["note"] = "threaded: client and server; repeatable to about 0.3% (beast: 3%)"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            totals = [run_callgrind(bench, case, n, tmp, floor) for n in (n1, n2)]
        entry["totals"] = totals
        entry["instructions_per_op"] = round((totals[1] - totals[0]) / (n2 - n1))
    except subprocess.TimeoutExpired:
        entry["error"] = f"timed out under valgrind after {TIMEOUT_S} s"
    except (RuntimeError, json.JSONDecodeError) as e:
        # A codec that cannot or need not run a payload is skipped, not failed.
        if str(e).startswith(("not applicable", "unsupported")):
            entry["skipped"] = str(e)
        else:
            entry["error"] = f"cannot run under valgrind: {e}"
    return entry


def stack_over_anchor(results):
    """Each counted stack/anchor pair (anchor_pairs.py) by instructions,
    printed and returned for count.json: [{stack, anchor, ratio}]."""
    by_case = {re.sub(r"(/iterations:\d+)?(/manual_time)?$", "", e["case"]): e for e in results}
    ratios = []
    for stack, anchor in pairs(list(by_case)):
        ratio = instruction_ratio(by_case, stack, anchor)
        if ratio is not None:
            ratios.append({"stack": stack, "anchor": anchor, "ratio": round(ratio, 4)})
    if ratios:
        print("\nstack/anchor by instructions (docs/anchors.md):")
        for r in ratios:
            print(f"  {r['stack']:<50} {r['ratio']:.3f}")
    return ratios


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="Typical time on 2 vCPUs: 10-30 s per case.")
    ap.add_argument("--bench", required=True, help="the bench binary to count")
    ap.add_argument("--filter", required=True, help="Google Benchmark filter of the cases")
    ap.add_argument("--iterations", type=int, default=10, help="N, the first run's iterations")
    ap.add_argument("--codec-iterations", type=int,
                    help="N for codec cases (default: --iterations); a round trip's threads "
                         "need more calls than a codec case to repeat")
    ap.add_argument("--multiplier", type=int, default=3,
                    help="the second run counts this many times --iterations")
    ap.add_argument("--jobs", type=int, default=1,
                    help="codec cases counted at once (round trips always one at a time: "
                         "their threads are pinned)")
    ap.add_argument("--floor", action="store_true",
                    help="count each round-trip row's floor exchanges instead of its calls")
    ap.add_argument("--out", required=True, help="the JSON file to write")
    args = ap.parse_args()

    listing = subprocess.run([args.bench, "--benchmark_list_tests=true",
                              "--benchmark_filter=" + args.filter],
                             capture_output=True, text=True, check=False)
    cases = [c for c in listing.stdout.split("\n") if c]
    if not cases:
        if listing.returncode > 1:  # an option bench refused, in its own words
            sys.exit(f"count: {listing.stderr.strip()}")
        sys.exit(f"count: no case matches {args.filter}")

    if args.multiplier < 2:
        sys.exit("count: --multiplier must be at least 2")
    n1, n2 = args.iterations, args.multiplier * args.iterations
    c1 = args.codec_iterations or args.iterations
    if c1 < 1:
        sys.exit("count: --codec-iterations must be at least 1")
    progress = Progress("count", len(cases))

    def show(entry):
        shown = (f"{entry['instructions_per_op']:>15,}" if "instructions_per_op" in entry
                 else entry.get("skipped") or entry["error"])
        print(f"{entry['case']:<60} {shown}{'  (threaded)' if 'note' in entry else ''}",
              flush=True)
        progress.end(entry["case"])
        return entry

    # Each case is its own process, so cases can run side by side; the
    # count does not depend on what else the machine runs.
    codec = [c for c in cases if not c.startswith(ROUND_TRIP)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        counted = {e["case"]: e for e in
                   pool.map(lambda c: show(count_case(args.bench, c, c1, args.multiplier * c1)),
                            codec)}
    for case in cases:
        if case.startswith(ROUND_TRIP):
            counted[case] = show(count_case(args.bench, case, n1, n2, args.floor))
    results = [counted[c] for c in cases]
    report = {"unit": "instructions per operation", "results": results}
    if ratios := stack_over_anchor(results):
        report["stack_over_anchor"] = ratios

    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"written: {args.out}")
    if any("error" in r for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
