"""The papers' claims (docs/papers/claims.csv) decided on a run's results.

A rule is a Python expression over intervals (values over independent
repetitions, never pooled calls) and three-valued tests: True holds, False
does not hold, None inconclusive (the intervals overlap the bound). Every
rule that compares cases on different HTTP stacks is decided twice: as
written (each library's own stack), and with gsoap/... and xmlrpc-c/...
replaced by the same encodings over the common Beast transport (beast/...). Where both verdicts agree the
verdict is the protocol's; where they differ it is the stack's.
"""
import math
import re
import statistics

import summarize  # noqa: E402  (the statistics rules of every table)

# Library stack -> the same encoding over the common Beast transport.
COMMON_TRANSPORT = {"gsoap/soap-mtom": "beast/soap-mtom", "gsoap/soap-swa": "beast/soap-swa",
                    "gsoap/soap": "beast/soap", "xmlrpc-c/xmlrpc": "beast/xmlrpc"}
PHASES = summarize.PHASES
# Two-sided Student t quantiles (95%) by degrees of freedom, for E8's
# means over a handful of repetitions.
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}

# What each kind of value's interval is; the report prints the ones a
# claim used.
INTERVALS = {
    "time": "median over repetitions, distribution-free CI95 of the median (order statistics; "
            "needs 6 repetitions)",
    "bytes": "byte count on the socket: every repetition's (their range; they differ by a "
             "digit of an id or a length at most)",
    "e7": "median over repetitions, each a separate server process, distribution-free CI95 "
          "(needs 6 repetitions)",
    "e8": "mean over repetitions, each a separate server process with its own ramp and "
          "search, Student-t 95% (needs 2; 3 in a full run)",
}


class Unmeasurable(Exception):
    """A figure the rule needs is not in the run."""


class Undecided(Exception):
    """The figure is there but gives no interval (too few repetitions)."""


class Interval:
    """A figure's median (or mean) and its 95% interval. Arithmetic is
    conservative: the result covers every value both operands allow."""

    def __init__(self, mid, lo, hi, label):
        self.mid, self.lo, self.hi, self.label = mid, lo, hi, label

    @staticmethod
    def _of(x):
        return x if isinstance(x, Interval) else Interval(x, x, x, f"{x:g}")

    def _combine(self, other, op, sign):
        o = Interval._of(other)
        ends = [op(a, b) for a in (self.lo, self.hi) for b in (o.lo, o.hi)]
        return Interval(op(self.mid, o.mid), min(ends), max(ends), f"({self.label} {sign} {o.label})")

    def __truediv__(self, other):
        o = Interval._of(other)
        if o.lo <= 0 <= o.hi:
            raise Undecided(f"{o.label}: its interval includes 0, no ratio")
        return self._combine(o, lambda a, b: a / b, "/")

    def __rtruediv__(self, other):
        return Interval._of(other) / self

    def __mul__(self, other):
        return self._combine(other, lambda a, b: a * b, "*")

    __rmul__ = __mul__

    def __add__(self, other):
        o = Interval._of(other)
        return Interval(self.mid + o.mid, self.lo + o.lo, self.hi + o.hi,
                        f"({self.label} + {o.label})")

    __radd__ = __add__

    def text(self):
        if self.lo == self.hi:
            return f"{self.mid:.4g}"
        return f"{self.mid:.4g} [{self.lo:.4g}, {self.hi:.4g}]"


def short(name):
    return name.removeprefix("rtt/").removesuffix("/same")


def rtt(stack, op, payload=None):
    return f"rtt/{stack}/{op}" + (f"/{payload}" if payload else "") + "/same"


def to_common(rule):
    """The rule with each library stack replaced by the common transport."""
    pattern = "|".join(re.escape(k) for k in sorted(COMMON_TRANSPORT, key=len, reverse=True))
    return re.sub(rf"(?<![\w-])({pattern})(?![\w-])", lambda m: COMMON_TRANSPORT[m.group(1)],
                  rule)


def stacks_named(rule):
    """The HTTP stacks a rule's cases run on; a TLS variant (beast-tls) is
    its stack's library with TLS, so it counts as that stack."""
    return set(re.findall(r"(?:['\"]|rtt/)(gsoap|xmlrpc-c|beast|grpc)(?:-tls)?/", rule))


def crosses_stacks(rule):
    """True if the rule compares cases on different HTTP stacks: only then
    can a stack's cost pass for a protocol's."""
    return len(stacks_named(rule)) > 1


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


class Verdicts:
    """The three-valued tests and their combinators (no data access)."""

    def __init__(self):
        self.used, self.headline = [], None

    def _note(self, x, verdict):
        self.used.append(f"{x.label} = {x.text()}")
        if self.headline is None:
            self.headline = x
        return verdict

    def within(self, x, lo, hi):
        x = Interval._of(x)
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
        """More than half hold; does not hold once at least half fail."""
        n = len(verdicts)
        if 2 * sum(v is True for v in verdicts) > n:
            return True
        return False if 2 * sum(v is False for v in verdicts) >= n else None

    @staticmethod
    def not_(verdict):
        return None if verdict is None else not verdict


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

    def t(self, name):
        """A case's time in us: rtt rows each repetition's median call."""
        case = self._case(name)
        self.kinds.add("time")
        if name.startswith("rtt/"):
            values = case.values("p50_us")
        else:
            values = [ns / 1e3 for ns in case.times_ns()]
        return self._stat(name, values, short(name))

    def bytes_(self, name, key):
        """Bytes counted on the socket: the median and the range over
        repetitions (a request can differ by a digit of an id or length)."""
        case = self._case(name)
        values = case.values(key)
        if not values:
            raise Unmeasurable(f"{short(name)}: no {key} (run with --wire-sizes)")
        self.kinds.add("bytes")
        return Interval(statistics.median(values), min(values), max(values),
                        f"{short(name)} {key}")

    def phase(self, name, p):
        case = self._case(name)
        values = case.values(f"phase:{p}_us")
        if not values:
            raise Unmeasurable(f"{short(name)}: no {p} phase (run with probes)")
        self.kinds.add("time")
        return self._stat(name, values, f"{short(name)} {p}")

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
        theirs = []
        for q in others:
            try:
                theirs.append(self.phase(name, q))
            except Unmeasurable:
                continue  # a phase this stack does not mark
        self.used.append(f"{mine.label} = {mine.text()}; highest other: "
                         + max(theirs, key=lambda x: x.mid).text() if theirs else "")
        if all(mine.lo > x.hi for x in theirs):
            return True
        return False if any(x.lo > mine.hi for x in theirs) else None

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

    def e8(self, stack, size, key):
        runs = self._load_runs("E8", lambda r: r.get("size") == size
                               and r["target"].startswith(stack + " "), f"{stack} at {size}")
        self.kinds.add("e8")
        label = f"E8 {stack} {size} {key}"
        values = [self._e8_value(r, key, label) for r in runs]
        censored = key == "max_users" and any(r.get("max_users_at_bound") for r in runs)
        interval = t_interval(values)
        if interval is None:
            raise Undecided(f"{label}: {len(values)} repetition (one search, one ramp) gives no "
                            "interval; a full run repeats 3 times")
        mean, lo, hi = interval
        # Users at the search's bound were served; how many more is unknown.
        return Interval(mean, lo, math.inf if censored else hi,
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
        self.used, self.headline, self.kinds, self.partial = [], None, set(), []
        try:
            verdict = eval(rule, names)  # rules are repository data
        except Unmeasurable as e:
            return f"not measurable here: {e}", "", None
        except Undecided as e:
            return f"inconclusive: {e}" + self._partial(), "; ".join(self.used), self.headline
        except Exception as e:  # a faulty rule marks its claim and the report goes on
            return f"error: {type(e).__name__}: {e}", "", None
        if verdict not in (True, False, None):
            return f"error: the rule gave {verdict!r}, not a verdict", "", None
        text = {True: "holds", False: "does not hold", None: "inconclusive (intervals overlap)"}
        return text[verdict] + self._partial(), "; ".join(self.used), self.headline

    def _partial(self):
        """How many repetitions of which cases the verdict could not use."""
        if not self.partial:
            return ""
        return " (on the repetitions that succeeded: " + "; ".join(self.partial) + ")"

    def interval_rule(self):
        return "; ".join(INTERVALS[k] for k in sorted(self.kinds)) or "-"


def decided(verdict):
    return verdict.startswith(("holds", "does not hold"))


def attribution(lib, common, lib_x, common_x):
    """Whether a verdict is the protocol's or its stacks', with the stacks'
    factor on the claim's first figure."""
    if not (decided(lib) and decided(common)):
        return "undetermined: not decided on both transports"
    factor = ""
    if lib_x is not None and common_x is not None and common_x.mid:
        factor = (f"; first figure {lib_x.mid:.3g} by the library stacks, {common_x.mid:.3g} "
                  f"on the common transport (stacks' factor {lib_x.mid / common_x.mid:.3g})")
    same = lib.split(" (")[0] == common.split(" (")[0]
    return ("protocol: both transports agree" if same else "stack: the transports disagree") + factor


def decide(row, results):
    """One claim's row of the report: its verdicts by the library stacks and
    by the common transport, where they differ, and the intervals used."""
    rule = row["rule"].strip()
    if not rule:
        return {"lib": "not measurable here: no rule (" + (row.get("note") or "see note") + ")",
                "common": "-", "who": "-", "evidence": "", "interval": "-"}
    ctx = ClaimContext(results)
    lib, evidence, lib_x = ctx.evaluate(rule)
    interval = ctx.interval_rule()
    if not crosses_stacks(rule):
        stacks = stacks_named(rule)
        one = f"one stack, {stacks.pop()}" if stacks else "codec rows, no HTTP stack"
        return {"lib": lib, "common": f"not needed ({one})", "who": f"protocol ({one})",
                "evidence": evidence, "interval": interval}
    if re.search(r"\be[78]\(", rule):
        why = ("not run: wsbench-load's E7 and E8 load each library's own server; the common "
               "transport's servers are not in those runs")
        return {"lib": lib, "common": why, "who": "undetermined (library stacks only)",
                "evidence": evidence, "interval": interval}
    common_ctx = ClaimContext(results)
    common, common_evidence, common_x = common_ctx.evaluate(to_common(rule))
    return {"lib": lib, "common": common, "who": attribution(lib, common, lib_x, common_x),
            "evidence": evidence + (" | common: " + common_evidence if common_evidence else ""),
            "interval": interval}
