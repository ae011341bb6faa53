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
ROOT = os.path.join(HERE, "..", "..")
SCRIPT = os.path.join(ROOT, "scripts", "experiments.py")
FIXTURE = os.path.join(HERE, "..", "data", "experiments")
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


def claim_cells(section, claim_id):
    """The claim's row in a section's claims table, by column name."""
    rows = [line for line in section.splitlines() if line.startswith(f"| {claim_id} |")]
    assert len(rows) == 1, (claim_id, section)
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", rows[0])[1:-1]]
    return dict(zip(experiments.CLAIM_HEADER, cells))


def claim_verdict(section, claim_id):
    """(verdict by the library stacks, the figures it used)."""
    cells = claim_cells(section, claim_id)
    return cells["library stacks"], cells["figures"]


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
        # Natively REST-XML answers ping faster than SOAP and XML-RPC, on
        # the libraries' stacks and on the common transport alike.
        cells = claim_cells(self.by["E1"], "E1-a")
        self.assertEqual(cells["library stacks"], "does not hold")
        self.assertEqual(cells["common transport"], "does not hold")
        self.assertTrue(cells["whose effect"].startswith("protocol: both ways agree"), cells)
        self.assertIn("(beast/xml/ping / gsoap/soap/ping) = ", cells["figures"])
        self.assertIn("common: (beast/xml/ping / beast/soap/ping) = ", cells["figures"])
        # Byte counts: MTOM's message-b send is 0.755 of SOAP's.
        cells = claim_cells(self.by["E4"], "E4-a")
        self.assertEqual(cells["library stacks"], "holds")
        self.assertRegex(cells["figures"], r"request_bytes\) = 0\.7\d")
        self.assertEqual(cells["whose effect"], "protocol (one stack, gsoap)")
        # The headline repeats each verdict.
        self.assertRegex(self.text, r"\| E1-a \| table \| does not hold \| does not hold \| "
                                    r"(?:[^|]+ \| ){2}protocol: both ways agree")

    def test_missing_experiments_say_why(self):
        by = sections(report(["ping.json"]))
        for key, run in (("E7", "e7"), ("E8", "e8"), ("E9", "e9")):
            self.assertIn(f"**Not run here:** run `{run}` absent", by[key])
            self.assertNotIn("| ours", by[key])
            self.assertNotIn("| payload", by[key])
            verdict, _ = claim_verdict(by[key], f"{key}-a")
            self.assertEqual(verdict, f"not measurable here: run `{run}` absent ({run}.json)")

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
        # Each cell: the median over its repetitions of their means,
        # computed here from the JSON.
        runs = [r for r in self.load_runs("e7.json") if r["experiment"] == "E7"]
        cells = {}
        for r in runs:
            cells.setdefault((r["shape"], r["column"], r["target"].split()[0]), []).append(r)
        self.assertEqual(len(cells), 12)
        for (shape, column, stack), reps in cells.items():
            mean = statistics.median(r["latency_ms"]["mean"] for r in reps)
            line = [x for x in e7.splitlines() if x.startswith(f"| {shape} |")
                    and f"| {stack} |" in x and (("w/" in x) == (column == "SOAP+REST"))]
            self.assertEqual(len(line), 1, (shape, column, stack))
            self.assertIn(f"| {experiments.experiment_tables.fmt_num(mean)} ", line[0])
            self.assertIn(f"{len(reps)} repetitions", line[0])
        self.assertIn("Between protocols", e7)
        for claim in ("E7-a", "E7-b", "E7-c"):
            cells_ = claim_cells(e7, claim)
            self.assertRegex(cells_["library stacks"], r"^(holds|does not hold|inconclusive)")
            self.assertIn("separate server process", cells_["interval"] + cells_["library stacks"]
                          + experiments.claims_mod.INTERVALS["e7"])

    def test_e8_has_a_row_per_protocol_and_size_beside_the_papers_ranges(self):
        e8 = self.by["E8"]
        runs = [r for r in self.load_runs("e8.json") if r["experiment"] == "E8"]
        by = {}
        for r in runs:
            by.setdefault((r["target"].split()[0], r["size"]), []).append(r)
        self.assertEqual(len(by), 16)  # 4 protocols x 4 sizes
        for (stack, size), reps in by.items():
            max_users = ", ".join((">=" if r["max_users_at_bound"] else "") + str(r["max_users"])
                                  for r in reps)
            row = [line for line in e8.splitlines() if line.startswith(f"| {stack} | {size} |")]
            self.assertEqual(len(row), 1, (stack, size))
            self.assertIn(f"| {len(reps)} |", row[0])
            self.assertIn(f"| {max_users} |", row[0])
            self.assertIn(f"| {sum(r['n'] for r in reps):,} ok", row[0])
            if stack == "gsoap/soap":
                self.assertIn("| 6-11 |", row[0])
                self.assertIn("| 9-18 |", row[0])
                self.assertIn("| 50 |", row[0])
            if stack == "beast/json":
                self.assertIn("| 1-3 |", row[0])
                self.assertIn("| 68 |", row[0])
        for claim in ("E8-a", "E8-b", "E8-c", "E8-d"):
            verdict = claim_cells(e8, claim)["library stacks"]
            if all(len(reps) == 1 for reps in by.values()):
                # One search per cell: nothing to make an interval of.
                self.assertRegex(verdict, r"^inconclusive: .*one search")
            else:
                self.assertRegex(verdict, r"^(holds|does not hold|inconclusive)")

    def grpc_report(self, with_grpc=True):
        """E7 and E8 of the fixture's runs plus, if asked, gRPC runs made
        from its beast/json ones (E7 means halved to tell them apart)."""
        runs = {}
        for name in ("e7", "e8"):
            with open(os.path.join(FIXTURE, f"{name}.json")) as f:
                runs[name] = json.load(f)
        e7, e8 = runs["e7"], runs["e8"]
        grpc7, grpc8 = [], []
        for r in e7["runs"]:
            if r.get("column") == "REST":
                g = json.loads(json.dumps(r))
                g.update(column="gRPC", target=r["target"].replace("beast/json", "grpc/protobuf"))
                g["latency_ms"]["mean"] = r["latency_ms"]["mean"] / 2
                grpc7.append(g)
        for r in e8["runs"]:
            if r["target"].startswith("beast/json "):
                g = json.loads(json.dumps(r))
                g["target"] = r["target"].replace("beast/json", "grpc/protobuf")
                grpc8.append(g)
        if with_grpc:
            e7["runs"] += grpc7
            e8["runs"] += grpc8
        with tempfile.TemporaryDirectory() as d:
            for name, data in (("e7", e7), ("e8", e8)):
                with open(os.path.join(d, f"{name}.json"), "w") as f:
                    json.dump(data, f)
            experiments.write_report(d)
            with open(os.path.join(d, "report.md")) as f:
                return sections(f.read()), grpc7, grpc8

    @staticmethod
    def grpc_rows_missing(by, grpc7, grpc8):
        """What the E7 and E8 sections lack of the gRPC runs: per shape a row
        with the median of its means and no paper figures, the ratio to REST,
        and per size an E8 row with its calls."""
        missing = []
        for shape in {r["shape"] for r in grpc7}:
            mean = statistics.median(r["latency_ms"]["mean"] for r in grpc7 if r["shape"] == shape)
            want = (f"| {shape} | gRPC (ours) | grpc/protobuf | - | - | - | - | "
                    f"{experiments.experiment_tables.fmt_num(mean)} ")
            if not any(line.startswith(want) for line in by["E7"].splitlines()):
                missing.append(want)
            if f"| {shape} | gRPC (ours) / REST | - | 0.5 |" not in by["E7"]:
                missing.append(f"{shape} ratio")
        for size in {r["size"] for r in grpc8}:
            calls = sum(r["n"] for r in grpc8 if r["size"] == size)
            if not any(line.startswith(f"| grpc/protobuf | {size} |") and f"| {calls:,} ok" in line
                       for line in by["E8"].splitlines()):
                missing.append(f"E8 {size}")
        return missing

    def test_grpc_rows_in_e7_and_e8_beside_the_papers_columns(self):
        by, grpc7, grpc8 = self.grpc_report()
        self.assertTrue(grpc7 and grpc8)
        self.assertEqual(self.grpc_rows_missing(by, grpc7, grpc8), [])
        # The paper's rows are as before, and claims still decided.
        self.assertIn("| 10x4 | REST w/ SOAP | beast/json |", by["E7"])
        self.assertRegex(claim_cells(by["E7"], "E7-a")["library stacks"],
                         r"^(holds|does not hold|inconclusive)")
        # Without gRPC runs the row says so.
        by, _, _ = self.grpc_report(with_grpc=False)
        self.assertIn("| 10x4 | gRPC (ours) | grpc/protobuf | - | - | - | - | - |", by["E7"])
        self.assertIn("not in the run", by["E7"])
        # The check sees the rows go when the tables leave gRPC out.
        tables = experiments.experiment_tables
        e7_columns, e8_stacks = tables.E7_COLUMNS, tables.E8_STACKS
        tables.E7_COLUMNS = [c for c in e7_columns if c[2] != "grpc/protobuf"]
        tables.E8_STACKS = [s for s in e8_stacks if s[1] != "grpc/protobuf"]
        try:
            by, grpc7, grpc8 = self.grpc_report()
        finally:
            tables.E7_COLUMNS, tables.E8_STACKS = e7_columns, e8_stacks
        self.assertNotEqual(self.grpc_rows_missing(by, grpc7, grpc8), [])

    def test_e9_says_its_link_and_evaluates_its_claims(self):
        e9 = self.by["E9"]
        with open(os.path.join(FIXTURE, "e9.link.txt")) as f:
            self.assertIn(f.read().strip(), e9)
        for payload in ("binary/1MiB", "binary/32MiB", "gml/10", "gml/10000"):
            self.assertIn(f"| {payload} |", e9)
        self.assertIn("| almost 1500ms' |".replace("almost", "'almost"), e9)
        for claim in ("E9-a", "E9-b"):
            verdict, evidence = claim_verdict(e9, claim)
            self.assertRegex(verdict, r"^(holds|does not hold|inconclusive)")
            self.assertRegex(evidence, r"(encode|upload)/")

    def test_the_method_names_the_link_the_run_used(self):
        self.assertIn("- link: `loopback`", self.by["E9"])
        # The fixture's binary was built from another commit than the
        # checkout it ran in: the method says so.
        self.assertIn("- WARNING: `the binary was built from ", self.by["E1"])
        self.assertIn("- checkout when run: `", self.by["E1"])
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
        self.assertEqual(verdict, "not measurable here: run `messaging` absent (messaging.json)")


class ClaimsTableTest(unittest.TestCase):
    """Every claim with its quote, kind, both verdicts and interval; a broken
    rule or a partly failed case marked in place, the report going on."""

    @classmethod
    def setUpClass(cls):
        with open(experiments.CLAIMS, newline="") as f:
            cls.claims = list(csv.DictReader(f))

    def test_the_file_has_every_column_and_a_kind_per_claim(self):
        self.assertGreaterEqual(len(self.claims), 40)
        self.assertEqual(len({c["id"] for c in self.claims}), len(self.claims))
        for c in self.claims:
            self.assertEqual(list(c), experiments.CLAIM_COLUMNS, c["id"])
            self.assertIn(c["kind"], experiments.CLAIM_KINDS, c["id"])
            self.assertIn('"', c["quote"], c["id"])  # the paper's words, quoted
            self.assertRegex(c["strength"], r"^(|weaker: .+|stronger: .+)$", c["id"])
            if c["rule"]:
                compile(c["rule"], c["id"], "eval")

    @unittest.skipUnless(os.environ.get("WSBENCH_PAPERS"),
                         "WSBENCH_PAPERS (the papers' texts) not set")
    def test_every_quote_is_in_its_paper(self):
        folder = os.environ["WSBENCH_PAPERS"]
        texts = {}
        for name in os.listdir(folder):
            with open(os.path.join(folder, name)) as f:
                texts[name] = " ".join(f.read().split())
        for c in self.claims:
            text = next(t for n, t in texts.items() if n.startswith(c["paper"]))
            for quoted in re.findall(r'"([^"]+)"', c["quote"]):
                self.assertIn(" ".join(quoted.split()), text, c["id"])

    def test_every_claim_has_its_quote_kind_verdicts_and_interval(self):
        text = report(["ping.json", "parse.json", "query.json", "messaging.json", "e7.json",
                       "e8.json", "e9.json", "e9.link.txt"])
        by = sections(text)
        for c in self.claims:
            cells = claim_cells(by[c["experiment"]], c["id"])
            self.assertIn(c["quote"].split('"')[1][:40], cells["the paper says"], c["id"])
            self.assertEqual(cells["kind"], c["kind"])
            self.assertRegex(cells["library stacks"],
                             r"^(holds|does not hold|inconclusive|not measurable here)", c["id"])
            self.assertTrue(cells["common transport"], c["id"])
            self.assertTrue(cells["XML base64 unwrapped"], c["id"])
            self.assertTrue(cells["JSON parsed by simdjson"], c["id"])
            self.assertTrue(cells["whose effect"], c["id"])
            if c["rule"] and cells["library stacks"].startswith(("holds", "does not")):
                self.assertNotEqual(cells["interval"], "-", c["id"])
        # A comparison across stacks is decided on the common transport too.
        e1 = claim_cells(by["E1"], "E1-a")
        self.assertRegex(e1["common transport"], r"^(holds|does not hold|inconclusive)")

    def test_a_broken_rule_is_marked_and_the_report_goes_on(self):
        with tempfile.TemporaryDirectory() as d:
            broken = os.path.join(d, "claims.csv")
            rows = [dict(c) for c in self.claims]
            rows[0]["rule"] = "faster(rtt('beast/json', 'ping')) / 0"
            with open(broken, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=experiments.CLAIM_COLUMNS)
                w.writeheader()
                w.writerows(rows)
            shutil.copy(os.path.join(FIXTURE, "ping.json"), d)
            old, experiments.CLAIMS = experiments.CLAIMS, broken
            try:
                experiments.write_report(d)
            finally:
                experiments.CLAIMS = old
            with open(os.path.join(d, "report.md")) as f:
                by = sections(f.read())
        self.assertRegex(claim_cells(by[rows[0]["experiment"]], rows[0]["id"])["library stacks"],
                         r"^error: TypeError")
        self.assertEqual(sorted(by), [f"E{i}" for i in range(1, 10)])

    def test_partly_failed_cases_say_so_in_the_table_and_the_verdict(self):
        with open(os.path.join(FIXTURE, "ping.json")) as f:
            run = json.load(f)
        soap = [r for r in run["benchmarks"] if r["run_name"].startswith("rtt/gsoap/soap/ping/")
                and r.get("run_type") != "aggregate"]
        for r in soap[:2]:
            r.update(error_occurred=True, error_message="verification failed: injected")
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "ping.json"), "w") as f:
                json.dump(run, f)
            experiments.write_report(d)
            with open(os.path.join(d, "report.md")) as f:
                e1 = sections(f.read())["E1"]
        why = f"2 of {len(soap)} repetitions failed: verification failed: injected"
        self.assertRegex(e1, r"\| SOAP \| gsoap/soap \|[^\n]*" + re.escape(why))
        self.assertIn("on the repetitions that succeeded: gsoap/soap/ping: " + why,
                      claim_cells(e1, "E1-a")["library stacks"])


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


class Progress(unittest.TestCase):
    def test_long_runs_progress_lines_are_shown(self):
        # bench's minute line, wsbench-load's cells, scripts/e9's cases.
        for line in ("bench: running, 3m00s elapsed (repetitions are interleaved: ...)",
                     "wsbench-load: E7 [3/72] ...", "e9: [2/10] ..."):
            self.assertTrue(experiments.RUN_PROGRESS.match(line), line)
        self.assertFalse(experiments.RUN_PROGRESS.match("rtt/beast/json/ping/same 17 us"))


if __name__ == "__main__":
    unittest.main()
