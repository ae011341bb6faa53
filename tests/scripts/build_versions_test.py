#!/usr/bin/env python3
"""The context of a real bench run names every library a figure is cited
with (scripts/publish_machine.py's LIBRARIES, the table machine.md prints):
a non-empty version as the build compiled against it, the loaded copy's
own answer where the library gives one, and the build type and compile
flags the summary's optimisation warning reads.

Usage: build_versions_test.py BENCH   (the bench binary under test)

bench runs its smallest case once, so the context is the one every run
writes."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from publish_machine import LIBRARIES  # noqa: E402

# What a key holds when the build or the run could not find the version.
MISSING = ("", "unknown", "not loaded", "not recorded")


def problems(context):
    """Each library or build key the context lacks, with what it holds."""
    out = []
    for name, build, runtime in LIBRARIES:
        for key in (build, runtime):
            if key and str(context.get(key, "")).strip() in MISSING:
                out.append(f"{name}: {key} is {context.get(key)!r}")
    for key in ("wsbench_build_type", "wsbench_cxx_flags"):
        if key not in context:
            out.append(f"{key} is not recorded")
    return out


class KnownData(unittest.TestCase):
    FULL = {key: "1.2.3" for _, build, runtime in LIBRARIES for key in (build, runtime) if key}
    FULL.update(wsbench_build_type="RelWithDebInfo", wsbench_cxx_flags="-O2 -g")

    def test_a_full_context_passes(self):
        self.assertEqual(problems(self.FULL), [])

    def test_each_missing_or_empty_version_is_named(self):
        context = dict(self.FULL, grpc_version="", xmlrpc_c_version="unknown",
                       openssl_runtime_version="not loaded")
        del context["simdjson_version"]
        self.assertEqual(problems(context), [
            "gRPC: grpc_version is ''", "simdjson: simdjson_version is None",
            "OpenSSL: openssl_runtime_version is 'not loaded'",
            "xmlrpc-c: xmlrpc_c_version is 'unknown'"])

    def test_the_build_type_and_flags_must_be_recorded(self):
        context = dict(self.FULL)
        del context["wsbench_cxx_flags"]
        self.assertEqual(problems(context), ["wsbench_cxx_flags is not recorded"])

    def test_ten_libraries(self):
        names = {name for name, _, _ in LIBRARIES}
        for name in ("gRPC", "protobuf", "simdjson", "OpenSSL", "libxml2", "RapidJSON", "Beast",
                     "gSOAP", "xmlrpc-c", "Google Benchmark"):
            self.assertIn(name, names)


class RealRun(unittest.TestCase):
    bench = None

    def test_bench_context_names_every_library(self):
        if not self.bench:
            self.skipTest("no bench binary given")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "bench.json")
            proc = subprocess.run(
                [self.bench, "--benchmark_filter=^memcpy/ints/200$", "--benchmark_repetitions=1",
                 "--benchmark_min_time=0.001", f"--benchmark_out={out}",
                 "--benchmark_out_format=json"], capture_output=True, text=True, timeout=240)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(out) as f:
                context = json.load(f)["context"]
        self.assertEqual(problems(context), [])
        for _, build, runtime in LIBRARIES:
            print(f"  {build}: {context[build]}" + (f"; {runtime}: {context[runtime]}"
                                                    if runtime else ""))
        print(f"  build: {context['wsbench_build_type']}, flags: {context['wsbench_cxx_flags']}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        RealRun.bench = sys.argv.pop(1)
    unittest.main(verbosity=2)
