#!/usr/bin/env python3
"""scripts/experiments.py report on result files of a short real run
(tests/data/experiments: --quick on a loaded 2-vCPU machine, fields the
report does not read removed; e7, e8 and e9.json from `run E7 E8 E9
--quick`). Checks that every experiment has its
section, that the papers' values come from docs/papers/figures.csv, that
claims render as holding, failing and unmeasurable, and that a missing run
or experiment is shown with its reason instead of numbers; and that E1, E3
and E5 show the managed runtimes' rows (tests/data/experiments/runtimes: a
`scripts/runtimes all --quick` run, only ping, get/ints/3200 and
send/message-a/100 kept) or say which command produces them."""
import csv
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
SCRIPT = os.path.join(ROOT, "scripts", "experiments.py")
FIXTURE = os.path.join(HERE, "data", "experiments")
FIGURES = os.path.join(ROOT, "docs", "papers", "figures.csv")

spec = importlib.util.spec_from_file_location("experiments", SCRIPT)
experiments = importlib.util.module_from_spec(spec)
spec.loader.exec_module(experiments)


def report(files, runtimes=False):
    """The report written over a copy of the fixture's `files` (and its runtimes folder)."""
    with tempfile.TemporaryDirectory() as d:
        for f in files:
            shutil.copy(os.path.join(FIXTURE, f), d)
        if runtimes:
            shutil.copytree(os.path.join(FIXTURE, "runtimes"), os.path.join(d, "runtimes"))
        subprocess.run([sys.executable, SCRIPT, "report", d], check=True, capture_output=True)
        with open(os.path.join(d, "report.md")) as f:
            return f.read()


def sections(text):
    parts = re.split(r"^## (E\d): ", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def claim_verdict(section, claim_id):
    rows = [line for line in section.splitlines() if line.startswith(f"| {claim_id} |")]
    assert len(rows) == 1, section
    return rows[0].split(" | ")[3], rows[0].split(" | ")[4]


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.text = report(["ping.json", "parse.json", "query.json", "messaging.json", "e7.json",
                           "e8.json", "e9.json", "e9.link.txt"])
        cls.by = sections(cls.text)
        with open(FIGURES, newline="") as f:
            cls.figures = list(csv.DictReader(f))

    def test_every_experiment_has_a_section(self):
        self.assertEqual(sorted(self.by), [f"E{i}" for i in range(1, 10)])

    def test_every_experiment_has_a_plot_or_says_why_not(self):
        # A PNG where matplotlib is importable, else the reason, in each section.
        for key, section in self.by.items():
            self.assertRegex(section, r"!\[.*\]\(e\d[^)]*\.png\)|_no plot: ", key)

    def test_paper_values_come_from_the_data_file(self):
        for row in self.figures:
            value = float(row["value"])
            if row["experiment"] in ("E1", "E2", "E3"):
                shown = f"| {value * 1e3:.4g} |"  # seconds in the file, ms in the report
            elif row["experiment"] == "E4":
                shown = f"| {value:,.0f} |"
            else:
                continue
            self.assertIn(shown, self.by[row["experiment"]], row)

    def test_a_changed_paper_value_changes_the_report(self):
        # The report reads the file: no paper number is carried in code.
        with tempfile.TemporaryDirectory() as d:
            figures = os.path.join(d, "figures.csv")
            with open(FIGURES) as src, open(figures, "w") as dst:
                dst.write(src.read().replace("0.0554907917976", "0.0123"))
            old, experiments.FIGURES = experiments.FIGURES, figures
            try:
                shutil.copy(os.path.join(FIXTURE, "ping.json"), d)
                experiments.write_report(d)
                with open(os.path.join(d, "report.md")) as f:
                    e1 = sections(f.read())["E1"]
            finally:
                experiments.FIGURES = old
        self.assertIn("| SOAP | gsoap/soap | 12.3 |", e1)

    def test_our_medians_match_the_raw_rows(self):
        # Median over repetitions of p50_us, computed here from the JSON directly.
        with open(os.path.join(FIXTURE, "ping.json")) as f:
            rows = json.load(f)["benchmarks"]
        p50 = [r["p50_us"] for r in rows if r["run_name"].startswith("rtt/gsoap/soap/ping/")]
        self.assertEqual(len(p50), 6)
        self.assertIn(f"| SOAP | gsoap/soap | 55.49 | {statistics.median(p50) / 1e3:.4g} |",
                      self.by["E1"])

    def test_claims_that_hold_and_that_do_not(self):
        # Natively, beast/json answers ping about 3x faster than gSOAP and
        # 7x faster than xmlrpc-c: the paper's E1 ordering does not hold.
        verdict, evidence = claim_verdict(self.by["E1"], "E1-a")
        self.assertEqual(verdict, "does not hold")
        self.assertIn("rtt/beast/json/ping/same", evidence)
        # Byte counts are exact: MTOM's message-b send is 0.75 of SOAP's.
        verdict, evidence = claim_verdict(self.by["E4"], "E4-a")
        self.assertEqual(verdict, "holds")
        self.assertRegex(evidence, r"ratio 0\.7\d")
        # The headline repeats each verdict.
        self.assertRegex(self.text, r"\| E1-a \| [^|]+ \| does not hold \|")

    def test_missing_experiments_say_why(self):
        by = sections(report(["ping.json"]))
        for key, run in (("E7", "e7"), ("E8", "e8"), ("E9", "e9")):
            self.assertIn(f"**Not run here:** run `{run}` absent", by[key])
            self.assertNotIn("| ours", by[key])
            self.assertNotIn("| payload", by[key])
            verdict, _ = claim_verdict(by[key], f"{key}-a")
            self.assertEqual(verdict, "not measurable here")

    def load_runs(self, name):
        with open(os.path.join(FIXTURE, name)) as f:
            return json.load(f)["runs"]

    def test_e7_is_laid_out_like_the_papers_tables(self):
        e7 = self.by["E7"]
        for row in self.figures:
            if row["experiment"] != "E7" or row["statistic"] != "mean":
                continue
            alone = row["case"].endswith("alone")
            label = row["protocol"] if alone else \
                {"REST": "REST w/ SOAP", "SOAP": "SOAP w/ REST"}[row["protocol"]]
            self.assertIn(f"| {row['param']} | {label} | ", e7)
            self.assertIn(f"| {float(row['value']):,.0f} |", e7, row)
        # Our means are the runs' own: every cell of the fixture appears.
        runs = [r for r in self.load_runs("e7.json") if r["experiment"] == "E7"]
        self.assertEqual(len(runs), 12)
        for r in runs:
            self.assertIn(f"| {experiments.fmt_num(r['latency_ms']['mean'])} |", e7, r["target"])
        self.assertIn("Between protocols", e7)
        verdict, evidence = claim_verdict(e7, "E7-a")
        self.assertIn(verdict, ("holds", "does not hold", "inconclusive"))
        self.assertIn("10x4: REST/SOAP", evidence)
        verdict, evidence = claim_verdict(e7, "E7-b")
        self.assertRegex(evidence, r"REST faster in \d of 6 cells")

    def test_e8_has_a_row_per_protocol_and_size_beside_the_papers_ranges(self):
        e8 = self.by["E8"]
        runs = [r for r in self.load_runs("e8.json") if r["experiment"] == "E8"]
        self.assertEqual(len(runs), 16)  # 4 protocols x 4 sizes
        for r in runs:
            stack = r["target"].split()[0]
            max_users = (">=" if r["max_users_at_bound"] else "") + str(r["max_users"])
            row = [line for line in e8.splitlines() if line.startswith(f"| {stack} | {r['size']} |")]
            self.assertEqual(len(row), 1, (stack, r["size"]))
            self.assertIn(f"| {max_users} |", row[0])
            self.assertIn(f"| {r['n']:,} ok, ", row[0])
            if stack == "gsoap/soap":
                self.assertIn("| 6-11 |", row[0])
                self.assertIn("| 9-18 |", row[0])
                self.assertIn("| 50 |", row[0])
            if stack == "beast/json":
                self.assertIn("| 1-3 |", row[0])
                self.assertIn("| 68 |", row[0])
        verdict, evidence = claim_verdict(e8, "E8-a")
        self.assertIn(verdict, ("holds", "does not hold"))
        self.assertIn("x20 rss_mb: gsoap/soap", evidence)
        # CPU by the server's time per call: a closed loop saturates every server.
        for r in runs:
            if r["target"].startswith("gsoap/soap ") and r["size"] == "x1":
                self.assertIn(f"x1 cpu_ms_per_request: gsoap/soap "
                              f"{r['server']['cpu_ms_per_request']:.3g}", evidence)
        verdict, evidence = claim_verdict(e8, "E8-b")
        self.assertIn("beast/json", evidence)

    def test_e9_says_its_link_and_evaluates_its_claims(self):
        e9 = self.by["E9"]
        with open(os.path.join(FIXTURE, "e9.link.txt")) as f:
            self.assertIn(f.read().strip(), e9)
        for payload in ("binary/1MiB", "binary/32MiB", "gml/10", "gml/10000"):
            self.assertIn(f"| {payload} |", e9)
        self.assertIn("| almost 1500ms' |".replace("almost", "'almost"), e9)
        for claim in ("E9-a", "E9-b"):
            verdict, evidence = claim_verdict(e9, claim)
            self.assertIn(verdict, ("holds", "does not hold", "inconclusive (CI95s overlap)"))
            self.assertRegex(evidence, r"(encode|rtt)/")

    def test_the_method_names_the_link_the_run_used(self):
        self.assertIn("- link: `loopback`", self.by["E9"])
        # The same run as if made over lan100: the method says so.
        with open(os.path.join(FIXTURE, "e9.json")) as f:
            run = json.load(f)
        run["context"]["link"] = "lan100"
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "e9.json"), "w") as f:
                json.dump(run, f)
            subprocess.run([sys.executable, SCRIPT, "report", d], check=True,
                           capture_output=True)
            with open(os.path.join(d, "report.md")) as f:
                e9 = sections(f.read())["E9"]
        self.assertIn("- link: `lan100`", e9)
        self.assertNotIn("- link: `loopback`", e9)

    def test_a_missing_run_is_reported_not_invented(self):
        by = sections(report(["ping.json"]))
        self.assertIn("run `messaging` absent", by["E4"])
        self.assertNotIn("ours bytes", by["E4"])
        verdict, evidence = claim_verdict(by["E4"], "E4-a")
        self.assertEqual(verdict, "not measurable here")


class RuntimeRowsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.by = sections(report(["ping.json", "query.json", "messaging.json"], runtimes=True))

    def test_runtime_rows_and_shares_in_e1_e3_e5(self):
        with open(os.path.join(FIXTURE, "runtimes", "native.json")) as f:
            native = [r["p50_us"] for r in json.load(f)["benchmarks"]
                      if r["name"].startswith("rtt/beast/json/ping/same")]
        with open(os.path.join(FIXTURE, "runtimes", "runtime-python.json")) as f:
            managed = [r["p50_us"] for r in json.load(f)["benchmarks"]
                       if r["name"] == "rtt/beast/python-json/ping/steady"]
        share, lo, hi = experiments.runtime_share.bootstrap_share(native, managed)
        self.assertIn(f"| python-json | {statistics.median(managed):.4g} [", self.by["E1"])
        self.assertIn(f"| {share:.3f} [{lo:.3f}-{hi:.3f}] |", self.by["E1"])
        for key, start in (("E3", "| get/ints/3200 | gsoap/soap |"),
                           ("E5", "| send/message-a/100 | xmlrpc-c/xmlrpc |")):
            self.assertRegex(self.by[key], re.escape(start) + r" [^|]+ \| python-\w+ \| [0-9,.]+ \[")
        for key in ("E1", "E3", "E5"):
            self.assertIn("| php | - | - | - | - | not available: runtimes/php/run does not exist",
                          self.by[key])
        self.assertNotIn("Managed runtimes", self.by["E2"])

    def test_without_runtimes_the_sections_say_how(self):
        by = sections(report(["ping.json"]))
        for key in ("E1", "E3", "E5"):
            self.assertIn("`scripts/runtimes python,php,java`", by[key])
            self.assertNotIn("python-json", by[key])


class Stat:
    def __init__(self, median, lo, hi):
        self.median, self.ci, self.n = median, (lo, hi), 6


class FakeResults:
    def __init__(self, stats):
        self.stats = stats

    def stat(self, name, key=None):
        return self.stats.get(name)

    def reason(self, name):
        return "not in the run"


class ClaimRulesTest(unittest.TestCase):
    def verdict(self, rule, **stats):
        return experiments.ClaimContext(FakeResults(stats)).evaluate(rule)[0]

    def test_faster_needs_the_intervals_to_decide(self):
        self.assertEqual(self.verdict("faster('a', 'b')", a=Stat(10, 9, 11), b=Stat(20, 18, 22)),
                         "holds")
        self.assertEqual(self.verdict("faster('a', 'b')", a=Stat(20, 18, 22), b=Stat(10, 9, 11)),
                         "does not hold")
        self.assertTrue(self.verdict("faster('a', 'b')", a=Stat(10, 9, 12),
                                     b=Stat(11, 10, 13)).startswith("inconclusive"))
        # by=2: b at 18-22 is not twice a's 9-11 with confidence.
        self.assertTrue(self.verdict("faster('a', 'b', by=2)", a=Stat(10, 9, 11),
                                     b=Stat(20, 18, 22)).startswith("inconclusive"))

    def test_all_of_and_not_are_three_valued(self):
        a, b = Stat(10, 9, 11), Stat(20, 18, 22)
        self.assertEqual(self.verdict("all_of(faster('a', 'b'), not_(faster('b', 'a')))", a=a,
                                      b=b), "holds")
        self.assertEqual(self.verdict("all_of(faster('a', 'b'), faster('b', 'a'))", a=a, b=b),
                         "does not hold")
        self.assertTrue(self.verdict("not_(faster('a', 'c'))", a=a, c=Stat(10.5, 9.5, 12))
                        .startswith("inconclusive"))

    def test_a_missing_case_is_not_measurable(self):
        self.assertEqual(self.verdict("faster('a', 'b')", a=Stat(10, 9, 11)),
                         "not measurable here")


def e8_run(max_users, at_bound):
    return {"experiment": "E8", "size": "x1", "max_users": max_users,
            "max_users_at_bound": at_bound, "steps": []}


class FakeLoadResults:
    def __init__(self, rest, soap):
        self.by = {"beast/json": rest, "gsoap/soap": soap}

    def e8(self, stack, size):
        return self.by.get(stack)

    def e7(self, column, stack, shape):
        return self.by.get(stack)


class LoadClaimRulesTest(unittest.TestCase):
    def verdict(self, rule, rest, soap):
        return experiments.LoadClaimContext(FakeLoadResults(rest, soap)).evaluate(rule)

    def test_more_users_served_and_the_bound(self):
        rule = "e8_serves_more('beast/json', 'gsoap/soap')"
        self.assertEqual(self.verdict(rule, e8_run(68, False), e8_run(50, False))[0], "holds")
        self.assertEqual(self.verdict(rule, e8_run(40, False), e8_run(50, False))[0],
                         "does not hold")
        self.assertEqual(self.verdict(rule, e8_run(40, False), e8_run(128, True))[0],
                         "does not hold")
        verdict, evidence = self.verdict(rule, e8_run(128, True), e8_run(128, True))
        self.assertEqual(verdict, "inconclusive")
        self.assertIn("both served the search's bound", evidence)
        self.assertEqual(self.verdict(rule, None, e8_run(50, False))[0], "not measurable here")

    def test_e7_ratio_uses_the_means_intervals(self):
        def cell(mean, sd, n=400):
            return {"latency_ms": {"mean": mean, "stddev": sd}, "n": n}
        rule = "e7_ratio('10x4', 0.97, 1.0)"
        self.assertEqual(self.verdict(rule, cell(99, 1), cell(100, 1))[0], "holds")
        self.assertEqual(self.verdict(rule, cell(80, 1), cell(100, 1))[0], "does not hold")
        self.assertEqual(self.verdict(rule, cell(99, 30), cell(100, 30))[0], "inconclusive")


if __name__ == "__main__":
    unittest.main()
