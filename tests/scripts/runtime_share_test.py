#!/usr/bin/env python3
"""scripts/runtime_share.py on known data: the share and its bootstrap CI95
where they can be computed by hand, an interval that must straddle 0, the
pairing of each managed client with its native one, a runtime that is not
available rendered with its reason in every table, and runtimes/<R>/run
missing or exiting 77 recorded as not available."""
import argparse
import importlib.util
import json
import os
import re
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "runtime_share.py")

spec = importlib.util.spec_from_file_location("runtime_share", SCRIPT)
runtime_share = importlib.util.module_from_spec(spec)
spec.loader.exec_module(runtime_share)


def rows(name, p50s_us):
    return [{"name": name, "run_name": name, "run_type": "iteration", "repetitions": len(p50s_us),
             "repetition_index": i, "real_time": v * 1e3, "time_unit": "ns", "p50_us": v}
            for i, v in enumerate(p50s_us)]


def write_json(path, benchmarks, context=None):
    with open(path, "w") as f:
        json.dump({"context": context or {}, "benchmarks": benchmarks}, f)


class ShareTest(unittest.TestCase):
    def test_no_spread_gives_the_exact_share(self):
        self.assertEqual(runtime_share.bootstrap_share([10.0] * 6, [40.0] * 6), (0.75, 0.75, 0.75))

    def test_overlapping_sides_straddle_zero(self):
        native = [8.0, 9.0, 10.0, 11.0, 12.0, 13.0]
        managed = [8.5, 9.5, 10.5, 11.5, 12.5, 13.5]
        point, lo, hi = runtime_share.bootstrap_share(native, managed)
        self.assertAlmostEqual(point, 1 - 10.5 / 11.0)
        self.assertLess(lo, 0)
        self.assertGreater(hi, 0)

    def test_a_clear_share_excludes_zero_and_holds_the_point(self):
        native = [9.0, 10.0, 10.0, 11.0, 10.5, 9.5]
        managed = [90.0, 100.0, 110.0, 95.0, 105.0, 100.0]
        point, lo, hi = runtime_share.bootstrap_share(native, managed)
        self.assertAlmostEqual(point, 0.9)
        self.assertTrue(0.85 < lo <= point <= hi < 0.95, (lo, point, hi))

    def test_the_interval_is_the_same_every_time(self):
        native, managed = [8.0, 12.0, 10.0, 9.0, 11.0, 10.0], [20.0, 30.0, 25.0, 22.0, 28.0, 26.0]
        self.assertEqual(runtime_share.bootstrap_share(native, managed),
                         runtime_share.bootstrap_share(native, managed))

    def test_each_managed_client_pairs_with_its_stack_and_codec(self):
        pairs = {("gsoap", "zeep"): "soap", ("gsoap", "soapclient"): "soap",
                 ("gsoap", "cxf"): "soap", ("xmlrpc-c", "xmlrpc"): "xmlrpc",
                 ("beast", "json"): "json", ("beast", "curl-json"): "json",
                 ("beast", "jersey-jackson"): "json", ("beast", "simplexml"): "xml",
                 ("beast", "jaxb"): "xml", ("beast", "protobuf-java"): "protobuf",
                 # The PHP and Java runs' client names.
                 ("gsoap", "soap"): "soap", ("beast", "xml"): "xml",
                 ("beast", "jersey-json"): "json", ("beast", "jersey-xml"): "xml",
                 ("beast", "jersey-protobuf"): "protobuf", ("beast", "telnet"): None}
        for (stack, client), codec in pairs.items():
            self.assertEqual(runtime_share.native_codec(stack, client), codec, (stack, client))
        self.assertEqual(runtime_share.parse_managed("rtt/beast/java-jaxb/get/ints/200/warmup"),
                         ("beast", "java", "jaxb", "get/ints/200", "warmup"))
        self.assertIsNone(runtime_share.parse_managed("rtt/beast/json/ping/same"))
        self.assertIsNone(runtime_share.parse_managed("rtt/php-server/beast-json/ping/steady"))


class ReportTest(unittest.TestCase):
    """share.md over a folder written here: Python ran, PHP is missing."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        d = cls.dir.name
        write_json(os.path.join(d, "native.json"),
                   rows("rtt/beast/json/ping/same/manual_time", [10.0] * 6)
                   + rows("rtt/gsoap/soap/get/ints/200/same/manual_time", [100.0] * 6))
        write_json(os.path.join(d, "runtime-python.json"),
                   rows("rtt/beast/python-json/ping/steady", [40.0] * 6)
                   + rows("rtt/beast/python-json/ping/cold", [5000.0] * 6)
                   + rows("rtt/gsoap/python-zeep/get/ints/200/steady", [1000.0] * 6)
                   + [{"name": "rtt/gsoap/python-zeep/register/steady",
                       "run_name": "rtt/gsoap/python-zeep/register/steady",
                       "error_occurred": True,
                       "error_message": "verification failed: register: no queue id"}],
                   {"runtime": "python 3.11.2"})
        with open(os.path.join(d, "runtimes.json"), "w") as f:
            json.dump({"command": "scripts/runtime_share.py run", "sizes": [200, 3200],
                       "native": {"file": "native.json", "exit": 0},
                       "runtimes": {
                           "python": {"file": "runtime-python.json", "status": "ok"},
                           "php": {"file": "runtime-php.json", "status": "not available",
                                   "reason": "runtimes/php/run does not exist in this tree"}}},
                      f)
        with open(runtime_share.write_share(d)) as f:
            cls.text = f.read()
        parts = re.split(r"^## (E\d): ", cls.text, flags=re.M)
        cls.by = {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def row(self, key, start):
        found = [line for line in self.by[key].splitlines() if line.startswith(start)]
        self.assertEqual(len(found), 1, self.by[key])
        return [c.strip() for c in found[0].strip("|").split("|")]

    def test_ping_pairs_python_json_with_beast_json(self):
        cells = self.row("E1", "| ping | beast/json |")
        self.assertEqual(cells[2:7], ["10 [10-10]", "python-json", "40 [40-40]",
                                      "0.750 [0.750-0.750]", "5 [5-5]"])  # cold in ms

    def test_get_pairs_zeep_with_gsoap_soap(self):
        cells = self.row("E3", "| get/ints/200 | gsoap/soap |")
        self.assertEqual(cells[3:6], ["python-zeep", "1,000 [1,000-1,000]", "0.900 [0.900-0.900]"])

    def test_a_failed_row_keeps_its_reason(self):
        cells = self.row("E5", "| register | gsoap/soap |")
        self.assertEqual(cells[4:6], ["-", "-"])
        self.assertIn("FAILED: verification failed: register: no queue id", cells[8])
        self.assertIn("native: not in the run", cells[8])

    def test_a_missing_runtime_is_in_every_table_with_its_reason(self):
        for key in ("E1", "E3", "E5"):
            cells = self.row(key, "| (all) |")
            self.assertEqual(cells[3], "php")
            self.assertEqual(cells[8], "not available: runtimes/php/run does not exist in this tree")


def running(pid):
    """Whether pid is a live process (not gone, not a zombie awaiting its reaper)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class RunTest(unittest.TestCase):
    """runtimes/<R>/run absent, or exiting 77: not available, with why."""

    def test_missing_and_unavailable_runtimes(self):
        with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as out:
            os.makedirs(os.path.join(root, "runtimes", "nojdk"))
            script = os.path.join(root, "runtimes", "nojdk", "run")
            with open(script, "w") as f:
                f.write("#!/bin/sh\necho installing >&2\necho 'no JDK 17: apt-get failed' >&2\n"
                        "exit 77\n")
            os.chmod(script, 0o755)
            old, runtime_share.ROOT = runtime_share.ROOT, root
            try:
                args = argparse.Namespace(quick=True, repetitions=None, calls=None)
                missing = runtime_share.run_runtime(out, "absent", args)
                unavailable = runtime_share.run_runtime(out, "nojdk", args)
            finally:
                runtime_share.ROOT = old
        self.assertEqual((missing["status"], missing["reason"]),
                         ("not available", "runtimes/absent/run does not exist in this tree"))
        self.assertEqual((unavailable["status"], unavailable["reason"]),
                         ("not available", "no JDK 17: apt-get failed"))

    def test_a_run_that_hangs_is_stopped_with_its_children(self):
        with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as out:
            os.makedirs(os.path.join(root, "runtimes", "hangs"))
            script = os.path.join(root, "runtimes", "hangs", "run")
            with open(script, "w") as f:
                f.write(f"#!/bin/sh\nsleep 60 &\necho $! > {out}/child\nwait\n")
            os.chmod(script, 0o755)
            old = runtime_share.ROOT, runtime_share.RUN_TIMEOUT_S
            runtime_share.ROOT, runtime_share.RUN_TIMEOUT_S = root, 1
            try:
                started = time.monotonic()
                entry = runtime_share.run_runtime(
                    out, "hangs", argparse.Namespace(quick=False, repetitions=2, calls=3))
                took = time.monotonic() - started
            finally:
                runtime_share.ROOT, runtime_share.RUN_TIMEOUT_S = old
            with open(os.path.join(out, "child")) as f:
                child = int(f.read())
        self.assertEqual((entry["status"], entry["reason"]), ("failed", "stopped after 1 s"))
        self.assertLess(took, 30)
        # The kill is delivered asynchronously: give the child a moment to die.
        deadline = time.monotonic() + 5
        while running(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(running(child), "the run's child outlived it")

    def test_unknown_runtime_names_are_refused(self):
        self.assertEqual(runtime_share.parse_runtimes("all"), ["python", "php", "java"])
        self.assertEqual(runtime_share.parse_runtimes("java,python"), ["java", "python"])
        with self.assertRaises(ValueError):
            runtime_share.parse_runtimes("python,perl")


if __name__ == "__main__":
    unittest.main()
