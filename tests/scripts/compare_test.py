#!/usr/bin/env python3
"""scripts/compare.py on two hand-made result files. The p-values are
checked against the exact two-sided Mann-Whitney U distribution worked out
by hand: with samples of 6 and 6 completely separated, only 2 of the
C(12, 6) = 924 orderings are as extreme, p = 2/924; with one pair of values
swapped across the groups (U = 1), 4 of 924, p = 4/924."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "compare.py")


def rows(name, times, unit="us", **extra):
    return [dict(name=f"{name}/repeats:{len(times)}", run_name=name, run_type="iteration",
                 repetitions=len(times), repetition_index=i, real_time=t, cpu_time=t,
                 time_unit=unit, iterations=100, **{k: v[i] for k, v in extra.items()})
            for i, t in enumerate(times)]


def result(commit, benchmarks):
    return {"context": {"source_git_commit": commit, "cpu_model": "test CPU"},
            "benchmarks": benchmarks}


A = result("aaaa", rows("decode/json/ints/200", [10, 11, 12, 13, 14, 15])
           + rows("decode/xml/ints/200", [10, 11, 12, 13, 14, 15])
           + rows("decode/soap/ints/200", [10, 11, 12, 13, 14, 15])
           + rows("encode/json/ints/200", [5, 6, 7])
           # Round trips compare p50_us; real_time is deliberately the opposite.
           + rows("rtt/beast/json/ping/same", [90, 80, 70, 60, 50, 40],
                  p50_us=[20, 21, 22, 23, 24, 25])
           + rows("decode/json/ints/400", [1, 2, 3, 4, 5, 6]))
B = result("bbbb", rows("decode/json/ints/200", [20, 21, 22, 23, 24, 25])
           + rows("decode/xml/ints/200", [10.5, 11.5, 12.5, 13.5, 14.5, 15.5])
           + rows("decode/soap/ints/200", [14.5, 16, 17, 18, 19, 20])
           + rows("encode/json/ints/200", [9, 10, 11])
           + rows("rtt/beast/json/ping/same", [10, 20, 30, 40, 50, 60],
                  p50_us=[10, 11, 12, 13, 14, 15])
           + [dict(name="decode/json/ints/800", run_name="decode/json/ints/800",
                   run_type="iteration", error_occurred=True,
                   error_message="decoded payload differs from the one sent")])


class CompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        paths = []
        for label, data in (("a", A), ("b", B)):
            path = os.path.join(cls.dir.name, f"{label}.json")
            with open(path, "w") as f:
                json.dump(data, f)
            paths.append(path)
        proc = subprocess.run([sys.executable, SCRIPT, *paths], capture_output=True, text=True,
                              check=True)
        cls.out = proc.stdout
        cls.lines = {line.split()[0]: line for line in cls.out.splitlines() if line.strip()}

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def cells(self, case):
        return self.lines[case].split()

    def test_separated_samples_are_significant_with_exact_p(self):
        c = self.cells("decode/json/ints/200")
        self.assertIn(f"{2 / 924:.3g}", c)  # 0.00216
        self.assertEqual(c[-1], "slower")
        # medians 12.5 us and 22.5 us: +80.0%
        self.assertIn("+80.0%", c)

    def test_one_swap_gives_the_next_exact_p(self):
        c = self.cells("decode/soap/ints/200")
        # B = 14.5 16..20 against A = 10..15: one pair out of order (U = 1).
        self.assertIn(f"{4 / 924:.3g}", c)  # 0.00433
        self.assertEqual(c[-1], "slower")
        line = self.lines["decode/xml/ints/200"]
        # interleaved samples (U = 15 of 36): far from significant
        self.assertIn("no significant change", line)

    def test_round_trips_use_each_repetitions_median_call(self):
        c = self.cells("rtt/beast/json/ping/same")
        # p50: A 22.5 us, B 12.5 us, separated: faster, though real_time says otherwise.
        self.assertEqual(c[-1], "faster")
        self.assertIn(f"{2 / 924:.3g}", c)
        self.assertIn("22.5", c)

    def test_too_few_repetitions_are_not_tested(self):
        # 3 and 3: the smallest possible p is 2/20 = 0.1, never below 0.05.
        self.assertIn("n too small", self.lines["encode/json/ints/200"])

    def test_cases_in_one_file_or_failed_keep_a_row(self):
        self.assertIn("only in A", self.lines["decode/json/ints/400"])
        self.assertIn("only in B", self.lines["decode/json/ints/800"])

    def test_contexts_head_the_output(self):
        self.assertIn("commit aaaa", self.out)
        self.assertIn("commit bbbb", self.out)


if __name__ == "__main__":
    unittest.main()
