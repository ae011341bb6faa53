#!/usr/bin/env python3
"""scripts/content_length.py, the summary's table of gSOAP's counting pass,
on hand-made data: six repetitions of encode/soap and encode-chunked/soap
written in different orders, so that only pairing by repetition_index gives
the expected shares (a test injects positional pairing and sees the check
fail), and instruction counts of both rows."""
import contextlib
import io
import json
import os
import re
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import anchor_pairs  # noqa: E402
import content_length  # noqa: E402
import summarize  # noqa: E402

DEFAULT_CASE = "encode/soap/message-a/100"
CHUNKED_CASE = "encode-chunked/soap/message-a/100"
# us per encode by repetition index. chunked/default by index: 0.5, 0.6,
# 0.55, 0.5, 0.7, 0.65; sorted 0.5 0.5 0.55 0.6 0.65 0.7: median 0.575, so
# the counting pass is 42.5%; CI95 at ranks 1 and 6 (n = 6): 30.0%-50.0%.
DEFAULT = [300.0, 300.0, 320.0, 300.0, 300.0, 320.0]
CHUNKED = [150.0, 180.0, 176.0, 150.0, 210.0, 208.0]
# By instructions: 1 - 1,800,000 / 3,000,000 = 40.0%.
COUNTS = {DEFAULT_CASE: 3_000_000, CHUNKED_CASE: 1_800_000}


def rows(case, values, order):
    return [{"name": case, "run_name": case, "run_type": "iteration",
             "repetitions": len(values), "repetition_index": i, "iterations": 1000,
             "real_time": values[i], "cpu_time": values[i], "time_unit": "us"} for i in order]


def files(tmp):
    bench = os.path.join(tmp, "bench.json")
    with open(bench, "w") as f:
        json.dump({"context": {}, "benchmarks": rows(DEFAULT_CASE, DEFAULT, range(6)) +
                   rows(CHUNKED_CASE, CHUNKED, reversed(range(6)))}, f)
    counts = os.path.join(tmp, "count.json")
    with open(counts, "w") as f:
        json.dump({"results": [{"case": c, "instructions_per_op": n}
                               for c, n in COUNTS.items()]}, f)
    return bench, counts


def table_row(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        summarize.main(list(args))
    block = next(b for b in out.getvalue().split("\n\n")
                 if b.startswith("gSOAP's Content-Length"))
    line = next(line for line in block.split("\n") if line.startswith("message-a/100"))
    return re.split(r"\s{2,}", line.strip())


class ContentLength(unittest.TestCase):
    def test_pairs_need_both_rows(self):
        self.assertEqual(content_length.pairs([DEFAULT_CASE, CHUNKED_CASE]),
                         [(DEFAULT_CASE, CHUNKED_CASE)])
        self.assertEqual(content_length.pairs([CHUNKED_CASE]), [])
        self.assertEqual(content_length.pairs(["encode-chunked/json/ints/200",
                                               "encode/json/ints/200"]), [])

    def test_table(self):
        with tempfile.TemporaryDirectory() as tmp:
            bench, counts = files(tmp)
            cells = table_row("--instructions", counts, bench)
        self.assertEqual(cells[:7], ["message-a/100", "300 us", "178 us", "42.5%",
                                     "30.0%-50.0%", "6", "40.0%"], cells)

    def test_catches_pairing_by_position(self):
        def by_position(a_runs, b_runs, key="p50_us"):
            return [a[key] / b[key] for a, b in zip(a_runs, b_runs)]
        real = content_length.paired_ratios
        content_length.paired_ratios = by_position
        try:
            with tempfile.TemporaryDirectory() as tmp:
                bench, counts = files(tmp)
                cells = table_row("--instructions", counts, bench)
            self.assertNotEqual(cells[3:5], ["42.5%", "30.0%-50.0%"], cells)
        finally:
            content_length.paired_ratios = real
        self.assertIs(content_length.paired_ratios, anchor_pairs.paired_ratios)


if __name__ == "__main__":
    unittest.main()
