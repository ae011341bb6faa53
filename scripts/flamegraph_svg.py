#!/usr/bin/env python3
"""Flame graphs without inferno: perf script's stacks folded, and an SVG.

  perf script -i perf.data | python3 scripts/flamegraph_svg.py collapse > case.folded
  python3 scripts/flamegraph_svg.py render --title TITLE < case.folded > case.svg

scripts/flamegraph uses inferno (inferno-collapse-perf, inferno-flamegraph)
when it is installed and this otherwise, so a flame graph needs nothing
beyond Python: Debian packages no flame graph tool, and its cargo (Rust
1.63) is older than what current inferno releases build with.

collapse: one line per distinct stack, "comm;outermost;...;innermost
WEIGHT", the weight the samples' periods summed as inferno-collapse-perf
sums them; symbols as perf prints them, without their +0x offsets;
"[unknown]" frames named by their library where perf knows it. render: the classic layout (Gregg), the root at the bottom, each
frame as wide as its share of the samples, a tooltip with the share; frames narrower than 0.1 px are left out.
"""
import argparse
import hashlib
import os
import re
import sys
from xml.sax.saxutils import escape, quoteattr

OFFSET = re.compile(r"\+0x[0-9a-f]+$")


def frame_name(line):
    """The symbol of one stack line of perf script ("addr symbol+0x1f (dso)")."""
    parts = line.strip().split(None, 1)
    rest = parts[1] if len(parts) > 1 else parts[0]
    dso = ""
    if rest.endswith(")") and " (" in rest:
        rest, dso = rest.rsplit(" (", 1)
        dso = dso[:-1]
    symbol = OFFSET.sub("", rest.strip())
    if symbol in ("", "[unknown]"):
        library = os.path.basename(dso)
        symbol = f"[{library}]" if library and not library.startswith("[") else "[unknown]"
    return symbol.replace(";", ":")  # ";" separates frames in the folded format


def collapse(lines):
    """{folded stack: summed periods} from perf script's output."""
    stacks, comm, frames, period = {}, None, [], 1

    def flush():
        if comm is not None and frames:
            key = ";".join([comm] + frames[::-1])
            stacks[key] = stacks.get(key, 0) + period

    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            comm, frames = None, []
        elif line[0] in " \t":
            frames.append(frame_name(line))
        else:
            flush()
            # "comm  pid [cpu] time: period event:": the command may hold spaces.
            head = re.match(r"^(.*?)\s+\d+(/\d+)?\s", line)
            comm, frames = (head.group(1) if head else line.split()[0]).replace(";", ":"), []
            weight = re.search(r":\s+(\d+)\s+\S+:\s*$", line)
            period = int(weight.group(1)) if weight else 1
    flush()
    return stacks


def tree(folded):
    """Nested {name: [samples, children]} from folded lines."""
    root = [0, {}]
    for line in folded:
        line = line.strip()
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        samples = int(count)  # summed periods: the unit does not matter, only shares
        root[0] += samples
        node = root
        for name in stack.split(";"):
            node = node[1].setdefault(name, [0, {}])
            node[0] += samples
    return root


def color(name):
    """A warm colour fixed by the name, so a frame looks the same in every graph."""
    h = hashlib.md5(name.encode()).digest()
    return f"rgb({205 + h[0] % 50},{80 + h[1] % 150},{h[2] % 55})"


def render(folded, title, width=1200, height=16, font=12):
    root = tree(folded)
    total = root[0] or 1
    scale = (width - 20) / total
    rects, depth_max = [], 0  # (name, weight, x, depth, width)

    def walk(node, x, depth):
        nonlocal depth_max
        for name, (samples, children) in sorted(node[1].items()):
            w = samples * scale
            if w >= 0.1:
                depth_max = max(depth_max, depth)
                rects.append((name, samples, x, depth, w))
                walk([samples, children], x, depth + 1)
            x += w

    walk(root, 10.0, 0)
    full = (depth_max + 1) * height + 60
    out = [f'<?xml version="1.0" standalone="no"?>\n<svg version="1.1" width="{width}" '
           f'height="{full}" xmlns="http://www.w3.org/2000/svg" '
           f'font-family="Verdana,sans-serif" font-size="{font}">',
           '<rect width="100%" height="100%" fill="#f8f8f0"/>',
           f'<text x="{width / 2}" y="24" text-anchor="middle" font-size="{font + 5}">'
           f'{escape(title)}</text>',
           f'<text x="10" y="{full - 10}">rendered by scripts/flamegraph_svg.py</text>']
    for name, samples, x, depth, w in rects:
        y = full - 40 - (depth + 1) * height
        tip = f"{name} ({100.0 * samples / total:.2f}%)"
        chars = int(w / (font * 0.6))
        label = name if len(name) <= chars else (name[:chars - 2] + ".." if chars > 3 else "")
        out.append(f'<g><title>{escape(tip)}</title><rect x="{x:.1f}" y="{y}" '
                   f'width="{w:.1f}" height="{height - 1}" fill={quoteattr(color(name))} '
                   f'rx="2"/>' + (f'<text x="{x + 3:.1f}" y="{y + height - 4}">'
                                  f'{escape(label)}</text>' if label else "") + "</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("collapse", help="perf script output (stdin) to folded stacks (stdout)")
    r = sub.add_parser("render", help="folded stacks (stdin) to an SVG (stdout)")
    r.add_argument("--title", default="flame graph")
    args = ap.parse_args(argv)
    if args.command == "collapse":
        for stack, samples in sorted(collapse(sys.stdin).items()):
            print(f"{stack} {samples}")
    else:
        sys.stdout.write(render(sys.stdin, args.title))
    return 0


if __name__ == "__main__":
    sys.exit(main())
