#!/usr/bin/env python3
"""scripts/summarize.py against a hand-made result file (tests/data/): six
repetitions with known times, Google Benchmark aggregates that are wrong on
purpose, a skipped case, failed ones, a dirty tree and calibration samples.
Expected figures are worked out by hand in the comments."""
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "summarize.py")
FIXTURE = os.path.join(HERE, "..", "data", "summarize_fixture.json")
COUNT = os.path.join(HERE, "..", "data", "summarize_count.json")
# Stage rows beside encode/decode, page faults and the heap and allocation
# policies in the context.
STAGES = os.path.join(HERE, "..", "data", "summarize_stages.json")
STAGES_COUNT = os.path.join(HERE, "..", "data", "summarize_stages_count.json")

spec = importlib.util.spec_from_file_location("summarize", SCRIPT)
summarize = importlib.util.module_from_spec(spec)
spec.loader.exec_module(summarize)


def run(*args):
    proc = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          check=True)
    return proc.stdout


def section(output, title):
    """The block of output (up to the next blank line) headed by `title`."""
    blocks = output.split("\n\n")
    found = [b for b in blocks if b.startswith(title)]
    assert len(found) == 1, f"{len(found)} sections titled {title!r} in:\n{output}"
    return found[0]


def row(block, *first_cells):
    """The line of `block` whose first cells are `first_cells`."""
    for line in block.split("\n"):
        if line.split()[:len(first_cells)] == list(first_cells):
            return line
    raise AssertionError(f"no row {first_cells} in:\n{block}")


def cells(line):
    """Cells of a table line (columns are separated by two spaces or more)."""
    return re.split(r"\s{2,}", line.strip())


def run_changed(change):
    """summarize.py on a copy of the fixture changed by `change(data)`."""
    with open(FIXTURE) as f:
        data = json.load(f)
    change(data)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "changed.json")
        with open(path, "w") as f:
            json.dump(data, f)
        return run(path)


class Statistics(unittest.TestCase):
    def test_median_ci_ranks_match_the_binomial_table(self):
        # Campbell & Gardner (BMJ 1988) table of ranks for a 95% interval.
        table = {6: (1, 6), 10: (2, 9), 20: (6, 15), 30: (10, 21), 50: (18, 33), 100: (40, 61)}
        for n, ranks in table.items():
            self.assertEqual(summarize.median_ci_ranks(n)[:2], ranks, n)
        self.assertAlmostEqual(summarize.median_ci_ranks(10)[2], 1 - 22 / 1024)
        for n in range(6):
            self.assertIsNone(summarize.median_ci_ranks(n), n)

    def test_percentile_minimum_samples(self):
        self.assertEqual(summarize.min_samples_for_percentile(90), 10)
        self.assertEqual(summarize.min_samples_for_percentile(99), 100)

    def test_stat_on_known_data(self):
        s = summarize.Stat([2, 4, 4, 4, 5, 5, 7, 9])
        self.assertEqual(s.median, 4.5)
        self.assertAlmostEqual(s.cv, (32 / 7) ** 0.5 / 5)
        self.assertEqual(s.ci, (2, 9))  # n = 8: ranks 1 and 8
        self.assertTrue(s.noisy)
        one = summarize.Stat([7])
        self.assertEqual((one.median, one.ci, one.cv), (7, None, None))


class Tables(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = run(FIXTURE)

    def test_codec_cells_are_median_ci_cv_n_of_the_repetitions(self):
        encode = section(self.out, "encode: time per operation")
        # 98 99 100 101 102 103: median 100.5; n = 6 gives ranks 1 and 6;
        # squared deviations 17.5 / 5 = 3.5, sqrt / 100.5 = 1.86%.
        self.assertEqual(cells(row(encode, "ints/200", "json")),
                         ["ints/200", "json", "100.5 ns", "98-103 ns", "1.9%", "6"])
        self.assertNotIn("999", self.out)  # Google Benchmark's (wrong) aggregates are not used
        self.assertEqual(cells(row(encode, "ints/200", "memcpy"))[2:6],
                         ["50 ns", "50-50 ns", "0.0%", "6"])

    def test_cv_above_five_percent_is_flagged(self):
        encode = section(self.out, "encode: time per operation")
        # 100 150 100 150 100 150: mean 125, s = sqrt(3750 / 5) = 27.4: 21.9%.
        self.assertEqual(cells(row(encode, "ints/200", "xml"))[2:6],
                         ["125 ns", "100-150 ns", "21.9%!", "6"])
        self.assertNotIn("!", row(encode, "ints/200", "json"))
        self.assertIn("'!' above 5%", self.out)

    def test_skipped_and_failed_cases_stay_in_their_tables_with_the_reason(self):
        encode = section(self.out, "encode: time per operation")
        self.assertIn("skipped: not applicable: no binary: MTOM output identical to soap",
                      row(encode, "ints/200", "soap-mtom"))
        decode = section(self.out, "decode: time per operation")
        self.assertIn("FAILED: verification failed: ints[3] differs", row(decode, "ints/200", "xml"))
        wire = section(self.out, "wire bytes")
        self.assertIn("[1]", row(wire, "ints/200"))
        self.assertIn("[1] skipped: not applicable", wire)
        for title in ("round trips", "phases"):
            self.assertIn("FAILED: round trip failed: connection refused",
                          row(section(self.out, title), "gsoap/soap/ping/same"), title)

    def test_partly_failed_case_uses_the_rest_and_says_so(self):
        decode = section(self.out, "decode: time per operation")
        line = row(decode, "ints/200", "json")
        # 2.0 2.1 2.2 2.3 2.4 us: median 2.2; five runs: no 95% interval;
        # s = sqrt(0.1 / 4) = 0.158: 7.2%.
        self.assertEqual(cells(line)[2:6], ["2.2 us", "none (n<6)", "7.2%!", "5"])
        self.assertIn("1 of 6 repetitions failed: decode failed: out of memory", line)

    def test_round_trips_report_samples_and_gated_percentiles(self):
        rtt = section(self.out, "round trips")
        ping = cells(row(rtt, "beast/json/ping/same"))
        # p50 per repetition 20..25 us: median 22.5, ranks 1 and 6, s =
        # sqrt(17.5 / 5) = 1.87: 8.3%; p99 50..60: median 55.
        self.assertEqual(ping[1:8], ["22.5 us", "20-25 us", "8.3%!", "6x5000", "30 us", "55 us",
                                     "18 us"])
        self.assertEqual(ping[8], "1.25x")
        get = cells(row(rtt, "xmlrpc-c/xmlrpc/get/objects/3200/same"))  # "/iterations:18" dropped
        self.assertEqual(get[4:7], ["6x18", "90 ms", "n<100"])
        self.assertIn("'n<k': too few calls", rtt)

    def test_phases_flag_noisy_phases_and_merged_points(self):
        phases = section(self.out, "phases")
        self.assertIn("3.5 us!", row(phases, "beast/json/ping/same"))  # client_parse 1.0..6.0 us
        get = row(phases, "xmlrpc-c/xmlrpc/get/objects/3200/same")
        self.assertEqual(cells(get)[1:3], ["250 us", "^"])

    def test_phases_show_what_the_independent_clocks_left_unexplained(self):
        phases = section(self.out, "phases")
        # Round trip 0.10..0.15 us: median 125 ns; server 0.2 us, one
        # repetition with a call outside the tolerance.
        ping = cells(row(phases, "beast/json/ping/same"))
        self.assertEqual(ping[8:10], ["125 ns", "200 ns*"])
        # 2..7 us: median 4.5; xmlrpc-c's row has no server check.
        get = cells(row(phases, "xmlrpc-c/xmlrpc/get/objects/3200/same"))
        self.assertEqual(get[8:10], ["4.5 us", "-"])
        self.assertIn("'*': some calls", phases)
        self.assertNotIn("sum/rtt", phases)

    def test_dirty_tree_on_every_table_and_the_context_header(self):
        titles = [b.split("\n")[0] for b in self.out.split("\n\n") if "\n---" in b]
        self.assertGreaterEqual(len(titles), 5)
        for title in titles:
            self.assertIn("[DIRTY TREE]", title)
        head = self.out.split("\n\n")[0]
        self.assertIn("DIRTY TREE", head.split("\n")[0])
        for text in ("commit    0123456789abcdef", "kernel    6.1.0-test", "Test CPU @ 2.0GHz",
                     "governor  performance", "steal     0.4%", "--benchmark_repetitions=6",
                     "2025-01-02T03:04:05", "probes    on",
                     "phases    gsoap=in-process probe"):
            self.assertIn(text, head)

    def test_calibration_noise(self):
        head = self.out.split("\n\n")[0]
        # before 990..1010 ns: median 1000, range 20 = 2.0%, s = sqrt(62.5)
        # = 7.9: 0.8%; after 1080..1120: median 1100, 40 / 1100 = 3.6%.
        self.assertIn("before median 1 us, spread (max-min)/median 2.0%, CV 0.8%, n 5", head)
        self.assertIn("after  median 1.1 us, spread (max-min)/median 3.6%, CV 1.4%, n 5", head)
        self.assertIn("after/before medians: +10.0%", head)


class Variants(unittest.TestCase):
    def test_one_repetition(self):
        def first_only(data):
            data["benchmarks"] = [b for b in data["benchmarks"]
                                  if b.get("run_type") == "iteration"
                                  and b.get("repetition_index") == 0]
        out = run_changed(first_only)
        encode = section(out, "encode: time per operation")
        self.assertEqual(cells(row(encode, "ints/200", "json"))[2:6],
                         ["100 ns", "none (n<6)", "-", "1"])
        self.assertIn("skipped: not applicable", row(encode, "ints/200", "soap-mtom"))
        self.assertIn("1x5000", row(section(out, "round trips"), "beast/json/ping/same"))

    def test_clean_tree_and_missing_context_fields(self):
        def clean(data):
            data["context"] = {"source_git_dirty": "false", "date": "2025-01-02T03:04:05+00:00"}
        out = run_changed(clean)
        self.assertNotIn("DIRTY", out)
        self.assertIn("dirty     no", out)
        self.assertNotIn("machine noise", out)
        self.assertNotIn("kernel", out)

        def bare(data):
            del data["context"]
        self.assertNotIn("DIRTY", run_changed(bare))

    def test_instructions_column_and_failed_counts(self):
        out = run("--instructions", COUNT, FIXTURE)
        encode = section(out, "encode: time per operation")
        self.assertIn("instr/op", encode.split("\n")[1])
        self.assertEqual(cells(row(encode, "ints/200", "json"))[6], "12,345")
        self.assertEqual(cells(row(encode, "ints/200", "xml"))[6], "error")
        self.assertIn("33,142 ~1%", row(section(out, "round trips"), "beast/json/ping/same"))
        rest = section(out, "instructions per operation")
        self.assertIn("timed out under valgrind after 900 s", row(rest, "encode/xml/ints/200"))
        self.assertEqual(cells(row(rest, "decode/protobuf/ints/200"))[1], "777")
        self.assertNotIn("instr/op", section(run(FIXTURE), "encode: time per operation"))


class StageRatios(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = run("--instructions", STAGES_COUNT, STAGES)

    def test_encode_over_bind_plus_write(self):
        encode = section(self.out, "encode: time per operation")
        header = cells(encode.split("\n")[1])
        ratio = header.index("encode/(bind+write)")
        # 200 202 204 206 208 210: median 205, CI95 200-210; bind 50 + write
        # 150 = 200: 1.025, range 200/200 to 210/200, which holds 1.
        self.assertEqual(cells(row(encode, "objects/3200", "soap"))[ratio], "1.025 (1.00-1.05)")
        # json encodes without stages: nothing to compare.
        self.assertEqual(cells(row(encode, "objects/3200", "json"))[ratio], "-")
        # Instructions 1000 / (400 + 590).
        self.assertEqual(cells(row(encode, "objects/3200", "soap"))[header.index("instr ratio")],
                         "1.0101")

    def test_decode_over_read_plus_unbind_marks_a_range_without_1(self):
        decode = section(self.out, "decode: time per operation")
        ratio = cells(decode.split("\n")[1]).index("decode/(read+unbind)")
        # 300 / (100 + 100), every CI95 a single value.
        self.assertEqual(cells(row(decode, "objects/3200", "soap"))[ratio], "1.500 (1.50-1.50)*")
        self.assertEqual(cells(row(decode, "objects/3200", "json"))[ratio], "1.000 (1.00-1.00)")

    def test_page_faults_per_op_and_policies(self):
        read = section(self.out, "read: time per operation")
        faults = cells(read.split("\n")[1]).index("faults/op")
        # 41 41 40 41 42 41: median 41.
        self.assertEqual(cells(row(read, "objects/3200", "soap"))[faults], "41")
        self.assertIn("heap      retain (mallopt M_MMAP_MAX=0", self.out)
        self.assertIn("alloc     reuse", self.out)

    def test_no_ratio_column_without_stage_rows(self):
        encode = section(run(FIXTURE), "encode: time per operation")
        self.assertNotIn("bind+write", encode)
        self.assertNotIn("faults/op", encode)


def rtt_rows(name, p50s, floor=10.0):
    """A round-trip case's per-repetition rows with these p50s (us)."""
    return [{"name": name + "/manual_time", "run_name": name + "/manual_time",
             "run_type": "iteration", "repetition_index": i, "iterations": 200,
             "real_time": p, "time_unit": "us", "n": 200.0, "p50_us": p, "floor_p50_us": floor,
             "ratio_p50": p / floor} for i, p in enumerate(p50s)]


def headline_of(output):
    return output[output.index("HEADLINE"):]


class Order(unittest.TestCase):
    def test_round_trips_by_stack_codec_operation_payload(self):
        # Shuffled as interleaved repetitions leave them; the expected order
        # is stack, codec, operation (ping first), payload by its numbers,
        # a kept connection before a new one, anchors after the stacks.
        shuffled = ["rtt/gsoap/soap/get/ints/3200/same", "anchor/beast/ping/same",
                    "rtt/beast/json/get/ints/3200/same", "rtt/beast/soap/ping/same",
                    "rtt/beast/json/ping/new-connection/same", "rtt/beast/json/get/ints/800/same",
                    "rtt/beast/json/echo/message-a/100/same", "rtt/beast/json/ping/same"]

        def add(data):
            for name in shuffled:
                data["benchmarks"] += rtt_rows(name, [20, 20, 20, 20, 20, 20])
        rtt = section(run_changed(add), "round trips")
        names = [line.split()[0] for line in rtt.split("\n")[4:]]
        self.assertEqual(names, [
            "beast/json/ping/same", "beast/json/ping/new-connection/same",
            "beast/json/get/ints/800/same", "beast/json/get/ints/3200/same",
            "beast/json/echo/message-a/100/same", "beast/soap/ping/same",
            "gsoap/soap/ping/same", "gsoap/soap/get/ints/3200/same",
            "xmlrpc-c/xmlrpc/get/objects/3200/same", "anchor/beast/ping/same"])

    def test_payloads_by_their_numbers(self):
        payloads = ["ints/3200", "objects/200", "ints/200", "ints/800"]
        self.assertEqual(sorted(payloads, key=summarize.natural_key),
                         ["ints/200", "ints/800", "ints/3200", "objects/200"])


class Headline(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        def add(data):
            # beast/json's ping is in the fixture: p50 20..25 us, floor 18.
            # Its anchor 10 10 10 10 10 10 against 20..25: ratios 2.0..2.5,
            # median 2.25, ranks 1 and 6.
            data["benchmarks"] += rtt_rows("anchor/beast/ping/same", [10] * 6)
            # A gRPC ping at exactly 100 us, its floor 40: 2.50x, CV 0.
            data["benchmarks"] += rtt_rows("rtt/grpc/protobuf/ping/same", [100] * 6, floor=40)
            data["benchmarks"] += rtt_rows("rtt/grpc/binary/ping/same", [5] * 6, floor=40)
            data["context"]["command_line"] = (
                "./build/release/bench --placement=split --benchmark_repetitions=6 "
                "--benchmark_out=results/bench/x/bench.json --benchmark_out_format=json")
        cls.out = run_changed(add)
        cls.head = headline_of(cls.out)

    def test_the_headline_ends_the_summary(self):
        self.assertTrue(self.out.rstrip().endswith(self.head.rstrip()))
        self.assertLess(len(self.head.split("\n")), 40)  # one screen

    def test_ping_per_stack_against_the_floor(self):
        # One line per stack, its own codec: protobuf, not binary (first by name).
        self.assertEqual(cells(row(self.head, "beast/json/ping/same")),
                         ["beast/json/ping/same", "22.5 us", "18 us", "1.25x", "CV 8.3%!"])
        self.assertEqual(cells(row(self.head, "grpc/protobuf/ping/same")),
                         ["grpc/protobuf/ping/same", "100 us", "40 us", "2.50x", "CV 0.0%"])
        self.assertNotIn("grpc/binary/ping", self.head.split("slowest")[0])

    def test_each_stack_against_its_anchor(self):
        self.assertEqual(cells(row(self.head, "beast/json/ping/same", "anchor/beast/ping/same")),
                         ["beast/json/ping/same", "anchor/beast/ping/same", "2.25x",
                          "CI95 2.00-2.50"])

    def test_slowest_rows(self):
        block = self.head[self.head.index("slowest"):self.head.index("noisiest")]
        self.assertEqual([line.split()[0] for line in block.split("\n")[1:4]],
                         ["rtt/xmlrpc-c/xmlrpc/get/objects/3200/same",
                          "rtt/grpc/protobuf/ping/same", "rtt/beast/json/ping/same"])

    def test_noisy_rows_say_how_to_repeat_them(self):
        # Three rows above 5%: encode/xml 21.9%, beast's ping 8.3%, decode/json 7.2%;
        # six repetitions become twelve, the run's own options kept.
        self.assertIn("3 of 9 with a CV over 5%", self.head)
        self.assertIn("\n      scripts/bench --placement=split "
                      "'--benchmark_filter=^rtt/beast/json/ping/same(/|$)' "
                      "--benchmark_repetitions=12\n", self.head)
        self.assertIn("'--benchmark_filter=^(encode/xml/ints/200|rtt/beast/json/ping/same|"
                      "decode/json/ints/200)(/|$)' --benchmark_repetitions=12", self.head)
        self.assertIn("full JSON: ", self.head)

    def test_many_noisy_rows_repeat_the_whole_run(self):
        def noisy(data):
            data["context"]["command_line"] = "bench --benchmark_filter=get --strings=escaped"
            for i in range(9):
                data["benchmarks"] += rtt_rows(f"rtt/beast/json/get/ints/{i}/same",
                                               [10, 20] * 3)
        head = headline_of(run_changed(noisy))
        self.assertIn("12 of 15 with a CV over 5%", head)
        self.assertIn("the whole run again with more repetitions:\n"
                      "      scripts/bench --benchmark_filter=get --strings=escaped "
                      "--benchmark_repetitions=12\n", head)

    def test_filter_escapes_regex_characters(self):
        import headline  # noqa: E402  (scripts/, on the path since summarize.py loaded)
        self.assertEqual(headline.filter_regex(["a.b/c+d"]), r"^a\.b/c\+d(/|$)")


class OptimisationWarning(unittest.TestCase):
    def first_line(self, context):
        def change(data):
            data["context"].update(context)
        return run_changed(change).split("\n")[0]

    def test_an_unoptimised_build_opens_with_a_warning(self):
        for context in ({"wsbench_build_type": ""}, {"wsbench_build_type": "Debug"},
                        {"wsbench_build_type": "RelWithDebInfo", "wsbench_cxx_flags": "-g"},
                        {"wsbench_build_type": "Release", "wsbench_cxx_flags": "-O1 -DNDEBUG"}):
            self.assertTrue(self.first_line(context).startswith(
                "WARNING: NOT AN OPTIMISED BUILD"), context)

    def test_an_optimised_build_does_not(self):
        for context in ({"wsbench_build_type": "RelWithDebInfo",
                         "wsbench_cxx_flags": "-O2 -g -fno-omit-frame-pointer -DNDEBUG"},
                        {"wsbench_build_type": "Release", "wsbench_cxx_flags": "-O3 -DNDEBUG"}):
            self.assertTrue(self.first_line(context).startswith("wsbench results"), context)

    def test_the_warning_names_the_reason(self):
        line = self.first_line({"wsbench_build_type": "", "wsbench_cxx_flags": ""})
        self.assertIn("build type ''", line)
        self.assertIn("without -O2 or -O3", line)


if __name__ == "__main__":
    unittest.main(verbosity=2)
