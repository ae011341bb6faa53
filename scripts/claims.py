"""The papers' claims (docs/papers/claims.csv) decided on a run's results.

A rule is a Python expression over intervals (values over independent
repetitions, never pooled calls) and three-valued tests: True holds, False
does not hold, None inconclusive (the intervals overlap the bound). A
figure that gives no interval (too few repetitions, a ratio over an
interval holding 0) or is not in the run makes only the comparisons that
use it None, so all_of/any_of/most_of/not_ combine it in Kleene's logic: a
failed conjunct decides an all_of whatever the undecided ones are. A rule
left None by a figure the run lacks is "not measurable here"; one decided
without it says which figures it did without.

Every rule is decided again once per factor (FACTORS) whose substitution
changes it: the library stacks replaced by the same encodings over the
common Beast transport ("stack"), and the codec rows replaced by the same
encoding with another codec library's choice ("xml": base64 not wrapped by
libxml2; "json": parsed by simdjson). A verdict that every
applicable factor leaves the same is the protocol's; one that a factor
flips is that factor's.
"""
import ast
import functools
import math
import re
import statistics

import summarize  # noqa: E402  (the statistics rules of every table)

# Library stack -> the same encoding over the common Beast transport.
COMMON_TRANSPORT = {"gsoap/soap-mtom": "beast/soap-mtom", "gsoap/soap-swa": "beast/soap-swa",
                    "gsoap/soap": "beast/soap", "xmlrpc-c/xmlrpc": "beast/xmlrpc"}
# Codec rows -> the same encoding on the same stack with another codec
# library's choice, one factor each so that a REST-XML against REST-JSON
# verdict names which choice flips it: REST-XML whose base64 libxml2 does
# not break every 72 characters, REST-JSON parsed by simdjson instead of
# RapidJSON.
XML_ALTERNATIVE = {"beast/xml": "beast/xml-unwrapped"}
JSON_ALTERNATIVE = {"beast/json": "beast/json-simdjson"}
PHASES = summarize.PHASES
# Two-sided Student t quantiles (95%) by degrees of freedom, for E8's
# figures over a handful of repetitions (on the log scale).
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}

# What each kind of value's interval is; the report prints the ones a
# claim used.
INTERVALS = {
    "time": "median over repetitions, distribution-free CI95 of the median (order statistics; "
            "needs 6 repetitions)",
    "bytes": "byte count on the socket: every repetition's (their range; they differ by a "
             "digit of an id or a length at most)",
    "encoded": "bytes the encoder writes (the encoded message with its envelope and "
               "attachment parts, no HTTP): every repetition's (their range)",
    "e7": "median over repetitions, each a separate server process, distribution-free CI95 "
          "(needs 6 repetitions)",
    # Three repetitions allow no distribution-free 95% interval (their range
    # covers the median with 75%), and Student-t on the values themselves
    # leaves the range of a positive quantity (CPU% [-4.8, 160]); on the log
    # scale the interval stays above 0 and a ratio's is a ratio's.
    "e8": "geometric mean over repetitions, each a separate server process with its own ramp "
          "and search, Student-t 95% on the log scale (stays above 0; assumes the "
          "repetitions spread log-normally; needs 2, 3 in a full run)",
    "e8-range": "E8 figure with a repetition at 0 (no log scale): median and the range of the "
                "repetitions, which covers the median with probability 1 - 2 x 0.5^n (75% at "
                "n = 3, 87.5% at 4, 93.75% at 5, 96.88% at 6), not 95%",
}


class Unmeasurable(Exception):
    """A figure the rule needs is not in the run."""


class Undecided(Exception):
    """The figure is there but gives no interval (too few repetitions)."""


class Interval:
    """A figure's median (or mean) and its 95% interval. Arithmetic is
    conservative: the result covers every value both operands allow. An
    interval with `why` ((kind, reason) pairs, kind "missing" or
    "undecided") has no bounds: whatever uses it is undecided, and the
    comparison that meets it says why."""

    def __init__(self, mid, lo, hi, label, why=()):
        self.mid, self.lo, self.hi, self.label, self.why = mid, lo, hi, label, tuple(why)

    @classmethod
    def unknown(cls, label, why):
        return cls(math.nan, -math.inf, math.inf, label, why)

    @staticmethod
    def _of(x):
        return x if isinstance(x, Interval) else Interval(x, x, x, f"{x:g}")

    def _combine(self, other, op, sign):
        o = Interval._of(other)
        label = f"({self.label} {sign} {o.label})"
        if self.why or o.why:
            return Interval.unknown(label, self.why + o.why)
        ends = [op(a, b) for a in (self.lo, self.hi) for b in (o.lo, o.hi)]
        if any(math.isnan(e) for e in ends):
            # inf / inf or 0 * inf (a censored figure): any value at all.
            return Interval(op(self.mid, o.mid), -math.inf, math.inf, label)
        return Interval(op(self.mid, o.mid), min(ends), max(ends), label)

    def __truediv__(self, other):
        o = Interval._of(other)
        if not (self.why or o.why) and o.lo <= 0 <= o.hi:
            return Interval.unknown(f"({self.label} / {o.label})", (
                ("undecided", f"{o.label}: its interval includes 0, no ratio"),))
        return self._combine(o, lambda a, b: a / b, "/")

    def __rtruediv__(self, other):
        return Interval._of(other) / self

    def __mul__(self, other):
        return self._combine(other, lambda a, b: a * b, "*")

    __rmul__ = __mul__

    def __add__(self, other):
        return self._combine(other, lambda a, b: a + b, "+")

    __radd__ = __add__

    def text(self):
        if self.why:
            return "no interval"
        if self.lo == self.hi:
            return f"{self.mid:.4g}"
        return f"{self.mid:.4g} [{self.lo:.4g}, {self.hi:.4g}]"


def short(name):
    return name.removeprefix("rtt/").removesuffix("/same")


def rtt(stack, op, payload=None):
    return f"rtt/{stack}/{op}" + (f"/{payload}" if payload else "") + "/same"


def substitute(rule, mapping):
    """The rule with each case name in `mapping` replaced, whole names only
    (beast/xml is not the start of beast/xmlrpc or beast/xml-unwrapped)."""
    pattern = "|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True))
    return re.sub(rf"(?<![\w-])({pattern})(?![\w-])", lambda m: mapping[m.group(1)], rule)


def to_common(rule):
    """The rule with each library stack replaced by the common transport."""
    return substitute(rule, COMMON_TRANSPORT)


def stacks_named(rule):
    """The HTTP stacks a rule's cases run on; a TLS variant (beast-tls) is
    its stack's library with TLS, so it counts as that stack."""
    return set(re.findall(r"(?:['\"]|rtt/)(gsoap|xmlrpc-c|beast|grpc)(?:-tls)?/", rule))


def crosses_stacks(rule):
    """True if the rule compares cases on different HTTP stacks: only then
    can a stack's cost pass for a protocol's."""
    return len(stacks_named(rule)) > 1


def uses_load(rule):
    """E7 and E8 rules: their cases are servers under load, where the
    substitution also changes the concurrency model."""
    return re.search(r"\be[78]\(", rule) is not None


def carries_base64(rule):
    """Only a payload with a binary has base64 for libxml2 to wrap; without
    one, xml-unwrapped's bodies are xml's and the run has no such rows."""
    return re.search(r"message-b|binary/", rule) is not None


def parses(rule):
    """A parser changes times, not bytes: a byte count is not decided again
    with another JSON parser (its rows name their codec in another header)."""
    return "bytes_(" not in rule


class Factor:
    """One thing other than the protocol that a comparison may vary: a
    substitution on the rule's case names, and whose effect a verdict that
    flips with it is."""

    def __init__(self, name, mapping, label, column, load_label=None, needs=None):
        self.name, self.mapping, self.column = name, mapping, column
        self._label, self._load_label, self._needs = label, load_label or label, needs

    def label(self, rule):
        return self._load_label if uses_load(rule) else self._label

    def applies(self, rule):
        """Only a substitution that changes the rule decides it again."""
        return (self._needs is None or self._needs(rule)) and self.substitute(rule) != rule

    def substitute(self, rule):
        return substitute(rule, self.mapping)


FACTORS = [
    # Every encoding on the one Beast server with the same I/O threads: for
    # E7 and E8 the substitution matches the threading model too.
    # E7's both-at-once runs on the one Beast server are a column of their
    # own (SOAP+REST holds the library servers' pairs).
    Factor("stack", {**COMMON_TRANSPORT, "SOAP+REST": "SOAP+REST on Beast"}, "the HTTP stack's",
           "common transport",
           load_label="the HTTP stack's and threading model's", needs=crosses_stacks),
    # The column says which choice: libxml2's base64 line breaks, RapidJSON's parse.
    Factor("xml", XML_ALTERNATIVE, "the XML codec's", "XML base64 unwrapped",
           needs=carries_base64),
    Factor("json", JSON_ALTERNATIVE, "the JSON library's", "JSON parsed by simdjson",
           needs=parses),
]


def t_interval(values):
    """Mean and Student-t 95% interval; None below two values."""
    n = len(values)
    if n < 2:
        return None
    mean = statistics.fmean(values)
    df = n - 1
    q = T95.get(df) or T95[max(k for k in T95 if k <= df)]
    half = q * statistics.stdev(values) / math.sqrt(n)
    return mean, mean - half, mean + half


def range_coverage(n):
    """The probability that the range of n repetitions covers their
    distribution's median: all n on one side of it has 2 x 0.5^n."""
    return 1 - 2 * 0.5 ** n


def e8_interval(values):
    """(centre, lo, hi, kind) of E8's non-negative figures, an interval that
    stays in their range; None below two values. Positive values: geometric
    mean and Student-t 95% on the log scale; with a 0 among them, the median
    and the range (kind "e8-range", its coverage by range_coverage)."""
    if len(values) < 2:
        return None
    if min(values) > 0:
        mean, lo, hi = t_interval([math.log(v) for v in values])
        return math.exp(mean), math.exp(lo), math.exp(hi), "e8"
    return statistics.median(values), min(values), max(values), "e8-range"


class Verdicts:
    """The three-valued tests and their combinators (no data access)."""

    def __init__(self):
        self.used, self.headline, self.why = [], None, []

    def _note(self, x, verdict):
        self.used.append(f"{x.label} = {x.text()}")
        if self.headline is None:
            self.headline = x
        return verdict

    def within(self, x, lo, hi):
        x = Interval._of(x)
        if x.why:
            # Only this comparison is undecided; the combinators decide
            # whether the rule still is.
            self.why.extend(w for w in x.why if w not in self.why)
            return self._note(x, None)
        if lo <= x.lo and x.hi <= hi:
            return self._note(x, True)
        if x.hi < lo or x.lo > hi:
            return self._note(x, False)
        return self._note(x, None)

    def above(self, x, k):
        return self.within(x, math.nextafter(k, math.inf), math.inf)

    def below(self, x, k):
        return self.within(x, -math.inf, math.nextafter(k, -math.inf))

    @staticmethod
    def all_of(*verdicts):
        if any(v is False for v in verdicts):
            return False
        return None if any(v is None for v in verdicts) else True

    @staticmethod
    def any_of(*verdicts):
        if any(v is True for v in verdicts):
            return True
        return None if any(v is None for v in verdicts) else False

    @staticmethod
    def most_of(*verdicts):
        """More than half hold; does not hold once at least half fail (then
        not even every undecided one holding makes more than half)."""
        if not verdicts:
            raise ValueError("most_of of no verdicts")
        n = len(verdicts)
        if 2 * sum(v is True for v in verdicts) > n:
            return True
        return False if 2 * sum(v is False for v in verdicts) >= n else None

    @staticmethod
    def not_(verdict):
        return None if verdict is None else not verdict


def check_rule(rule):
    """Rules combine verdicts with all_of, any_of, most_of and not_: Python's
    and/or/not/if treat None (undecided) as false, so `None and False` is
    None where it is False, and `not None` is True."""
    for node in ast.walk(ast.parse(rule, mode="eval")):
        if isinstance(node, (ast.BoolOp, ast.IfExp)) or (
                isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
            raise ValueError("and/or/not/if are two-valued; combine verdicts with all_of, "
                             "any_of, most_of or not_")


def listed(reasons, most=3):
    """The reasons for a verdict's cell: a rule over every size and
    operation can miss dozens of rows, which would bury the verdict."""
    if len(reasons) <= most:
        return "; ".join(reasons)
    return "; ".join(reasons[:most - 1]) + f"; and {len(reasons) - most + 1} more"


def figure(method):
    """A figure function whose figure the run lacks (Unmeasurable) or
    that gives no interval (Undecided) returns an Interval that says why,
    so that only the comparisons using it are undecided."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except Unmeasurable as e:
            why = ("missing", str(e))
        except Undecided as e:
            why = ("undecided", str(e))
        label = " ".join(short(a) if isinstance(a, str) else repr(a) for a in args)
        return Interval.unknown(f"{method.__name__}({label})", (why,))
    return wrapper


class ClaimContext(Verdicts):
    """The values a rule reads from one experiment's results: `results`
    has bench cases (Results), load runs (LoadResults), or both absent."""

    def __init__(self, results):
        super().__init__()
        self.results = results
        self.kinds, self.partial = set(), []

    # ---- bench cases ----

    def _case(self, name):
        case = getattr(self.results, "cases", {}).get(name)
        if case is None or not case.runs:
            reason = self.results.reason(name) if hasattr(self.results, "reason") else ""
            raise Unmeasurable(f"{short(name)}: {reason or 'not in the run'}")
        if case.errors:
            self.partial.append(f"{short(name)}: {case.reason()}")
        return case

    def _stat(self, name, values, unit_label):
        s = summarize.Stat(values)
        if s.ci is None:
            raise Undecided(f"{short(name)}: {s.n} repetitions give no CI95 (6 needed)")
        return Interval(s.median, s.ci[0], s.ci[1], unit_label)

    @figure
    def t(self, name):
        """A case's time in us: rtt rows each repetition's median call."""
        case = self._case(name)
        self.kinds.add("time")
        if name.startswith("rtt/"):
            values = case.values("p50_us")
        else:
            values = [ns / 1e3 for ns in case.times_ns()]
        return self._stat(name, values, short(name))

    @figure
    def bytes_(self, name, key):
        """Bytes: the median and the range over repetitions (a request can
        differ by a digit of an id or length). rtt rows count them on the
        socket; codec rows (encode/..., decode/...) count what the encoder
        writes, without HTTP."""
        case = self._case(name)
        values = case.values(key)
        encoded = name.startswith(("encode/", "decode/"))
        if not values:
            raise Unmeasurable(f"{short(name)}: no {key}"
                               + ("" if encoded else " (run with --wire-sizes)"))
        self.kinds.add("encoded" if encoded else "bytes")
        return Interval(statistics.median(values), min(values), max(values),
                        f"{short(name)} {key}")

    @figure
    def phase(self, name, p):
        case = self._case(name)
        values = case.values(f"phase:{p}_us")
        if not values:
            raise Unmeasurable(f"{short(name)}: no {p} phase (run with probes)")
        self.kinds.add("time")
        return self._stat(name, values, f"{short(name)} {p}")

    @figure
    def gap_share(self, name):
        case = self._case(name)
        values = case.values("phase_gap_share_p50")
        if not values:
            raise Unmeasurable(f"{short(name)}: no phase_gap_share_p50 (run with probes)")
        self.kinds.add("time")
        return self._stat(name, values, f"{short(name)} gap share")

    def faster(self, a, b, by=1.0):
        """a at least `by` times faster than b, by their times."""
        return self.above(self.t(b) / self.t(a), by)

    def largest(self, name, p, among=None):
        """Phase p's interval above every other phase's."""
        others = [q for q in (among or PHASES) if q != p]
        mine = self.phase(name, p)
        # A phase this stack does not mark is not a rival.
        theirs = [x for x in (self.phase(name, q) for q in others)
                  if not any(kind == "missing" for kind, _ in x.why)]
        undecided = [x for x in [mine] + theirs if x.why]
        decided_ = [x for x in theirs if not x.why]
        self.used.append(f"{mine.label} = {mine.text()}" + (
            "; highest other: " + max(decided_, key=lambda x: x.mid).text() if decided_ else ""))
        for x in undecided:
            self.why.extend(w for w in x.why if w not in self.why)
        if mine.why:
            return None
        if any(x.lo > mine.hi for x in decided_):
            return False
        if undecided:
            return None
        return True if all(mine.lo > x.hi for x in decided_) else None

    # ---- load runs (E7, E8) ----

    def _load_runs(self, experiment, match, what):
        runs = [r for r in getattr(self.results, "runs", [])
                if r.get("experiment") == experiment and match(r)]
        if not runs:
            raise Unmeasurable(f"{experiment}: no {what} in the run")
        failed = [r for r in runs if sum(r.get("errors", {}).values())]
        if failed:
            self.partial.append(f"{what}: {len(failed)} of {len(runs)} repetitions had failed calls")
        return runs

    @figure
    def e7(self, column, stack, shape, stat="mean"):
        key = {"mean": "mean", "sd": "stddev", "min": "min", "max": "max"}[stat]
        runs = self._load_runs("E7", lambda r: r.get("column") == column and r.get("shape") == shape
                               and r["target"].startswith(stack + " "),
                               f"{stack} {column} {shape}")
        values = [r["latency_ms"][key] for r in runs if r["latency_ms"].get(key) is not None]
        self.kinds.add("e7")
        label = f"E7 {shape} {column} {stack} {stat} ms"
        s = summarize.Stat(values)
        if s.ci is None:
            raise Undecided(f"{label}: {s.n} repetition(s) give no CI95 (6 needed; "
                            "`wsbench-load --experiment E7` runs 6)")
        return Interval(s.median, s.ci[0], s.ci[1], label)

    @figure
    def e8(self, stack, size, key):
        runs = self._load_runs("E8", lambda r: r.get("size") == size
                               and r["target"].startswith(stack + " "), f"{stack} at {size}")
        label = f"E8 {stack} {size} {key}"
        values = [self._e8_value(r, key, label) for r in runs]
        censored = key == "max_users" and any(r.get("max_users_at_bound") for r in runs)
        interval = e8_interval(values)
        if interval is None:
            self.kinds.add("e8")  # the interval a full run would give
            raise Undecided(f"{label}: {len(values)} repetition (one search, one ramp) gives no "
                            "interval; a full run repeats 3 times")
        centre, lo, hi, kind = interval
        self.kinds.add(kind)
        if kind == "e8-range":
            label += f" (range of {len(values)}: {100 * range_coverage(len(values)):.4g}%)"
        # Users at the search's bound were served; how many more is unknown.
        return Interval(centre, lo, math.inf if censored else hi,
                        label + (" (at the search's bound)" if censored else ""))

    @staticmethod
    def _e8_value(run, key, label):
        if key == "cpu_ms_per_request":
            value = (run.get("server") or {}).get(key)
        elif key in ("cpu_percent", "rss_mb"):
            steps = [s[key] for s in run.get("steps", []) if s.get(key) is not None
                     and s["users"] <= 21]
            value = statistics.median(steps) if steps else None
        elif key == "max_users":
            value = run.get("max_users")
        elif key in ("latency_mean_ms", "latency_p50_ms"):
            value = run.get("latency_ms", {}).get(key.split("_")[1])
        else:
            raise ValueError(f"unknown E8 key '{key}'")
        if value is None:
            raise Unmeasurable(f"{label}: not in a repetition")
        return value

    # ---- evaluation ----

    FUNCTIONS = ("t", "bytes_", "phase", "gap_share", "faster", "largest", "e7", "e8", "within",
                 "above", "below", "all_of", "any_of", "most_of", "not_")

    def evaluate(self, rule):
        """(verdict text, evidence, headline interval or None)."""
        names = {n: getattr(self, n) for n in self.FUNCTIONS}
        names["rtt"] = rtt
        names["__builtins__"] = {}
        self.used, self.headline, self.kinds, self.partial, self.why = [], None, set(), [], []
        try:
            check_rule(rule)
            verdict = eval(rule, names)  # rules are repository data
        except Unmeasurable as e:  # raised outside a figure function
            return f"not measurable here: {e}", "", None
        except Undecided as e:
            return f"inconclusive: {e}" + self._partial(), "; ".join(self.used), self.headline
        except Exception as e:  # a faulty rule marks its claim and the report goes on
            return f"error: {type(e).__name__}: {e}", "", None
        if verdict not in (True, False, None):
            return f"error: the rule gave {verdict!r}, not a verdict", "", None
        evidence = "; ".join(self.used)
        missing = [r for kind, r in self.why if kind == "missing"]
        undecided = [r for kind, r in self.why if kind == "undecided"]
        if verdict is None and missing:
            # The absent figure might have decided it: the run cannot say.
            return "not measurable here: " + listed(missing), "", None
        if verdict is None and undecided:
            return "inconclusive: " + listed(undecided) + self._partial(), evidence, \
                self.headline
        text = {True: "holds", False: "does not hold", None: "inconclusive (intervals overlap)"}
        without = "" if verdict is None or not self.why else \
            " (decided without the figures that give none: " + listed(missing + undecided) + ")"
        return text[verdict] + without + self._partial(), evidence, self.headline

    def _partial(self):
        """How many repetitions of which cases the verdict could not use."""
        if not self.partial:
            return ""
        return " (on the repetitions that succeeded: " + "; ".join(self.partial) + ")"

    def interval_rule(self):
        return "; ".join(INTERVALS[k] for k in sorted(self.kinds)) or "-"


def decided(verdict):
    return verdict.startswith(("holds", "does not hold"))


def verdict_kind(verdict):
    """holds, does not hold, inconclusive, not measurable here, error, or
    not needed: the verdict without its reasons."""
    return re.split(r" \(|:", verdict, maxsplit=1)[0]


VERDICT_KINDS = ("holds", "does not hold", "inconclusive", "not measurable here", "error")


def count_verdicts(verdicts):
    """{kind: n} over VERDICT_KINDS, each verdict counted once by its kind;
    cells that are no verdict ("not needed (...)", "-") are not counted."""
    counts = dict.fromkeys(VERDICT_KINDS, 0)
    for v in verdicts:
        kind = verdict_kind(v)
        if kind in counts:
            counts[kind] += 1
    return counts


def attribution(rule, lib, lib_x, again, base):
    """Whose effect the verdict is. `again`: (factor, verdict, headline)
    of each factor that applies; `base`: what a rule that no factor
    applies to is ("protocol (one stack, beast)")."""
    if not again:
        return base
    if not decided(lib):
        return "undetermined: not decided as written"
    flips = [(f, v) for f, v, _ in again if decided(v) and verdict_kind(v) != verdict_kind(lib)]
    agree = [f for f, v, _ in again if decided(v) and verdict_kind(v) == verdict_kind(lib)]
    open_ = [(f, v) for f, v, _ in again if not decided(v)]
    if flips:
        who = (", ".join(f.name for f, _ in flips) + ": "
               + " and ".join(f.label(rule) for f, _ in flips) + " ("
               + "; ".join(f"{f.column}: {verdict_kind(v)}" for f, v in flips) + ")")
    elif agree:
        who = "protocol: both ways agree, the protocol's (" + ", ".join(
            f.column for f in agree) + ")"
    elif not any(f.name == "stack" for f, _, _ in again):
        who = base  # one stack; the factors that apply are undetermined below
    else:
        return "undetermined: " + "; ".join(
            f"{f.label(rule)} not decided ({verdict_kind(v)})" for f, v in open_)
    if open_:
        who += "; undetermined for " + ", ".join(
            f"{f.label(rule)} ({verdict_kind(v)})" for f, v in open_)
    for f, v, x in again:
        if decided(v) and lib_x is not None and x is not None and x.mid and not x.why \
                and not lib_x.why:
            who += (f"; first figure {lib_x.mid:.3g} as written, {x.mid:.3g} with the "
                    f"{f.column} (factor {lib_x.mid / x.mid:.3g})")
    return who


def not_needed(factor, rule):
    """A factor's cell when its substitution leaves the rule as it is."""
    if factor.name == "stack":
        stacks = stacks_named(rule)
        one = f"one stack, {stacks.pop()}" if stacks else "codec rows, no HTTP stack"
        return f"not needed ({one})"
    if factor.name == "xml" and factor.substitute(rule) != rule:
        return "not needed (no binary: no base64 to wrap)"
    if factor.name == "json" and factor.substitute(rule) != rule:
        return "not needed (byte counts: a parser does not change them)"
    return f"not needed (no {' or '.join(factor.mapping)})"


def decide(row, results):
    """One claim's row of the report: its verdict as written, again with
    each factor that applies substituted (`factors`, by name; `common` is
    the stack factor's), whose effect it is, and the intervals used."""
    rule = row["rule"].strip()
    if not rule:
        return {"lib": "not measurable here: no rule (" + (row.get("note") or "see note") + ")",
                "common": "-", "factors": {}, "who": "-", "evidence": "", "interval": "-"}
    ctx = ClaimContext(results)
    lib, evidence, lib_x = ctx.evaluate(rule)
    interval = ctx.interval_rule()
    factors, again = {}, []
    for f in FACTORS:
        if not f.applies(rule):
            factors[f.name] = not_needed(f, rule)
            continue
        # Until a run has the substituted rows, the factor is not measurable
        # here, which is reported as such, not as an error.
        verdict, more, x = ClaimContext(results).evaluate(f.substitute(rule))
        factors[f.name] = verdict
        again.append((f, verdict, x))
        if more:
            evidence += f" | {'common' if f.name == 'stack' else f.name}: {more}"
    base = "protocol (" + not_needed(FACTORS[0], rule).removeprefix("not needed (")
    return {"lib": lib, "common": factors["stack"], "factors": factors,
            "who": attribution(rule, lib, lib_x, again, base), "evidence": evidence,
            "interval": interval}
