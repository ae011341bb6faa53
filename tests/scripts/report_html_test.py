#!/usr/bin/env python3
"""report.html in a real browser: the report of tests/data/experiments
(written by scripts/experiments.py report into a temporary copy, plots
included), turned into report.html by scripts/report_html.py, opened in
headless Chromium (Debian's `chromium`) through the DevTools protocol over
--remote-debugging-pipe (no port, no extra package) at a phone's width,
390 CSS px. Checks:

- every h2 section of report.md is an h2 of the page, in order;
- every image report.md links is an <img> from a data: URI holding the
  PNG byte for byte, that loaded (complete, naturalWidth > 0) and fits the
  width;
- no console error, uncaught exception, failed request or request for
  anything but the file itself and its data: URIs;
- the page does not scroll sideways: wide tables scroll inside their
  .table-wrap box instead.

A second page with a broken image, a console error, an exception, a wide
table outside a wrapper and an external request must fail every one of
those checks, so the checks are shown to be able to fail.

Exit 77 (skipped) when chromium is not installed. Run under `chrt -i 0`
to give the browser idle priority (it inherits it).
"""
import base64
import fcntl
import importlib.util
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FIXTURE = os.path.join(ROOT, "tests", "data", "experiments")
WIDTH = 390
TIMEOUT = 90  # seconds per DevTools answer: a loaded 2-vCPU machine starts chromium slowly

CHROMIUM = os.environ.get("WSBENCH_CHROMIUM") or next(
    (shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
if not CHROMIUM:
    print("SKIP: chromium is not installed (apt-get install chromium)")
    sys.exit(77)

# Debian's python3-markdown and python3-matplotlib live in /usr/bin/python3's
# path, which another python3 first on PATH (pyenv, a venv) may not search.
if not all(importlib.util.find_spec(m) for m in ("markdown", "matplotlib")):
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") \
            and os.path.exists("/usr/bin/python3") and not os.environ.get("WSBENCH_REEXEC"):
        os.environ["WSBENCH_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("report_html_test: needs python3-markdown and python3-matplotlib "
             "(scripts/test installs them)")

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import experiments  # noqa: E402
import report_html  # noqa: E402


class Browser:
    """Headless chromium driven over --remote-debugging-pipe: JSON messages
    ending in NUL, written to its fd 3 and read from its fd 4."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="wsbench-chromium-")
        to_child, self.to_browser = os.pipe()
        self.from_browser, from_child = os.pipe()
        # The child's ends above 9, so that moving them to 3 and 4 cannot
        # close one another.
        for name in ("to_child", "from_child"):
            fd = locals()[name]
            high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
            os.close(fd)
            if name == "to_child":
                to_child = high
            else:
                from_child = high
        args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                "--remote-debugging-pipe", f"--user-data-dir={self.profile}", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                "--disable-background-networking", "--disable-component-update",
                "--disable-dev-shm-usage", "--mute-audio", "about:blank"]
        # bash puts the pipe ends at the descriptors chromium expects.
        shim = f'exec 3<&{to_child} 4>&{from_child} {to_child}<&- {from_child}>&-; exec "$@"'
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(["bash", "-c", shim, "chromium"] + args,
                                     pass_fds=(to_child, from_child), stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log)
        os.close(to_child)
        os.close(from_child)
        self.buffer, self.events, self.next_id = b"", [], 0

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _message(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_browser], [], [], left)[0]:
                raise TimeoutError("chromium did not answer in time" + self._log_tail())
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the pipe" + self._log_tail())
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def _log_tail(self):
        self.log.seek(0)
        return ": " + self.log.read().decode(errors="replace")[-2000:]

    def send(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method, session):
        deadline = time.monotonic() + TIMEOUT
        while True:
            for e in self.events:
                if e.get("method") == method and e.get("sessionId") == session:
                    return
            self.events.append(self._message(deadline))

    def evaluate(self, session, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"evaluate: {result['exceptionDetails']}")
        return result["result"].get("value")


# What the page reports about itself, read in the page once it has loaded.
INSPECT = """(async () => {
  await Promise.all([...document.images].map(i => i.decode().catch(() => null)));
  const width = window.innerWidth;
  return {
    width,
    scrollWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
    h2: [...document.querySelectorAll('h2')].map(h => h.textContent.trim()),
    images: [...document.images].map(i => ({
      data: i.getAttribute('src').startsWith('data:'), complete: i.complete,
      naturalWidth: i.naturalWidth, right: i.getBoundingClientRect().right,
      alt: i.alt})),
    tables: [...document.querySelectorAll('table')].map(t => {
      const wrap = t.parentElement;
      const ok = wrap.classList.contains('table-wrap');
      return {wrapped: ok, overflow: getComputedStyle(wrap).overflowX,
              scrolls: ok && wrap.scrollWidth > wrap.clientWidth,
              right: wrap.getBoundingClientRect().right};
    }),
  };
})()"""


def load(browser, path):
    """(page facts, [problems seen by the DevTools domains]) for one file."""
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target,
                                                     "flatten": True})["sessionId"]
    for domain in ("Runtime", "Log", "Network", "Page"):
        browser.send(f"{domain}.enable", session=session)
    browser.send("Emulation.setDeviceMetricsOverride",
                 {"width": WIDTH, "height": 844, "deviceScaleFactor": 3, "mobile": True},
                 session)
    first = len(browser.events)
    url = "file://" + os.path.abspath(path)
    browser.send("Page.navigate", {"url": url}, session)
    browser.wait_for("Page.loadEventFired", session)
    facts = browser.evaluate(session, INSPECT)
    problems = []
    for e in browser.events[first:]:
        if e.get("sessionId") != session:
            continue
        method, p = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            problems.append("console error: " + " ".join(
                str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            problems.append("exception: " + d.get("exception", {}).get("description",
                                                                       d.get("text", "")))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            problems.append("log error: " + p["entry"].get("text", ""))
        elif method == "Network.loadingFailed":
            problems.append("failed request: " + p.get("errorText", ""))
        elif method == "Network.requestWillBeSent":
            req = p.get("request", {}).get("url", "")
            if req != url and not req.startswith("data:"):
                problems.append("request beyond the file: " + req)
    browser.send("Target.closeTarget", {"targetId": target})
    return facts, problems


def h2_of(md_text):
    """report.md's h2 headings as text (inline code marks dropped)."""
    return [re.sub(r"[`*_]", "", m).strip() for m in re.findall(r"^## (.+)$", md_text, re.M)]


def check(md_text, facts, problems):
    """Every problem of a page made from md_text; [] when it renders well."""
    out = list(problems)
    if facts["h2"] != h2_of(md_text):
        missing = [h for h in h2_of(md_text) if h not in facts["h2"]]
        out.append(f"h2 sections differ from report.md's (missing: {missing})")
    # Alt texts may hold brackets ("get ints[N]"): the shortest match to "](".
    linked = len(re.findall(r"!\[.*?\]\([^)\s]+\)", md_text))
    if len(facts["images"]) != linked:
        out.append(f"{len(facts['images'])} images, report.md links {linked}")
    for img in facts["images"]:
        if not (img["complete"] and img["naturalWidth"] > 0):
            out.append(f"image '{img['alt']}' did not render")
        if not img["data"]:
            out.append(f"image '{img['alt']}' is not inline")
        if img["right"] > facts["width"] + 0.5:
            out.append(f"image '{img['alt']}' is wider than the screen")
    for i, t in enumerate(facts["tables"]):
        if not t["wrapped"] or t["overflow"] not in ("auto", "scroll"):
            out.append(f"table {i + 1} is not in a scrolling wrapper")
    if facts["width"] != WIDTH:
        out.append(f"the layout is {facts['width']} px wide on a {WIDTH} px screen "
                   "(no viewport meta?)")
    if facts["scrollWidth"] > facts["width"]:
        out.append(f"the page scrolls sideways: {facts['scrollWidth']} px wide at "
                   f"{facts['width']} px")
    return out


FAULTY = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<h2>A</h2><img alt="broken" src="missing.png">
<table><tr><td>{}</td></tr></table>
<img alt="remote" src="http://127.0.0.1:9/x.png">
<script>console.error("injected"); throw new Error("injected exception");</script>
</body></html>""".format("x" * 3000)


class ReportHtmlTest(unittest.TestCase):
    maxDiff = None  # a failure lists every problem the page has
    @classmethod
    def setUpClass(cls):
        cls.browser = Browser()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()

    def test_the_report_renders_on_a_phone(self):
        with tempfile.TemporaryDirectory() as d:
            for path in os.listdir(FIXTURE):
                src = os.path.join(FIXTURE, path)
                (shutil.copytree if os.path.isdir(src) else shutil.copy)(
                    src, os.path.join(d, path))
            md_path = experiments.write_report(d)
            with open(md_path) as f:
                md_text = f.read()
            self.assertGreater(len(re.findall(r"!\[", md_text)), 5, "the report has no plots")
            html_path = report_html.convert(md_path)
            with open(html_path) as f:
                page = f.read()
            # Each plot inline byte for byte (a browser shows a truncated PNG).
            altered = []
            for name in re.findall(r"!\[.*?\]\(([^)\s]+)\)", md_text):
                with open(os.path.join(d, name), "rb") as f:
                    if base64.b64encode(f.read()).decode() not in page:
                        altered.append(f"{name} is not inline byte for byte")
            # Self-contained: the page works without the files beside it.
            alone = os.path.join(d, "alone")
            os.mkdir(alone)
            shutil.copy(html_path, alone)
            facts, problems = load(self.browser, os.path.join(alone, "report.html"))
        self.assertEqual(altered + check(md_text, facts, problems), [])
        self.assertEqual(len(facts["h2"]), len(h2_of(md_text)))
        # The wide tables do scroll, inside their boxes.
        self.assertTrue(any(t["scrolls"] for t in facts["tables"]))

    def test_the_checks_see_faults(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "faulty.html")
            with open(path, "w") as f:
                f.write(FAULTY)
            facts, problems = load(self.browser, path)
        found = "\n".join(check("## A\n\n## B\n\n![x](x.png)\n", facts, problems))
        for expected in ("console error: injected", "exception: Error: injected exception",
                         "failed request", "request beyond the file: http://127.0.0.1:9/x.png",
                         "h2 sections differ", "image 'broken' did not render",
                         "image 'remote' is not inline", "2 images, report.md links 1",
                         "table 1 is not in a scrolling wrapper", "the page scrolls sideways",
                         "no viewport meta"):
            self.assertIn(expected, found)


if __name__ == "__main__":
    unittest.main()
