"""What the interop tests share: the payloads they use, a check that counts
failures, and running a test on a library stack and on beast. The
catalogue and the reply conversions are in runtimes/python/wsbench_replies.py."""
import argparse
import os
import sys

# The reply conversions live with the Python runtime driver, which uses them too.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "runtimes", "python"))
from wsbench_replies import catalogue, difference, shorten  # noqa: E402

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
