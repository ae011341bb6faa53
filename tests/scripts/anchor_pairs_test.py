#!/usr/bin/env python3
"""scripts/anchor_pairs.py, and the stack/anchor figures summarize.py and
count.py print with it, on hand-made data: six repetitions of a stack row
and its anchor row, written in different orders so that only pairing by
repetition_index gives the expected ratios (a test injects positional
pairing and sees the check fail). With a bench binary as argument, bench's
own list of rows must pair every anchor row with its stack row.

Usage: anchor_pairs_test.py [BENCH]"""
import contextlib
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)
import anchor_pairs  # noqa: E402
import count  # noqa: E402
import summarize  # noqa: E402

BENCH = None

# p50_us by repetition index. Ratios by index: 1.2, 1.24, 1.0, 1.3, 1.1, 1.0;
# sorted 1.0 1.0 1.1 1.2 1.24 1.3: median 1.15, CI95 at ranks 1 and 6 for
# n = 6 (summarize.median_ci_ranks): 1.000-1.300. Stack p50 median
# (12.2 + 12.4) / 2 = 12.3 us; anchor (10 + 11) / 2 = 10.5 us.
STACK = [12.0, 12.4, 12.2, 13.0, 12.1, 12.6]
ANCHOR = [10.0, 10.0, 12.2, 10.0, 11.0, 12.6]
STACK_CASE = "rtt/beast/json/ping/same"
ANCHOR_CASE = "anchor/beast/ping/same"
# Counts: 41,000 / 50,000 = 0.820.
COUNTS = {STACK_CASE: 41000, ANCHOR_CASE: 50000}


def rows(case, values, order):
    """Per-repetition rows of `case`, listed in `order` of repetition index."""
    name = case + "/iterations:200/manual_time"
    return [{"name": name, "run_name": name,
             "run_type": "iteration", "repetitions": len(values), "repetition_index": i,
             "iterations": 200, "real_time": values[i], "cpu_time": values[i],
             "time_unit": "us", "p50_us": values[i], "n": 200} for i in order]


def result_file(tmp):
    # The anchor's repetitions in reverse: pairing by position gives other
    # ratios (median 1.168), so the expected 1.150 needs repetition_index.
    data = {"context": {}, "benchmarks": rows(STACK_CASE, STACK, range(6)) +
            rows(ANCHOR_CASE, ANCHOR, reversed(range(6)))}
    path = os.path.join(tmp, "bench.json")
    with open(path, "w") as f:
        json.dump(data, f)
    return path


def count_file(tmp):
    data = {"results": [{"case": c + "/manual_time", "instructions_per_op": n}
                        for c, n in COUNTS.items()]}
    path = os.path.join(tmp, "count.json")
    with open(path, "w") as f:
        json.dump(data, f)
    return path


def summary(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        summarize.main(list(args))
    return out.getvalue()


def pair_row(output):
    """The cells of the anchor table's row of beast/ping/same."""
    block = next(b for b in output.split("\n\n") if b.startswith("stack against anchor"))
    line = next(line for line in block.split("\n") if line.startswith("beast/ping/same"))
    return re.split(r"\s{2,}", line.strip())


class Pairs(unittest.TestCase):
    def test_stack_case_of_each_library(self):
        self.assertEqual(anchor_pairs.stack_case("anchor/beast/echo/message-b/128KiB/same"),
                         "rtt/beast/json/echo/message-b/128KiB/same")
        self.assertEqual(anchor_pairs.stack_case("anchor/gsoap/ping/split"),
                         "rtt/gsoap/soap/ping/split")
        self.assertEqual(anchor_pairs.stack_case("anchor/xmlrpc-c/ping/same"),
                         "rtt/xmlrpc-c/xmlrpc/ping/same")
        for library in ("grpc-sync", "grpc-callback"):
            self.assertEqual(anchor_pairs.stack_case(f"anchor/{library}/ping/same"),
                             "rtt/grpc/protobuf/ping/same")
        self.assertIsNone(anchor_pairs.stack_case("anchor/nginx/ping/same"))
        self.assertIsNone(anchor_pairs.stack_case("rtt/beast/json/ping/same"))

    def test_a_pair_needs_both_rows(self):
        self.assertEqual(anchor_pairs.pairs([STACK_CASE, ANCHOR_CASE]), [(STACK_CASE, ANCHOR_CASE)])
        self.assertEqual(anchor_pairs.pairs([ANCHOR_CASE]), [])

    def test_two_anchors_of_one_stack(self):
        names = ["rtt/grpc/protobuf/ping/same", "anchor/grpc-sync/ping/same",
                 "anchor/grpc-callback/ping/same"]
        self.assertEqual(anchor_pairs.pairs(names),
                         [(names[0], names[1]), (names[0], names[2])])
        self.assertEqual(unpaired(set(names)), [])

    def test_catches_an_anchor_missing_from_the_table(self):
        # As if grpc-callback were registered in bench but not in ANCHORED:
        # its rows are then unpaired, and the bench check below fails.
        real = dict(anchor_pairs.ANCHORED)
        del anchor_pairs.ANCHORED["grpc-callback"]
        try:
            names = {"rtt/grpc/protobuf/ping/same", "anchor/grpc-sync/ping/same",
                     "anchor/grpc-callback/ping/same"}
            self.assertEqual(unpaired(names), ["anchor/grpc-callback/ping/same"])
        finally:
            anchor_pairs.ANCHORED.clear()
            anchor_pairs.ANCHORED.update(real)

    def test_ratios_pair_by_repetition_index(self):
        stack = rows(STACK_CASE, STACK, range(6))
        anchor = rows(ANCHOR_CASE, ANCHOR, reversed(range(6)))
        ratios = anchor_pairs.paired_ratios(stack, anchor)
        self.assertEqual([round(r, 4) for r in ratios], [1.2, 1.24, 1.0, 1.3, 1.1, 1.0])
        # A repetition only one row has is left out.
        self.assertEqual(len(anchor_pairs.paired_ratios(stack, anchor[1:])), 5)


class Summary(unittest.TestCase):
    def check(self, output):
        cells = pair_row(output)
        self.assertEqual(cells[:6], ["beast/ping/same", "12.3 us", "10.5 us", "1.150",
                                     "1.000-1.300", "6"], output)

    def test_table_of_the_pair(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.check(summary(result_file(tmp)))

    def test_instruction_ratio_column(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = summary("--instructions", count_file(tmp), result_file(tmp))
        self.check(out)
        self.assertEqual(pair_row(out)[6], "0.820", out)

    def test_catches_pairing_by_position(self):
        def by_position(stack_runs, anchor_runs, key="p50_us"):
            return [s[key] / a[key] for s, a in zip(stack_runs, anchor_runs)]
        real = anchor_pairs.paired_ratios
        anchor_pairs.paired_ratios = by_position
        try:
            with tempfile.TemporaryDirectory() as tmp:
                output = summary(result_file(tmp))
            with self.assertRaises(AssertionError):
                self.check(output)
        finally:
            anchor_pairs.paired_ratios = real

    def test_anchor_rows_in_the_round_trip_table(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = summary(result_file(tmp))
        block = next(b for b in out.split("\n\n") if b.startswith("round trips"))
        self.assertIn("\nanchor/beast/ping/same ", block)
        self.assertIn("\nbeast/json/ping/same ", block)


class Count(unittest.TestCase):
    def test_stack_over_anchor(self):
        results = [{"case": c + "/manual_time", "instructions_per_op": n}
                   for c, n in COUNTS.items()]
        with contextlib.redirect_stdout(io.StringIO()) as out:
            ratios = count.stack_over_anchor(results)
        self.assertEqual(ratios, [{"stack": STACK_CASE, "anchor": ANCHOR_CASE, "ratio": 0.82}])
        self.assertIn("rtt/beast/json/ping/same", out.getvalue())
        self.assertIn("0.820", out.getvalue())

    def test_none_unless_both_were_counted(self):
        failed = [{"case": STACK_CASE + "/manual_time", "instructions_per_op": 41000},
                  {"case": ANCHOR_CASE + "/manual_time", "error": "cannot run under valgrind"}]
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(count.stack_over_anchor(failed), [])


def unpaired(names):
    """Anchor rows in `names` whose stack row is missing."""
    return sorted(n for n in names
                  if n.startswith("anchor/") and anchor_pairs.stack_case(n) not in names)


class BenchRows(unittest.TestCase):
    def test_every_anchor_row_has_its_stack_row(self):
        if BENCH is None:
            self.skipTest("no bench binary given")
        listing = subprocess.run([BENCH, "--benchmark_list_tests=true"], capture_output=True,
                                 text=True, check=True).stdout.split()
        names = {summarize.case_name({"name": n}) for n in listing}
        anchors = [n for n in names if n.startswith("anchor/")]
        self.assertIn("anchor/beast/ping/same", anchors)
        self.assertIn("anchor/beast/echo/message-b/128KiB/same", anchors)
        for library in ("grpc-sync", "grpc-callback"):
            self.assertIn(f"anchor/{library}/ping/same", anchors)
            self.assertIn(f"anchor/{library}/echo/message-b/128KiB/same", anchors)
        self.assertEqual(unpaired(names), [])
        # The check sees a missing stack row.
        self.assertEqual(unpaired(names - {"rtt/beast/json/ping/same"}),
                         ["anchor/beast/ping/same"])
        self.assertEqual(sorted(unpaired(names - {"rtt/grpc/protobuf/ping/same"})),
                         ["anchor/grpc-callback/ping/same", "anchor/grpc-sync/ping/same"])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        BENCH = sys.argv.pop(1)
    unittest.main()
