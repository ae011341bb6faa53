#!/usr/bin/env python3
"""report.html from report.md: one self-contained file a phone can read.

  scripts/report_html.py REPORT.md [-o REPORT.html] [--title TEXT]

Markdown to HTML by Python-Markdown (Debian python3-markdown) with its
tables and toc extensions. Each image the report links is read from beside
REPORT.md and inlined as a data: URI, and the style sheet is inline, so the
file opens offline, from a mail attachment or a phone's downloads, with no
request beyond itself and no script. Tables scroll sideways inside their
own box; the page itself never does. A linked image that is not there is an
error, not a broken picture in a published page.
"""
import argparse
import base64
import html
import os
import re
import sys

# Inline HTML in report.md is text (case names, error messages, paths such
# as results/runtimes-<UTC time>/), never markup: its tags are escaped.
RAW_HTML_HANDLERS = [("preprocessors", "html_block"), ("inlinePatterns", "html")]

MIME = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg",
        ".jpeg": "image/jpeg", ".gif": "image/gif"}

# Phone first: the body is at most one screen wide; wide tables scroll in
# .table-wrap (overflow-x: auto) and images shrink to the width. A table is
# as wide as its cells want (max-content, a long cell wraps at 20rem)
# rather than squeezed to the screen into columns a word wide.
CSS = """
:root { color-scheme: light dark; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 0.75rem;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  overflow-wrap: break-word; }
h1 { font-size: 1.5rem; line-height: 1.25; }
h2 { font-size: 1.25rem; margin-top: 2rem; border-bottom: 1px solid #8884; }
h3 { font-size: 1.05rem; }
img { max-width: 100%; height: auto; display: block; }
code { font-size: 0.9em; background: #8881; padding: 0 0.2em; border-radius: 3px;
  overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; -webkit-overflow-scrolling: touch; max-width: 100%;
  margin: 0.75rem 0; border: 1px solid #8884; }
table { border-collapse: collapse; font-size: 0.85rem; width: max-content; }
th, td { padding: 0.25rem 0.5rem; border: 1px solid #8883; vertical-align: top;
  text-align: left; }
td { max-width: 20rem; }
thead th { position: sticky; top: 0; background: Canvas; }
nav.toc { font-size: 0.9rem; border: 1px solid #8884; padding: 0.25rem 0.75rem; }
nav.toc ul { padding-left: 1.25rem; margin: 0.25rem 0; }
@media (max-width: 40rem) { body { font-size: 15px; padding: 0.5rem; } }
"""


def markdown_module():
    try:
        import markdown
    except ImportError:
        sys.exit("report_html: Python-Markdown is missing: apt-get install python3-markdown "
                 "(scripts/publish installs it)")
    return markdown


def converter():
    md = markdown_module().Markdown(extensions=["tables", "toc"],
                                    extension_configs={"toc": {"toc_depth": "2"}})
    for registry, name in RAW_HTML_HANDLERS:
        getattr(md, registry).deregister(name, strict=False)
    return md


def data_uri(folder, src):
    """src (a path relative to the report) as a data: URI."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", src, re.I):
        raise ValueError(f"image {src}: not a file beside the report (no external fetches)")
    path = os.path.join(folder, src)
    ext = os.path.splitext(src)[1].lower()
    if ext not in MIME:
        raise ValueError(f"image {src}: unknown type {ext or '(none)'}")
    try:
        with open(path, "rb") as f:
            payload = base64.b64encode(f.read()).decode("ascii")
    except OSError as e:
        raise ValueError(f"image {src}: {e.strerror}") from None
    return f"data:{MIME[ext]};base64,{payload}"


def inline_images(body, folder):
    def swap(m):
        return m.group(1) + data_uri(folder, html.unescape(m.group(2))) + m.group(3)
    return re.sub(r'(<img\b[^>]*?\bsrc=")([^"]*)(")', swap, body)


def wrap_tables(body):
    return re.sub(r"<table>(.*?)</table>", r'<div class="table-wrap"><table>\1</table></div>',
                  body, flags=re.S)


def toc_html(md):
    """The h2 sections as a list of links, so a phone need not scroll to find one."""
    def flat(tokens):  # toc_tokens nest each heading's subheadings in it
        for t in tokens:
            yield t
            yield from flat(t.get("children", []))
    items = [t for t in flat(getattr(md, "toc_tokens", [])) if t.get("level") == 2]
    if not items:
        return ""
    # toc_tokens' names are already HTML (Python-Markdown escapes them).
    links = "".join(f'<li><a href="#{html.escape(t["id"])}">{t["name"]}</a></li>' for t in items)
    return f'<nav class="toc"><strong>Sections</strong><ul>{links}</ul></nav>'


def render(md_text, folder, title=None):
    md = converter()
    body = md.convert(md_text)
    body = wrap_tables(inline_images(body, folder))
    # The table of contents after the h1 (or first, without one).
    nav = toc_html(md)
    h1_end = body.find("</h1>")
    body = body[:h1_end + 5] + nav + body[h1_end + 5:] if h1_end >= 0 else nav + body
    if title is None:
        m = re.search(r"^# (.+)$", md_text, re.M)
        title = m.group(1).strip() if m else "wsbench report"
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            # No request leaves the file: images are data: URIs, styles inline.
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "img-src data:; style-src 'unsafe-inline'\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f"{body}\n</body>\n</html>\n")


def convert(md_path, html_path=None, title=None):
    with open(md_path, encoding="utf-8") as f:
        text = f.read()
    page = render(text, os.path.dirname(os.path.abspath(md_path)), title)
    html_path = html_path or os.path.splitext(md_path)[0] + ".html"
    with open(html_path, "w", encoding="utf-8") as f:
        f.write(page)
    return html_path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", help="a report.md; its images are read from its folder")
    ap.add_argument("-o", "--out", help="the HTML file (default: REPORT with .html)")
    ap.add_argument("--title", help="the page title (default: the report's first heading)")
    args = ap.parse_args(argv)
    try:
        print(convert(args.report, args.out, args.title))
    except ValueError as e:
        print(f"report_html: {args.report}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
