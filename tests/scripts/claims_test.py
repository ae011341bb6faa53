#!/usr/bin/env python3
"""scripts/claims.py against known data: interval arithmetic, the
three-valued tests, the common-transport substitution, and the report's
rows for claims that hold, fail, are undecided, miss a case, partly failed,
or whose rule is broken."""
import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import claims  # noqa: E402
import summarize  # noqa: E402


def rows(name, p50s, errors=0, **counters):
    """Google Benchmark rows of one rtt case: one per repetition."""
    out = [dict({"run_name": name, "run_type": "iteration", "p50_us": v, "real_time": v * 1e3,
                 "time_unit": "ns"}, **{k: c[i] for k, c in counters.items()})
           for i, v in enumerate(p50s)]
    out += [{"run_name": name, "run_type": "iteration", "error_occurred": True,
             "error_message": "verification failed: wrong reply"}] * errors
    return out


class FakeResults:
    def __init__(self, benchmarks=(), runs=()):
        self.cases = summarize.load_cases(list(benchmarks))
        self.runs = list(runs)

    def reason(self, name):
        case = self.cases.get(name)
        return "not in the run" if case is None else case.reason()


SOAP = claims.rtt("gsoap/soap", "ping")
REST = claims.rtt("beast/json", "ping")
SOAP_BEAST = claims.rtt("beast/soap", "ping")
SIX = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0]


def scaled(k):
    return [k * v for v in SIX]


class IntervalTest(unittest.TestCase):
    def test_ratio_takes_the_extremes(self):
        a, b = claims.Interval(10, 9, 11, "a"), claims.Interval(2, 1, 4, "b")
        r = a / b
        self.assertEqual((r.mid, r.lo, r.hi), (5, 9 / 4, 11))
        s = a + b
        self.assertEqual((s.mid, s.lo, s.hi), (12, 10, 15))
        self.assertEqual(((a * 2).lo, (a * 2).hi), (18, 22))

    def test_a_ratio_over_an_interval_holding_zero_is_undecided(self):
        with self.assertRaises(claims.Undecided):
            claims.Interval(1, 1, 1, "a") / claims.Interval(0.1, -0.1, 0.3, "b")

    def test_within_is_three_valued(self):
        v = claims.Verdicts()
        self.assertIs(v.within(claims.Interval(3.5, 3.2, 3.8, "x"), 3, 4), True)
        self.assertIs(v.within(claims.Interval(5, 4.5, 5.5, "x"), 3, 4), False)
        self.assertIs(v.within(claims.Interval(4, 3.5, 4.5, "x"), 3, 4), None)
        self.assertIs(v.above(claims.Interval(1, 1, 1, "x"), 1), False)  # equal is not above
        self.assertIs(v.below(claims.Interval(0.5, 0.4, 0.6, "x"), 1), True)

    def test_combinators(self):
        v = claims.Verdicts()
        self.assertIs(v.all_of(True, None), None)
        self.assertIs(v.all_of(True, False, None), False)
        self.assertIs(v.any_of(False, None), None)
        self.assertIs(v.any_of(False, True), True)
        self.assertIs(v.most_of(True, True, False), True)
        self.assertIs(v.most_of(True, False, None, None), None)
        self.assertIs(v.most_of(True, False), False)  # half failed: not "most"
        self.assertIs(v.not_(None), None)

    def test_student_t_interval(self):
        mean, lo, hi = claims.t_interval([10.0, 12.0, 14.0])
        self.assertEqual(mean, 12.0)
        self.assertAlmostEqual(hi - mean, 4.303 * 2 / math.sqrt(3), places=6)
        self.assertIsNone(claims.t_interval([10.0]))


class CommonTransportTest(unittest.TestCase):
    def test_library_stacks_are_replaced_by_beast(self):
        rule = ("within(t(rtt('gsoap/soap-mtom', 'send', 'm')) / t(rtt('gsoap/soap', 'send', "
                "'m')), 0, 1) and e8('xmlrpc-c/xmlrpc', 'x1', 'rss_mb')")
        common = claims.to_common(rule)
        self.assertIn("'beast/soap-mtom'", common)
        self.assertIn("'beast/soap'", common)
        self.assertIn("'beast/xmlrpc'", common)
        self.assertNotIn("gsoap", common)

    def test_only_rules_across_stacks_are_decided_twice(self):
        self.assertTrue(claims.crosses_stacks(f"faster('{REST}', '{SOAP}')"))
        self.assertFalse(claims.crosses_stacks(
            "faster(rtt('gsoap/soap-mtom', 'get', 'x'), rtt('gsoap/soap', 'get', 'x'))"))
        self.assertFalse(claims.crosses_stacks("faster('decode/json/x', 'decode/xml/x')"))


class DecideTest(unittest.TestCase):
    def decide(self, rule, benchmarks=(), runs=(), **row):
        return claims.decide(dict({"rule": rule, "note": ""}, **row),
                             FakeResults(benchmarks, runs))

    def test_a_stack_effect_is_named(self):
        # REST 3x faster than SOAP on the libraries' stacks; on the common
        # transport SOAP is as fast: the verdict is the stack's.
        data = rows(REST, scaled(10)) + rows(SOAP, scaled(30)) + rows(SOAP_BEAST, scaled(10))
        d = self.decide(f"faster('{REST}', '{SOAP}')", data)
        self.assertEqual(d["lib"], "holds")
        self.assertTrue(d["common"].startswith("does not hold") or
                        d["common"].startswith("inconclusive"), d)
        d = self.decide(f"faster('{REST}', '{SOAP}', by=2)", data)
        self.assertEqual(d["lib"], "holds")
        self.assertEqual(d["common"], "does not hold")
        self.assertRegex(d["who"], r"^stack: .*stacks' factor 3")

    def test_agreeing_transports_make_it_the_protocols(self):
        data = rows(REST, scaled(10)) + rows(SOAP, scaled(30)) + rows(SOAP_BEAST, scaled(25))
        d = self.decide(f"faster('{REST}', '{SOAP}', by=2)", data)
        self.assertEqual((d["lib"], d["common"]), ("holds", "holds"))
        self.assertTrue(d["who"].startswith("protocol"), d)
        self.assertIn("median over repetitions", d["interval"])

    def test_overlapping_intervals_are_inconclusive(self):
        data = rows(REST, scaled(10)) + rows(SOAP, scaled(10.05))
        self.assertTrue(self.decide(f"faster('{REST}', '{SOAP}')", data)["lib"]
                        .startswith("inconclusive"))

    def test_too_few_repetitions_say_why(self):
        data = rows(REST, [10, 10, 10]) + rows(SOAP, [30, 30, 30])
        d = self.decide(f"faster('{REST}', '{SOAP}')", data)
        self.assertRegex(d["lib"], r"^inconclusive: .*3 repetitions give no CI95")

    def test_a_missing_case_is_not_measurable(self):
        d = self.decide(f"faster('{REST}', '{SOAP}')", rows(REST, scaled(10)))
        self.assertRegex(d["lib"], r"^not measurable here: gsoap/soap/ping: not in the run")

    def test_partial_failures_are_marked(self):
        data = rows(REST, scaled(10)) + rows(SOAP, scaled(30) * 2, errors=2)
        d = self.decide(f"faster('{REST}', '{SOAP}')", data)
        self.assertRegex(d["lib"], r"^holds \(on the repetitions that succeeded: "
                                   r"gsoap/soap/ping: 2 of 14 repetitions failed")

    def test_a_broken_rule_is_an_error_not_a_crash(self):
        d = self.decide("faster(rtt('beast/json', 'ping'))", rows(REST, scaled(10)))
        self.assertTrue(d["lib"].startswith("error: TypeError"), d)
        d = self.decide("1 + 1", ())
        self.assertTrue(d["lib"].startswith("error: the rule gave 2"), d)

    def test_exact_bytes_decide_alone(self):
        a, b = claims.rtt("gsoap/soap-mtom", "send", "m"), claims.rtt("gsoap/soap", "send", "m")
        data = rows(a, [1] * 2, request_bytes=[750, 750]) + \
            rows(b, [1] * 2, request_bytes=[1000, 1000])
        rule = f"within(bytes_('{a}', 'request_bytes') / bytes_('{b}', 'request_bytes'), 0.7, 0.8)"
        d = self.decide(rule, data)
        self.assertEqual(d["lib"], "holds")
        self.assertEqual(d["who"], "protocol (one stack, gsoap)")
        self.assertIn("byte count", d["interval"])
        # A count that moves across the bound between repetitions decides nothing.
        data = rows(a, [1] * 2, request_bytes=[790, 810]) + \
            rows(b, [1] * 2, request_bytes=[1000, 1000])
        self.assertTrue(self.decide(rule, data)["lib"].startswith("inconclusive"))

    def test_largest_phase(self):
        name = claims.rtt("beast/json", "send", "m")
        phases = {f"phase:{p}_us": [1.0] * 6 for p in claims.PHASES}
        phases["phase:request_transfer_us"] = [5.0, 5.1, 4.9, 5.0, 5.2, 4.8]
        data = rows(name, scaled(20), **phases)
        self.assertEqual(self.decide(f"largest('{name}', 'request_transfer')", data)["lib"],
                         "holds")
        self.assertEqual(self.decide(f"largest('{name}', 'service')", data)["lib"],
                         "does not hold")

    def test_e7_needs_six_repetitions(self):
        def cell(column, stack, mean, rep):
            return {"experiment": "E7", "column": column, "shape": "10x4",
                    "target": f"{stack} primes:100000", "repetition": rep, "errors": {},
                    "latency_ms": {"mean": mean, "stddev": 1, "min": 1, "max": 2}}
        rule = ("below(e7('REST', 'beast/json', '10x4') / e7('SOAP', 'gsoap/soap', '10x4'), "
                "1.0)")
        runs = [cell("REST", "beast/json", 50 + r, r) for r in range(6)] + \
            [cell("SOAP", "gsoap/soap", 100 + r, r) for r in range(6)]
        d = self.decide(rule, runs=runs)
        self.assertEqual(d["lib"], "holds")
        self.assertTrue(d["common"].startswith("not run: wsbench-load's E7 and E8"), d)
        d = self.decide(rule, runs=runs[:1] + runs[6:7])
        self.assertRegex(d["lib"], r"^inconclusive: .*1 repetition\(s\) give no CI95")

    def test_e8_with_one_search_is_undecided(self):
        def run(stack, users, at_bound, rep):
            return {"experiment": "E8", "size": "x1", "target": f"{stack} dictionary:x1:90",
                    "max_users": users, "max_users_at_bound": at_bound, "errors": {},
                    "repetition": rep}
        rule = "above(e8('beast/json', 'x1', 'max_users') / e8('gsoap/soap', 'x1', " \
               "'max_users'), 1.0)"
        d = self.decide(rule, runs=[run("beast/json", 68, False, 0),
                                    run("gsoap/soap", 50, False, 0)])
        self.assertRegex(d["lib"], r"^inconclusive: .*one search")
        runs = [run("beast/json", u, False, i) for i, u in enumerate((66, 68, 70))] + \
            [run("gsoap/soap", u, False, i) for i, u in enumerate((49, 50, 51))]
        self.assertEqual(self.decide(rule, runs=runs)["lib"], "holds")
        # Both at the search's bound: neither is known to serve more.
        runs = [run(s, 128, True, i) for s in ("beast/json", "gsoap/soap") for i in range(3)]
        self.assertTrue(self.decide(rule, runs=runs)["lib"].startswith("inconclusive"))


if __name__ == "__main__":
    unittest.main()
