#!/usr/bin/env python3
"""Every relative link in README.md, CHANGELOG.md and docs/**/*.md points at
a file that exists, and every #anchor at a heading of that file; README.md
stays a front page of at most 300 lines. Pages moved or renamed break links
silently otherwise: a reader meets a 404, no build fails.

  tests/scripts/docs_links_test.py [ROOT]
"""
import glob
import os
import re
import sys
import unittest

ROOT = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
README_MAX_LINES = 300


def anchors(path):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to
    hyphens, repeats numbered."""
    seen, out = {}, set()
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    for line in text.splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def broken_links(root):
    pages = [os.path.join(root, p) for p in ("README.md", "CHANGELOG.md")]
    pages += glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True)
    problems = []
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = FENCE.sub("", f.read())
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):  # http:, mailto:, data:
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            where = os.path.relpath(page, root)
            if not os.path.exists(dest):
                problems.append(f"{where}: {target}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problems.append(f"{where}: {target}: no such heading")
    return problems


class DocsLinks(unittest.TestCase):
    def test_every_link_resolves(self):
        self.assertEqual(broken_links(ROOT), [])

    def test_a_broken_link_is_found(self):
        # The check must be able to fail: a page with a dead link and a dead
        # anchor beside a good one.
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "docs"))
            with open(os.path.join(tmp, "README.md"), "w") as f:
                f.write("# Top\n## A b, c\n[ok](docs/x.md#the-x) [ok](#a-b-c)\n"
                        "[gone](docs/y.md) [bad](docs/x.md#nope)\n```\n[in code](z.md)\n```\n")
            with open(os.path.join(tmp, "CHANGELOG.md"), "w") as f:
                f.write("# Changes\n")
            with open(os.path.join(tmp, "docs", "x.md"), "w") as f:
                f.write("# The x\n")
            self.assertEqual(broken_links(tmp), ["README.md: docs/y.md: no such file",
                                                 "README.md: docs/x.md#nope: no such heading"])

    def test_readme_is_a_front_page(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            lines = f.read().count("\n")
        self.assertLessEqual(lines, README_MAX_LINES)


if __name__ == "__main__":
    unittest.main()
