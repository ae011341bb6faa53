#!/usr/bin/env python3
"""scripts/e9_table.py against a hand-made result file: three repetitions
per case with known times, sizes and round trips (uploads and gets), one
variant missing for a payload. Expected cells are worked out in the
comments."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "e9_table.py")


def iteration(name, real_time_ns, **counters):
    return {"name": name, "run_name": name, "run_type": "iteration", "real_time": real_time_ns,
            "time_unit": "ns", **counters}


def fixture():
    rows = []
    # binary/1MiB: soap 1,398,605 bytes, encode 10/12/11 ms (median 11 ms),
    # decode 40/41/42 ms (41 ms), round trip p50 30/33/31 ms (31 ms);
    # mtom 1,049,597 bytes, round trip 10 ms: soap/mtom = 3.10x.
    for t in (10e6, 12e6, 11e6):
        rows.append(iteration("encode/soap/binary/1MiB", t, wire_bytes=1398605))
    for t in (40e6, 41e6, 42e6):
        rows.append(iteration("decode/soap/binary/1MiB", t, wire_bytes=1398605))
    for p50 in (30e3, 33e3, 31e3):
        rows.append(iteration("rtt/gsoap/soap/get/binary/1MiB/same/iterations:20/manual_time",
                              p50 * 1e3, p50_us=p50))
    for t in (3e6, 3e6, 3e6):
        rows.append(iteration("encode/soap-mtom/binary/1MiB", t, wire_bytes=1049597))
        rows.append(iteration("decode/soap-mtom/binary/1MiB", t, wire_bytes=1049597))
    for p50 in (10e3, 10e3, 10e3):
        rows.append(iteration("rtt/gsoap/soap-mtom/get/binary/1MiB/same/manual_time", p50 * 1e3,
                              p50_us=p50))
    # Uploads of binary/1MiB, repetition by repetition: soap 30/36/33 ms
    # (median 33, range 30-36), mtom 10/10/12 ms (median 10, range 10-12);
    # ratios 3.00/3.60/2.75: median 3.00x, range 2.75-3.60; no swa upload.
    for soap, mtom in ((30e3, 10e3), (36e3, 10e3), (33e3, 12e3)):
        rows.append(iteration("rtt/gsoap/soap/upload/binary/1MiB/same/iterations:20/manual_time",
                              soap * 1e3, p50_us=soap))
        rows.append(iteration("rtt/gsoap/soap-mtom/upload/binary/1MiB/same/manual_time",
                              mtom * 1e3, p50_us=mtom))
    return {"context": {"source_git_dirty": False}, "benchmarks": rows}


def table_output():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "e9.json")
        with open(path, "w") as f:
            json.dump(fixture(), f)
        return subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True,
                              check=True).stdout


def section(out, title):
    """The lines of the table whose title starts with `title`."""
    start = out.index(title)
    end = out.find("\nE9 ", start + 1)
    return out[start:end if end >= 0 else len(out)].split("\n")


class E9TableTest(unittest.TestCase):
    def test_upload_cells_and_same_run_ratios(self):
        lines = section(table_output(), "E9 uploads, the paper's direction")
        cells = next(l for l in lines if l.startswith("binary/1MiB")).split()
        # soap: median and range; swa: none; mtom: median and range; then
        # soap/swa (none) and soap/mtom, each "median (range)".
        self.assertEqual(cells[1:5], ["33", "ms", "30-36", "ms"])
        self.assertEqual(cells[5:7], ["-", "-"])
        self.assertEqual(cells[7:11], ["10", "ms", "10-12", "ms"])
        self.assertEqual(cells[11:], ["-", "3.00x", "(2.75-3.60)"])
        # A payload without uploads keeps its row, all "-".
        gml = next(l for l in lines if l.startswith("gml/10000"))
        self.assertEqual(set(gml.split()[1:]), {"-"})

    def test_get_table_says_it_is_the_reverse_direction(self):
        out = table_output()
        self.assertIn("E9 gets: reverse direction (the server sends; the paper timed uploads)",
                      out)
        self.assertLess(out.index("E9 uploads"), out.index("E9 gets"))

    def test_cells_and_ratios(self):
        out = "\n".join(section(table_output(), "E9 gets"))
        line = next(l for l in out.split("\n") if l.startswith("binary/1MiB"))
        cells = line.split()
        # payload, then size, rtt, ser, deser per variant (a time is two
        # tokens: value and unit), then the two ratios.
        self.assertEqual(cells[1:8], ["1,398,605", "31", "ms", "11", "ms", "41", "ms"])
        self.assertEqual(cells[8:9], ["-"] * 1)  # no soap-swa rows: every swa cell is "-"
        self.assertEqual(cells[-2:], ["-", "3.10x"])
        self.assertIn("1,049,597", cells)
        # A payload without any rows keeps its row, all "-".
        gml = next(l for l in out.split("\n") if l.startswith("gml/10000"))
        self.assertEqual(set(gml.split()[1:]), {"-"})


if __name__ == "__main__":
    unittest.main()
