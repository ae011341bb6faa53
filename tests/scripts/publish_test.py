#!/usr/bin/env python3
"""scripts/glance.py, scripts/publish_machine.py and scripts/publish.py on
known data (tests/data/experiments: a quick run's result files).

The glance's figures are recomputed here from the fixture's rows without
scripts/summarize.py (median, order-statistic CI95, CV, bytes), so a
glance number that drifts from the data fails; a test feeds the glance a
fixture with one case changed by 1% and checks that this comparison
notices. The claims' verdict counts are checked against the report's own
verdict table, the README block rewrite against a README with and without
its markers, the timing file and vmstat parsers against hand-made files,
and a whole folder is assembled from the fixture."""
import copy
import glob
import gzip
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FIXTURE = os.path.join(ROOT, "tests", "data", "experiments")
BENCH = os.path.join(ROOT, "tests", "data", "summarize_fixture.json")


def reexec_with_debian_python(module):
    """Debian's python3-markdown is in /usr/bin/python3's path, which
    another python3 first on PATH (pyenv, a venv) may not search."""
    try:
        __import__(module)
    except ImportError:
        debian = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(debian) \
                and os.path.exists(debian) and not os.environ.get("WSBENCH_REEXEC"):
            os.environ["WSBENCH_REEXEC"] = "1"
            os.execv(debian, [debian] + sys.argv)


reexec_with_debian_python("markdown")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import glance  # noqa: E402
import publish_machine as pm  # noqa: E402


# ---- the fixture's figures, computed without scripts/summarize.py ----

def case_of(row):
    name = re.sub(r"/iterations:\d+", "", row.get("run_name") or row["name"])
    return name.removesuffix("/manual_time")


def ci_ranks(n):
    """Widest-needed symmetric order statistics covering the median at 95%."""
    best = None
    for k in range(1, n // 2 + 1):
        cover = 1 - 2 * sum(math.comb(n, j) for j in range(k)) / 2 ** n
        if cover >= 0.95:
            best = (k, n - k + 1)
    return best


def expected_ping(folder):
    """{stack: figures} of ping.json's rtt/<stack>/ping/same rows."""
    with open(os.path.join(folder, "ping.json")) as f:
        rows = json.load(f)["benchmarks"]
    by_case = {}
    for r in rows:
        if r.get("run_type") == "iteration" and not r.get("error_occurred"):
            by_case.setdefault(case_of(r), []).append(r)
    out = {}
    for name, reps in by_case.items():
        p50 = sorted(r["p50_us"] for r in reps)
        ranks = ci_ranks(len(p50))
        out[name[len("rtt/"):-len("/ping/same")]] = {
            "median": statistics.median(p50),
            "ci": (p50[ranks[0] - 1], p50[ranks[1] - 1]) if ranks else None,
            "cv": 100 * statistics.stdev(p50) / statistics.fmean(p50),
            "n": f"{len(reps)}x{reps[0]['iterations']}",
            "request": statistics.median(r["request_bytes"] for r in reps),
            "response": statistics.median(r["response_bytes"] for r in reps),
            "floor": statistics.median(r["floor_p50_us"] for r in reps)
            if all("floor_p50_us" in r for r in reps) else None,
            "ratio": statistics.median(r["ratio_p50"] for r in reps)
            if all("ratio_p50" in r for r in reps) else None}
    return out


def table_rows(markdown, first_header):
    """The rows (lists of cells) of the table whose header starts so."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


def close(cell, value, rel=6e-4):
    """A cell printed to 4 significant digits against the exact value."""
    return abs(float(cell.replace(",", "")) - value) <= rel * abs(value)


def check_glance(block, expected):
    """Raises AssertionError at the first glance figure that is not the data's."""
    rows = table_rows(block, "protocol")
    assert len(rows) == len(expected), f"{len(rows)} rows, the data has {len(expected)}"
    medians = []
    for row in rows:
        stack = row[1].split()[0].strip("`")
        e = expected[stack]
        median, ci, cv, n, floor, ratio, wire = row[2:9]
        assert close(median, e["median"]), f"{stack}: median {median}, data {e['median']}"
        lo, hi = ci.split("-")
        assert close(lo, e["ci"][0]) and close(hi, e["ci"][1]), f"{stack}: CI95 {ci}, {e['ci']}"
        assert abs(float(cv.rstrip("%!")) - e["cv"]) <= 0.051, f"{stack}: CV {cv}, {e['cv']}"
        assert n == e["n"], f"{stack}: n {n}, data {e['n']}"
        assert (floor == "-") == (e["floor"] is None), f"{stack}: floor {floor}"
        if e["floor"] is not None:
            assert close(floor, e["floor"]), f"{stack}: floor {floor}, data {e['floor']}"
            assert abs(float(ratio) - e["ratio"]) <= 0.005, f"{stack}: ratio {ratio}"
        req, resp = (float(x.replace(",", "")) for x in wire.split(" + "))
        assert (req, resp) == (e["request"], e["response"]), f"{stack}: bytes {wire}"
        medians.append(e["median"])
    assert medians == sorted(medians), "rows are not fastest first"


def fixture_copy(d):
    for path in glob.glob(os.path.join(FIXTURE, "*")):
        (shutil.copytree if os.path.isdir(path) else shutil.copy)(
            path, os.path.join(d, os.path.basename(path)))
    return d


class GlanceTest(unittest.TestCase):
    def test_ping_figures_are_the_fixtures(self):
        check_glance(glance.glance(FIXTURE, "docs/results/x"), expected_ping(FIXTURE))

    def test_a_changed_number_is_caught(self):
        """The comparison above fails when one case's data moves by 1%."""
        with tempfile.TemporaryDirectory() as d:
            fixture_copy(d)
            path = os.path.join(d, "ping.json")
            with open(path) as f:
                data = json.load(f)
            for r in data["benchmarks"]:
                if case_of(r) == "rtt/gsoap/soap/ping/same":
                    r["p50_us"] *= 1.01
            with open(path, "w") as f:
                json.dump(data, f)
            with self.assertRaisesRegex(AssertionError, "gsoap/soap: median"):
                check_glance(glance.glance(d, "x"), expected_ping(FIXTURE))

    def test_floor_ratio_and_reason(self):
        """Rows with the TCP floor of their repetition show it and the ratio;
        a failed case keeps its row with the reason."""
        with tempfile.TemporaryDirectory() as d:
            fixture_copy(d)
            path = os.path.join(d, "ping.json")
            with open(path) as f:
                data = json.load(f)
            for i, r in enumerate(data["benchmarks"]):
                r["floor_p50_us"] = 15.0 + i % 6
                r["ratio_p50"] = r["p50_us"] / r["floor_p50_us"]
            failed = copy.deepcopy(data["benchmarks"][0])
            failed.update(run_name="rtt/beast/broken/ping/same/iterations:30/manual_time",
                          error_occurred=True, error_message="round trip failed: refused")
            data["benchmarks"].append(failed)
            with open(path, "w") as f:
                json.dump(data, f)
            block = glance.glance(d, "x")
            expected = expected_ping(d)
            rows = table_rows(block, "protocol")
            self.assertIn("round trip failed: refused", rows[-1][1])
            block = "\n".join(line for line in block.splitlines() if "broken" not in line)
            check_glance(block, expected)

    def test_claim_counts_match_the_reports_verdicts(self):
        import experiments
        with tempfile.TemporaryDirectory() as d:
            fixture_copy(d)
            with open(experiments.write_report(d)) as f:
                report = f.read()
        rows = table_rows(report, "id")
        counts = glance.claim_counts(FIXTURE)
        self.assertEqual(counts["claims"], len(rows))
        for column, key in ((2, "lib"), (3, "common")):
            seen = {}
            for row in rows:
                kind = next((k for k in glance.VERDICTS if row[column].startswith(k)), None)
                if kind:
                    seen[kind] = seen.get(kind, 0) + 1
            self.assertEqual({k: v for k, v in counts[key].items() if v}, seen, key)
        # Whose effect: the protocol's, or each factor that flips the verdict.
        who = [row[-1] for row in rows]
        self.assertEqual(counts["protocol"], sum(w.startswith("protocol: both") for w in who))
        for name, n in counts["flipped"].items():
            self.assertEqual(n, sum(name in w.split(":")[0].split(", ") for w in who
                                    if not w.startswith("protocol")), name)
        table = table_rows(glance.claims_table(counts), "decided by")
        self.assertEqual(table[0][1:], [str(counts["lib"][k]) for k in glance.VERDICTS]
                         + [str(len(rows))])

    def test_flips_are_counted_per_factor(self):
        decisions = [{"lib": "holds", "common": "does not hold", "who": w} for w in (
            "protocol: both ways agree, the protocol's (common transport)",
            "stack: the HTTP stack's (common transport: does not hold)",
            "stack, json: the HTTP stack's and the JSON library's (...)",
            "xml: the XML codec's (XML base64 unwrapped: holds)",
            "protocol (one stack, beast)", "undetermined: not decided as written")]
        saved = glance.claim_decisions
        glance.claim_decisions = lambda folder: [({}, d) for d in decisions]
        try:
            counts = glance.claim_counts("unused")
        finally:
            glance.claim_decisions = saved
        self.assertEqual(counts["protocol"], 1)
        self.assertEqual(counts["flipped"], {"stack": 2, "xml": 1, "json": 1})

    def test_machine_line_and_plot(self):
        block = glance.glance(FIXTURE, "docs/results/2026-11-26-0e49f1f")
        self.assertIn("AMD EPYC, 2 vCPUs", block)
        self.assertIn("commit `0e49f1f` (**built from a modified tree**)", block)
        self.assertIn("[docs/results/2026-11-26-0e49f1f](docs/results/2026-11-26-0e49f1f/)",
                      block)
        self.assertNotIn(glance.PLOT, block)  # the fixture folder has no PNG
        with tempfile.TemporaryDirectory() as d:
            fixture_copy(d)
            open(os.path.join(d, glance.PLOT), "wb").close()
            self.assertIn(f"](x/{glance.PLOT})", glance.glance(d, "x"))


class ReadmeTest(unittest.TestCase):
    TEXT = "# wsbench\n\nintro\n\n<!-- glance:begin -->\nold table\n<!-- glance:end -->\n\nrest\n"

    def test_block_is_replaced_and_nothing_else(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "README.md")
            with open(path, "w") as f:
                f.write(self.TEXT)
            self.assertIsNone(glance.update_readme(path, "NEW"))
            with open(path) as f:
                text = f.read()
            self.assertEqual(text, self.TEXT.replace("old table", "NEW"))
            glance.update_readme(path, "NEW")
            with open(path) as f:
                self.assertEqual(f.read(), text)  # a second run changes nothing

    def test_without_markers_the_readme_is_left_alone(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "README.md")
            with open(path, "w") as f:
                f.write("# wsbench\n")
            self.assertIn("no <!-- glance:begin -->", glance.update_readme(path, "NEW"))
            with open(path) as f:
                self.assertEqual(f.read(), "# wsbench\n")


class TimingTest(unittest.TestCase):
    def parts(self, text, started=None, ended=None):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(text)
        try:
            return pm.settle(pm.read_timing(f.name), pm.parse_time(started),
                             pm.parse_time(ended))
        finally:
            os.remove(f.name)

    def test_status_lines_with_the_runs_start(self):
        parts = self.parts("experiments rc=0 secs=3600\n# a comment\nbench rc=1 secs=600\n",
                           "2026-11-26T04:53:05Z", "2026-11-26T06:03:06Z")
        self.assertEqual([p.name for p in parts], ["experiments", "bench"])
        self.assertEqual(pm.fmt_time(parts[0].ended), "2026-11-26 05:53:05 UTC")
        self.assertEqual(pm.fmt_time(parts[1].started), "2026-11-26 05:53:05 UTC")
        self.assertEqual(pm.fmt_time(parts[1].ended), "2026-11-26 06:03:05 UTC")
        self.assertEqual((parts[0].rc, parts[1].rc, parts[1].wall), (0, 1, 600))

    def test_explicit_times_and_a_time_file(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write("2026-11-26T04:53:05Z\n")
        try:
            self.assertEqual(pm.parse_time(f.name), pm.parse_time("2026-11-26T04:53:05+00:00"))
        finally:
            os.remove(f.name)
        parts = self.parts("bench started=2026-11-26T05:00:00Z ended=2026-11-26T05:10:30Z\n")
        self.assertEqual(parts[0].wall, 630)
        self.assertEqual(pm.fmt_secs(parts[0].wall), "0:10:30 (630 s)")
        with self.assertRaises(ValueError):
            self.parts("bench secs\n")
        with self.assertRaises(ValueError):
            pm.parse_time("yesterday")

    def test_run_windows_follow_the_json_files(self):
        t = pm.parse_time
        windows = pm.run_windows({"ping": t("2026-11-26T04:53:44Z"),
                                  "e7": t("2026-11-26T05:00:56Z")},
                                 {"ping": {"date": "2026-11-26T04:53:41+00:00"}, "e7": {}})
        self.assertEqual([(w.name, w.wall) for w in windows], [("run ping", 3), ("run e7", 432)])

    def test_command_lines_lose_the_checkouts_location(self):
        import publish
        self.assertEqual(publish.relative("/srv/wsbench/build/release/wsbench-load --out x"),
                         "build/release/wsbench-load --out x")
        self.assertEqual(publish.relative("/srv/wsbench/scripts/e9 --quick"), "scripts/e9 --quick")
        self.assertEqual(publish.relative("./build/release/bench '--f=^rtt/[^/]+/'"),
                         "./build/release/bench '--f=^rtt/[^/]+/'")


VMSTAT = """\
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC
 9  0      0 21111624  11220 3154368    0    0   517  3656  820 2171 67 15 17  1  0 2026-11-26 04:53:05
 2  0      0 21111624  11220 3154368    0    0     0 15282  399 2797 46  3 51  0  0 2026-11-26 04:53:15
 3  0      0 21111624  11220 3154368    0    0     0     5  335 3327 45  3 52  0  0 2026-11-26 04:53:25
procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC
 5  0      0 21111624  11220 3154368    0    0    18  2018  336 2969 90  8  2  0  1 2026-11-26 04:53:35
"""


class VmstatTest(unittest.TestCase):
    def test_samples_windows_and_the_row(self):
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write(VMSTAT)
        try:
            vm = pm.Vmstat(f.name)
        finally:
            os.remove(f.name)
        # The first line (since boot) is dropped; a repeated header is skipped.
        self.assertEqual(len(vm.samples), 3)
        window = vm.window(pm.parse_time("2026-11-26T04:53:10Z"),
                           pm.parse_time("2026-11-26T04:53:30Z"))
        self.assertEqual([s["us"] for s in window], [46, 45])
        self.assertEqual(pm.load_row("all", vm.window()), ["all", "3", "49", "98", "3", "5", "1"])


def write_count(path, cases):
    """A count.json (scripts/count's shape) giving case i 1000 * (i + 1)
    instructions; the last case is skipped, as a payload a codec does not
    apply to is."""
    results = [{"case": c, "iterations": [10, 30], "instructions_per_op": 1000 * (i + 1)}
               for i, c in enumerate(cases[:-1])]
    results.append({"case": cases[-1], "iterations": [10, 30], "skipped": "not applicable: x"})
    with open(path, "w") as f:
        json.dump({"unit": "instructions per operation", "results": results}, f)
    return {c: r.get("instructions_per_op") for c, r in zip(cases, results)}


def instruction_cells(block):
    """{stack: the glance's instructions cell}."""
    return {row[1].split()[0].strip("`"): row[9] for row in table_rows(block, "protocol")}


class ProtocolTest(unittest.TestCase):
    def test_stack_names_the_protocol(self):
        for stack, name in (("beast/json", "REST, JSON"), ("beast-tls/json", "REST, JSON over TLS"),
                            ("grpc/protobuf", "gRPC"), ("grpc-tls/protobuf", "gRPC over TLS"),
                            ("beast/protobuf", "REST, Protocol Buffers"),
                            ("gsoap-tls/soap", "SOAP over TLS"), ("xmlrpc-c/xmlrpc", "XML-RPC")):
            self.assertEqual(glance.protocol_of(stack), name, stack)


class BuildCommitsTest(unittest.TestCase):
    """Runs stamped with different commits: machine.md says whether the
    binaries' sources differ (this repository's own history)."""
    SAME = ("409a52ead90731c45672ba74d73972d4756aa64e",  # a claims.py change, then
            "f49318e52c2cd34e65946f25b78fc11757127e8a")  # scripts and tests only
    CHANGED = "d366953059cc85a8169e7275660bf3a863db7732"  # bench/ changed since

    def test_one_commit_needs_no_line(self):
        self.assertIsNone(pm.build_commits_line({"a": {"source_git_commit": self.SAME[0]}}))

    def test_commits_with_the_same_sources(self):
        line = pm.build_commits_line({"ping": {"source_git_commit": self.SAME[0]},
                                      "bench": {"source_git_commit": self.SAME[1]}})
        if line and "unknown here" in line:
            self.skipTest("no git history in this checkout")
        self.assertIn("same sources", line)

    def test_commits_whose_sources_differ_warn(self):
        line = pm.build_commits_line({"ping": {"source_git_commit": self.CHANGED},
                                      "bench": {"source_git_commit": self.SAME[0]}})
        if line and "unknown here" in line:
            self.skipTest("no git history in this checkout")
        self.assertIn("**WARNING**", line)
        self.assertIn("bench/", line)


class InstructionsTest(unittest.TestCase):
    CASES = ["rtt/beast/json/ping/same/manual_time", "rtt/gsoap/soap/ping/same/manual_time",
             "rtt/xmlrpc-c/xmlrpc/ping/same/manual_time"]

    def test_glance_shows_each_pings_count(self):
        with tempfile.TemporaryDirectory() as d:
            fixture_copy(d)
            counts = write_count(os.path.join(d, "count.json"), self.CASES)
            cells = instruction_cells(glance.glance(d, "x"))
            for case, count in counts.items():
                stack = case[len("rtt/"):-len("/ping/same/manual_time")]
                if stack in cells:
                    self.assertEqual(cells[stack], "not applicable: x" if count is None
                                     else f"{count:,}", stack)
            # A stack the count does not hold says so instead of a number.
            self.assertTrue(any(c == "not counted" for c in cells.values()), cells)

    def test_without_a_count_the_table_has_no_column(self):
        self.assertNotIn("| instructions |", glance.glance(FIXTURE, "x"))

    def test_a_changed_count_is_caught(self):
        with tempfile.TemporaryDirectory() as d:
            fixture_copy(d)
            write_count(os.path.join(d, "count.json"), self.CASES)
            before = instruction_cells(glance.glance(d, "x"))
            write_count(os.path.join(d, "count.json"), list(reversed(self.CASES[:2]))
                        + self.CASES[2:])
            self.assertNotEqual(before, instruction_cells(glance.glance(d, "x")))


class AssembleTest(unittest.TestCase):
    def test_counts_sit_beside_the_bench_times(self):
        """--from-count copies count.json and summarize's tables gain the
        instr/op column; --from-count without --from-bench is refused."""
        with tempfile.TemporaryDirectory() as d:
            count = os.path.join(d, "count.json")
            write_count(count, ["rtt/beast/json/ping/same/manual_time",
                                "encode/json/ints/200", "decode/json/ints/200"])
            out = os.path.join(d, "run")
            proc = subprocess.run(
                [sys.executable, os.path.join(ROOT, "scripts", "publish.py"),
                 "--from-experiments", FIXTURE, "--from-bench", BENCH, "--from-count", count,
                 "--out", out, "--no-readme", "--note", "count beside E9"],
                capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(os.path.join(out, "count.json")) as f:
                self.assertEqual(len(json.load(f)["results"]), 3)
            with open(os.path.join(out, "bench-summary.md")) as f:
                summary = f.read()
            self.assertIn("instr/op", summary)
            self.assertIn("--instructions count.json bench.json", summary)
            row = next(line for line in summary.splitlines() if "beast/json/ping/same" in line)
            self.assertIn("1,000", row)
            with open(os.path.join(out, "README.md")) as f:
                self.assertIn("(count.json)", f.read())
            with open(os.path.join(out, "machine.md")) as f:
                machine = f.read()
            self.assertIn("`scripts/count --default-sweep`, count.json", machine)
            self.assertIn("\n- count beside E9", machine)
            refused = subprocess.run(
                [sys.executable, os.path.join(ROOT, "scripts", "publish.py"),
                 "--from-experiments", FIXTURE, "--from-count", count, "--out", out + "2",
                 "--no-readme"], capture_output=True, text=True)
            self.assertEqual(refused.returncode, 2)
            self.assertIn("--from-count needs --from-bench", refused.stderr)


    def test_a_folder_from_the_fixture(self):
        with tempfile.TemporaryDirectory() as d:
            readme = os.path.join(d, "README.md")
            with open(readme, "w") as f:
                f.write(ReadmeTest.TEXT)
            status = os.path.join(d, "status")
            with open(status, "w") as f:
                f.write("experiments rc=0 secs=3600\nbench rc=0 secs=600\n")
            out = os.path.join(d, "docs", "results", "run")
            proc = subprocess.run(
                [sys.executable, os.path.join(ROOT, "scripts", "publish.py"),
                 "--from-experiments", FIXTURE, "--from-bench", BENCH, "--timing", status,
                 "--started", "2026-11-26T04:53:05Z", "--out", out, "--readme", readme,
                 "--gzip-above", "0.2"], capture_output=True, text=True)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn(f"output folder {out}", proc.stdout.splitlines()[0])
            for name in ("report.md", "report.html", "machine.md", "bench-summary.md",
                         "bench.json", "README.md", "ping.json", "e9.link.txt"):
                self.assertTrue(os.path.exists(os.path.join(out, name)), name)
            # messaging.json (242 kB) is above 0.2 MB: gzipped, and said so.
            self.assertFalse(os.path.exists(os.path.join(out, "messaging.json")))
            with gzip.open(os.path.join(out, "messaging.json.gz"), "rt") as f:
                self.assertIn("benchmarks", json.load(f))
            # The claims read a gzipped run as they read the plain one.
            self.assertEqual(glance.claim_counts(out), glance.claim_counts(FIXTURE))
            with open(os.path.join(out, "machine.md")) as f:
                machine = f.read()
            for text in ("## The machine", "AMD EPYC", "## Library versions", "libgsoap-dev",
                         "| experiments | `scripts/experiments all` | 2026-11-26 04:53:05 UTC | "
                         "2026-11-26 05:53:05 UTC | 1:00:00 (3600 s) | 0 |",
                         "messaging.json: 242,069 bytes", "**WARNING**",
                         "No vmstat log was given", "Not a reference run"):
                self.assertIn(text, machine)
            with open(os.path.join(out, "bench-summary.md")) as f:
                summary = f.read()
            self.assertIn("wsbench results: bench.json", summary)
            self.assertNotIn(d, summary)  # no machine paths in the published text
            with open(readme) as f:
                text = f.read()
            self.assertIn("](docs/results/run/)", text)
            self.assertTrue(text.endswith("<!-- glance:end -->\n\nrest\n"))
            check_glance(text, expected_ping(FIXTURE))
            # A second run into the same folder needs --force.
            again = subprocess.run(
                [sys.executable, os.path.join(ROOT, "scripts", "publish.py"),
                 "--from-experiments", FIXTURE, "--out", out, "--no-readme"],
                capture_output=True, text=True)
            self.assertEqual(again.returncode, 1)
            self.assertIn("--force", again.stderr)


if __name__ == "__main__":
    unittest.main()
