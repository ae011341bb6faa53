"""What the interop tests share: the catalogue payloads as the suite writes
them (payload_json, the json codec's bodies), a deep comparison that allows
the double rounding a codec declares, and a check that counts failures."""
import argparse
import json
import math
import subprocess
import sys

# The payloads every client fetches and echoes: every kind, with the
# escaped string shape (markup characters, 2- and 3-byte UTF-8) too.
LABELS = [
    "text",
    "ints/200",
    "strings/200",
    "strings/200:escaped",
    "objects/200",
    "objects/200:escaped",
    "message-a/100",
    "message-a/100:escaped",
    "message-b/64KiB",
    "binary/64KiB",
    "gml/10",
    "gml/10:escaped",
]

# xmlrpc-c's double formatting and parsing move a value by at most 17 ulps
# (src/xmlrpc/xmlrpc_codec.cpp); the suite's own xmlrpc tests allow 1e-14.
RELATIVE_TOLERANCE = 1e-14


def catalogue(payload_json, labels):
    """label -> the payload as a dict of the json codec's body."""
    out = subprocess.run([payload_json, *labels], check=True, capture_output=True, text=True)
    bodies = out.stdout.splitlines()
    assert len(bodies) == len(labels), "payload_json printed %d lines for %d labels" % (
        len(bodies), len(labels))
    return {label: json.loads(body) for label, body in zip(labels, bodies)}


def difference(got, want, where="reply"):
    """The first place where `got` differs from `want`, or None."""
    if isinstance(want, float) or isinstance(got, float):
        if not isinstance(got, (int, float)) or not isinstance(want, (int, float)):
            return "%s: %r is not a number like %r" % (where, got, want)
        if not math.isclose(got, want, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-300):
            return "%s: %r != %r" % (where, got, want)
        return None
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return "%s: %s, not a struct" % (where, type(got).__name__)
        if set(got) != set(want):
            return "%s: members %s, want %s" % (where, sorted(got), sorted(want))
        for key in want:
            found = difference(got[key], want[key], "%s.%s" % (where, key))
            if found:
                return found
        return None
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            return "%s: %r items, want %d" % (
                where, len(got) if isinstance(got, (list, tuple)) else got, len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            found = difference(g, w, "%s[%d]" % (where, i))
            if found:
                return found
        return None
    if type(got) is not type(want) or got != want:
        return "%s: %s %r != %s %r" % (where, type(got).__name__, shorten(got),
                                       type(want).__name__, shorten(want))
    return None


def shorten(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class Checks:
    """Counts checks; prints each failure and a summary line."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def same(self, what, got, want):
        found = difference(got, want)
        self.record(what, found)

    def equal(self, what, got, want):
        self.record(what, None if got == want else "%r != %r" % (shorten(got), shorten(want)))

    def record(self, what, failure):
        if failure:
            self.failed += 1
            print("FAIL: %s: %s" % (what, failure))
        else:
            self.passed += 1
            print("ok: %s" % what)

    def raises(self, what, exception, call):
        try:
            call()
        except exception as e:
            self.record(what, None)
            return e
        except Exception as e:  # noqa: BLE001 - the wrong kind of error is the failure
            self.record(what, "raised %s: %s" % (type(e).__name__, e))
            return None
        self.record(what, "no %s raised" % exception.__name__)
        return None

    def exit(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        sys.exit(1 if self.failed else 0)


def run_on_both_stacks(description, stack, run):
    """Parses --<stack> and --beast (HOST:PORT each) and --payload-json, then
    runs run(checks, name, address, on_beast, payloads) on the library's own
    stack and on the beast stack's route for the protocol; exits."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--" + stack, required=True, help="HOST:PORT of the %s stack" % stack)
    parser.add_argument("--beast", required=True, help="HOST:PORT of the beast stack")
    parser.add_argument("--payload-json", required=True, help="the payload_json helper")
    args = vars(parser.parse_args())
    payloads = catalogue(args["payload_json"], LABELS)
    checks = Checks()
    run(checks, stack, args[stack.replace("-", "_")], False, payloads)
    run(checks, "beast", args["beast"], True, payloads)
    checks.exit()
