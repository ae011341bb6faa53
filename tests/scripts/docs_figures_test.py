#!/usr/bin/env python3
"""Every measured figure in the docs names its run, and README's glance is
the published folder's.

  tests/scripts/docs_figures_test.py [ROOT]         run the tests
  tests/scripts/docs_figures_test.py --list [ROOT]  print the sections that
                                                    break the rule

The rule a page follows. A section runs from its heading to the next
heading of any level. A section that shows a measured figure (a number with
a unit of time per call, ns, us, µs or ms; a rate, req/s, calls/s, MiB/s or
GiB/s; a count of instructions; or a table with an "x floor" or
"stack/anchor" column; a duration right after "every", "sleeps",
"stalls", "after", "within" or "up to" is a setting, not a measurement)
names its run in its own text or in the text of a
heading it sits under (from that heading to its first subheading):
  - a commit, 7-40 hex digits with a letter and a digit among them
    (69fd108) or after the word commit, or a results folder, docs/results/<date>-<commit> or
    results/<...>, and
  - a date, YYYY-MM-DD (a results folder's name has one).
A section whose figures are not measurements (limits and timeouts, a
paper's figures, a worked example) says so with the line
  <!-- figures: not measured -->
(a reason may follow a colon inside the comment). Figures inside fenced
code blocks count: a pasted summary is a measurement too.

Pages left out, as records or as other people's figures: docs/results/
(the published runs themselves, generated), docs/papers/ (the papers'
figures), docs/development/history.md and CHANGELOG.md (records of past
runs). Sections that break the rule and are not fixed yet are listed, one
"page#anchor  reason" a line, in docs_figures_allow.txt beside this file;
an entry whose section no longer breaks the rule fails too, so the list
only shrinks.

The glance: README.md's block between <!-- glance:begin --> and
<!-- glance:end --> names the folder it was made from, that folder is under
docs/results/, and the block is what scripts/glance.py makes from it
(publish_test checks glance.py on a fixture, not the README against the
published folder). A part of the block that differs for a known reason is
allowed by an entry "README.md#glance:<part>  reason" in the same list.

The summary excerpt: the fenced block after README.md's
<!-- summary-excerpt --> is cut from the same folder's bench-summary.md,
every line of it ("..." marks a cut) a line of that file. CITATION.cff
names the same folder, and its commit is the folder's.
"""
import glob
import os
import re
import sys
import unittest

LIST = "--list" in sys.argv
if LIST:
    sys.argv.remove("--list")
ROOT = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 and os.path.isdir(sys.argv[1])
                       else os.path.join(os.path.dirname(__file__), "..", ".."))
HERE = os.path.dirname(os.path.abspath(__file__))
ALLOW = os.path.join(HERE, "docs_figures_allow.txt")

NUM = r"(?<![\w.])\d[\d,]*(?:\.\d+)?"
FIGURE = re.compile(
    NUM + r"(?:\s*(?:-|–|to)\s*" + NUM + r")?\s*"
    r"(?:ns|us|µs|ms|req/s|calls/s|MiB/s|GiB/s|MB/s|instructions|instr\b|Ir\b)(?![\w/])"
    r"|\|\s*x floor\s*\||\|\s*stack/anchor\s*\|")
# A commit: 7-40 hex digits with at least one digit and one letter.
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b|"
                    r"\bcommit\s+`?[0-9a-f]{7,40}\b|\bresults/[\w.:/-]+")
# A duration after one of these words is a setting (a period, an injected
# sleep, a bound), not a measurement: "every 250 ms", "sleeps 20 ms".
SETTING = re.compile(r"(?:\bevery|\bsleeps?|\bstalls?|\bafter|\bwithin|\bup to)\s+(?:about\s+)?$")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d")
OPT_OUT = re.compile(r"<!--\s*figures:\s*not measured\b.*?-->")
HEADING = re.compile(r"(#{1,6})\s+(.*)")
SKIP = ("docs/results/", "docs/papers/", "docs/development/history.md")


def slug(title, seen):
    """GitHub's heading anchor, as docs_links_test makes it."""
    s = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
    n = seen.get(s, 0)
    seen[s] = n + 1
    return s if n == 0 else f"{s}-{n}"


def sections(text):
    """[(anchor, level, intro, body)]: body runs to the next heading; intro is
    the part a subsection inherits (the same text: it ends at the first
    subheading). The text before the first heading is section ''."""
    out, seen = [["", 0, []]], {}
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else HEADING.match(line)
        if m:
            out.append([slug(m.group(2), seen), len(m.group(1)), []])
        out[-1][2].append(line)
    return [(a, lvl, "\n".join(body)) for a, lvl, body in out]


def has_figure(text):
    return any(not SETTING.search(text[max(0, m.start() - 20):m.start()])
               for m in FIGURE.finditer(text))


def names_run(text):
    return bool(COMMIT.search(text)) and bool(DATE.search(text))


def unnamed(text):
    """Anchors of the sections with a measured figure and no named run."""
    found, parents = [], []  # parents: (level, text) of the enclosing headings
    for anchor, level, body in sections(text):
        while parents and parents[-1][0] >= level:
            parents.pop()
        context = body + "\n" + "\n".join(t for _, t in parents)
        if has_figure(body) and not OPT_OUT.search(body) and not names_run(context):
            found.append(anchor)
        parents.append((level, body))
    return found


def pages(root):
    out = [os.path.join(root, "README.md")]
    out += sorted(glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))
    return [p for p in out if not os.path.relpath(p, root).startswith(SKIP)]


def flagged(root):
    out = []
    for page in pages(root):
        with open(page, encoding="utf-8") as f:
            text = f.read()
        rel = os.path.relpath(page, root)
        out += [f"{rel}#{a}" for a in unnamed(text)]
    return out


def allowed():
    """{entry: reason} from the allow-list; each line 'page#anchor  reason'."""
    out = {}
    if os.path.exists(ALLOW):
        with open(ALLOW, encoding="utf-8") as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    entry, _, reason = line.strip().partition(" ")
                    out[entry] = reason.strip()
    return out


# ---- the glance ----

def glance_parts(block):
    """{'source', 'machine', 'ping', 'claims', 'plot'}: the block cut at its
    paragraphs, so a difference names the part it is in."""
    paras = [p.strip() for p in block.strip().split("\n\n")]
    parts = {"source": paras[0], "machine": paras[1]}
    ping = [p for p in paras if p.startswith("**Ping") or p.startswith("| protocol")]
    parts["ping"] = "\n\n".join(ping)
    claims = [p for p in paras[2:] if p not in ping and not p.startswith("![")]
    parts["claims"] = "\n\n".join(claims)
    parts["plot"] = "\n\n".join(p for p in paras if p.startswith("!["))
    return parts


def readme_glance(root):
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        text = f.read()
    start, end = text.find("<!-- glance:begin -->"), text.find("<!-- glance:end -->")
    return text[start + len("<!-- glance:begin -->"):end] if 0 <= start < end else None


def glance_folder(block):
    """The published folder (docs/results/<name>) README's glance names, or None."""
    m = re.search(r"generated by scripts/publish from (docs/results/[\w.-]+)", block or "")
    return m.group(1) if m else None


def glance_differences(root, block):
    """The parts of block that are not what glance.py makes from its folder."""
    folder = glance_folder(block)
    if not folder or not os.path.isdir(os.path.join(root, folder)):
        return ["source"]
    sys.path.insert(0, os.path.join(root, "scripts"))
    import glance  # noqa: E402  (the published block's maker)
    expected = glance_parts(glance.glance(os.path.join(root, folder), folder))
    return [k for k, v in glance_parts(block).items() if expected[k] != v]


def summary_excerpt(root):
    """The lines of README's summary excerpt, without the cut marks."""
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        text = f.read()
    at = text.find("<!-- summary-excerpt -->")
    m = re.search(r"```\w*\n(.*?)```", text[at:], re.S) if at >= 0 else None
    if m is None:
        return None
    return [line.rstrip() for line in m.group(1).splitlines()
            if line.strip() and line.strip() != "..."]


def excerpt_differences(root, lines, block):
    """The excerpt's lines that the glance folder's bench-summary.md lacks."""
    folder = glance_folder(block)
    path = os.path.join(root, folder, "bench-summary.md") if folder else ""
    if not os.path.isfile(path):
        return ["no bench-summary.md in the glance's folder"]
    with open(path, encoding="utf-8") as f:
        published = {line.rstrip() for line in f}
    return [line for line in lines if line not in published]


# ---- the tests ----

class Rule(unittest.TestCase):
    """The rule on known text."""

    def test_unnamed_figure_is_flagged(self):
        self.assertEqual(unnamed("# T\n\n## Ping\n\nbeast/json takes 22.09 us a call.\n"),
                         ["ping"])

    def test_commit_and_date_in_section_or_heading_above(self):
        named = "## Ping\n\nRun of commit `69fd108`, 2026-11-28: 22.09 us.\n"
        self.assertEqual(unnamed(named), [])
        self.assertEqual(unnamed("## P\n\nat commit 8279518, 2026-11-26: 5 us\n"), [])
        nested = "## Run `69fd108`, 2026-11-28\n\nintro\n\n### Ping\n\n22.09 us\n"
        self.assertEqual(unnamed(nested), [])
        sibling = "## A\n\n`69fd108`, 2026-11-28\n\n## B\n\n22.09 us\n"
        self.assertEqual(unnamed(sibling), ["b"])

    def test_commit_without_date_is_not_enough(self):
        self.assertEqual(unnamed("## P\n\n`69fd108`: 22.09 us\n"), ["p"])

    def test_results_folder_names_both(self):
        self.assertEqual(unnamed("## P\n\n[run](results/2026-11-26-319dbcc/): 5 us\n"), [])

    def test_units_and_tables(self):
        for fig in ("9,800 req/s", "1.2 ms", "40 µs", "12,345 instructions", "310 MiB/s",
                    "| case | us | x floor |", "| row | stack/anchor |"):
            self.assertEqual(unnamed(f"## P\n\n{fig}\n"), ["p"], fig)
        for not_fig in ("a 60 s timeout", "checked every 250 ms", "sleeps 20 ms", "128 MiB at most", "1 Gbit/s", "E1-E9",
                        "sizes 200-800", "x2.5"):
            self.assertEqual(unnamed(f"## P\n\n{not_fig}\n"), [], not_fig)

    def test_opt_out_and_code_fences(self):
        self.assertEqual(unnamed("## P\n\n<!-- figures: not measured: limits -->\n5 ms\n"),
                         [])
        self.assertEqual(unnamed("## P\n\n```\n# not a heading\nrtt 25 us\n```\n"), ["p"])


class Docs(unittest.TestCase):
    def test_every_figure_names_its_run(self):
        allow = allowed()
        flags = flagged(ROOT)
        self.assertEqual([f for f in flags if f not in allow], [],
                         "sections with a measured figure and no run named "
                         "(commit and date, or a results folder); see this file's docstring")
        glance_entries = {e for e in allow if e.startswith("README.md#glance:")}
        self.assertEqual(sorted(set(allow) - set(flags) - glance_entries), [],
                         "allow-list entries that no longer break the rule: remove them")

    def test_glance_is_the_published_folders(self):
        block = readme_glance(ROOT)
        self.assertIsNotNone(block, "README.md has no glance markers")
        allow = allowed()
        diff = glance_differences(ROOT, block)
        self.assertEqual([d for d in diff if f"README.md#glance:{d}" not in allow], [],
                         "README's glance is not what scripts/glance.py makes from the "
                         "folder it names; run scripts/publish")
        stale = [e for e in allow if e.startswith("README.md#glance:")
                 and e.split(":", 1)[1] not in diff]
        self.assertEqual(stale, [], "glance allow-list entries that now match: remove them")

    def test_summary_excerpt_is_the_published_runs(self):
        lines = summary_excerpt(ROOT)
        self.assertTrue(lines, "README.md has no <!-- summary-excerpt --> block")
        self.assertEqual(excerpt_differences(ROOT, lines, readme_glance(ROOT)), [],
                         "README's summary excerpt has lines that the published run's "
                         "bench-summary.md does not")

    def test_excerpt_check_fails_on_an_edited_line(self):
        lines = summary_excerpt(ROOT)
        row = next(i for i, line in enumerate(lines) if re.search(r"\d+\.\d+ us", line))
        edited = lines[:row] + [re.sub(r"(\d+)\.(\d+) us", lambda m: f"{int(m.group(1)) + 1}."
                                       f"{m.group(2)} us", lines[row], count=1)] + lines[row + 1:]
        self.assertEqual(excerpt_differences(ROOT, edited, readme_glance(ROOT)), [edited[row]])

    def test_citation_names_the_published_run(self):
        folder = glance_folder(readme_glance(ROOT))
        self.assertIsNotNone(folder, "README's glance names no published folder")
        with open(os.path.join(ROOT, "CITATION.cff"), encoding="utf-8") as f:
            citation = f.read()
        self.assertIn(folder, citation.replace("\n  ", " "),
                      "CITATION.cff does not name the published run")
        commit = re.search(r"^commit:\s*([0-9a-f]{7,40})", citation, re.M)
        self.assertIsNotNone(commit, "CITATION.cff has no commit")
        self.assertTrue(folder.endswith(commit.group(1)[:7]),
                        f"CITATION.cff's commit {commit.group(1)[:7]} is not {folder}'s")

    def test_glance_check_fails_on_an_edited_figure(self):
        block = readme_glance(ROOT)
        row = re.search(r"^\| [^|]+ \| `[^`]+` \| ([\d.]+) \|", block, re.M)
        edited = block.replace(row.group(0), row.group(0).replace(
            row.group(1), str(float(row.group(1)) + 1)), 1)
        self.assertIn("ping", glance_differences(ROOT, edited))


if __name__ == "__main__":
    if LIST:
        allow = allowed()
        for f in flagged(ROOT):
            print(f, "(allowed)" if f in allow else "")
        sys.exit(0)
    unittest.main()
