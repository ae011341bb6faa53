#!/usr/bin/env python3
"""scripts/flamegraph_svg.py (the renderer scripts/flamegraph uses without
inferno) on perf script text with known stacks: three samples of period
1000 and one of period 3000, so the folded weights and the frames' widths
are known by hand."""
import os
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "flamegraph_svg.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import flamegraph_svg  # noqa: E402

PERF_SCRIPT = """\
bench  4242 [001] 100.000001:       1000 cpu-clock:
\t    55d5c0a1b2c3 wsb::JsonCodec::encode(std::vector<int, std::allocator<int> > const&)+0x23 (/b/bench)
\t    55d5c0a1b000 main+0x10 (/b/bench)

bench  4242 [001] 100.001001:       1000 cpu-clock:
\t    55d5c0a1b2c3 wsb::JsonCodec::encode(std::vector<int, std::allocator<int> > const&)+0x40 (/b/bench)
\t    55d5c0a1b000 main+0x12 (/b/bench)

bench  4243 [000] 100.002001:       3000 cpu-clock:
\t    7f0000001000 [unknown] (/usr/lib/x86_64-linux-gnu/libxml2.so.2.9.14)
\t    7f0000000000 [unknown] ([unknown])
\t    55d5c0a1b000 main+0x14 (/b/bench)

my server 77/78 100.003001:       1000 cpu-clock:
\t    55d5c0a1c000 wsb::serve;it+0x1 (/b/bench)
"""
ENCODE = "wsb::JsonCodec::encode(std::vector<int, std::allocator<int> > const&)"


class Collapse(unittest.TestCase):
    def test_weights_offsets_and_unknown_frames(self):
        stacks = flamegraph_svg.collapse(PERF_SCRIPT.splitlines(True))
        self.assertEqual(stacks, {
            # Two samples of one stack, offsets dropped: 2 x 1000.
            f"bench;main;{ENCODE}": 2000,
            # An unknown frame is named by its library where perf knows it.
            "bench;main;[unknown];[libxml2.so.2.9.14]": 3000,
            # A command with a space; ";" in a symbol would split the frame.
            "my server;wsb::serve:it": 1000})


class Render(unittest.TestCase):
    def render(self):
        folded = [f"bench;main;{ENCODE} 2000\n", "bench;main;[libxml2.so.2.9.14] 2000\n"]
        return ET.fromstring(flamegraph_svg.render(folded, "a <title>", width=1020))

    def test_widths_are_shares_of_the_samples(self):
        svg = self.render()
        ns = "{http://www.w3.org/2000/svg}"
        frames = {g.find(ns + "title").text: float(g.find(ns + "rect").get("width"))
                  for g in svg.iter(ns + "g")}
        # 1000 px for 4000: bench and main the whole width, each leaf half.
        self.assertEqual(frames["bench (100.00%)"], 1000.0)
        self.assertEqual(frames["main (100.00%)"], 1000.0)
        self.assertEqual(frames[f"{ENCODE} (50.00%)"], 500.0)
        self.assertEqual(frames["[libxml2.so.2.9.14] (50.00%)"], 500.0)
        self.assertIn("a <title>", [t.text for t in svg.iter(ns + "text")])

    def test_command_line_round_trip(self):
        folded = subprocess.run([sys.executable, SCRIPT, "collapse"], input=PERF_SCRIPT,
                                capture_output=True, text=True, check=True).stdout
        svg = subprocess.run([sys.executable, SCRIPT, "render", "--title", "t"], input=folded,
                             capture_output=True, text=True, check=True).stdout
        self.assertIn(f"bench;main;{ENCODE} 2000", folded.splitlines())
        self.assertIn("main (83.33%)", svg)  # 5000 of 6000


if __name__ == "__main__":
    unittest.main()
