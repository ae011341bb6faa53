"""The report's section "Beyond the studies": what a reader choosing a
protocol today asks next, on the same operations, floor and statistics as
the experiments: gRPC over HTTP/2 beside REST-protobuf over HTTP/1.1 (the
same protobuf messages), TLS against plain TCP per protocol (kept-alive
and a new connection per call), and simdjson against RapidJSON on the JSON
codec's wire bytes. Expectations of ours (docs/experiments/expectations.csv)
are decided by the papers' claim rules (scripts/claims.py) and marked as
ours. Every ratio of two rows is the median of per-repetition ratios,
paired by repetition index within one run, with its CI95."""
import os
import re

import summarize  # noqa: E402  (the statistics rules of every table)
import claims as claims_mod  # noqa: E402  (the rules that decide an expectation)
from anchor_pairs import paired_ratios  # noqa: E402  (a/b paired by repetition index)
from experiment_tables import read_csv, table  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
EXPECTATIONS = os.path.join(ROOT, "docs", "experiments", "expectations.csv")

GRPC, REST_PROTOBUF = "grpc/protobuf", "beast/protobuf"
GRPC_OPS = ["ping", "get/ints/3200", "echo/message-a/100", "echo/message-b/128KiB",
            "define/x1", "put/x1"]
TLS_OPS = ["ping", "echo/message-a/100", "echo/message-b/128KiB"]

# The rows, named one by one from the full sweep (the standard sweep keeps
# one TLS codec per protocol), all in one run so that every ratio pairs
# rows of the same repetitions: gRPC and REST-protobuf on GRPC_OPS (the
# full sweep's primes are 100,000, a CPU-bound call the protocol does not
# move, so none), every stack with a TLS variant and its plain partner on
# TLS_OPS over each codec the TLS variants carry (each a steady and a
# new-connection row), and the JSON decodes on both parsers over the
# array sizes' ends and middle, the messages, 1 MiB and GML.
DECODE_PAYLOADS = "((ints|strings|objects)/(200|800|3200)|message-a/100|message-b/128KiB" \
                  "|binary/1MiB|gml/(10|1000))"
RUN = {"filter": "^(rtt/(grpc(-tls)?/protobuf|beast/protobuf)/(" + "|".join(GRPC_OPS) + ")/"
                 "|rtt/(beast|gsoap)(-tls)?/(json|xml|protobuf|soap|xmlrpc)/("
                 + "|".join(TLS_OPS) + ")/|decode/json(-simdjson)?/" + DECODE_PAYLOADS + "(/|$))",
       "sized": True, "full": True}
TYPICAL_S = (900, 200)
NEW_CONNECTION = "new-connection"
TLS_SUFFIX = "-tls"


def row(stack_codec, op, connection=None):
    return f"rtt/{stack_codec}/{op}" + (f"/{connection}" if connection else "") + "/same"


def key_of(name):
    """A row's figure per repetition: a round trip's median call, a codec
    row's time per operation (both rows of a pair share its unit)."""
    return "p50_us" if name.startswith("rtt/") else "real_time"


def us(case):
    """The case's per-repetition figures in us."""
    if case.name.startswith("rtt/"):
        return case.values("p50_us")
    return [ns / 1e3 for ns in case.times_ns()]


def fmt_stat(stat, scale=1.0, digits=4):
    if stat is None or stat.median is None:
        return "-"
    text = f"{stat.median * scale:.{digits}g}"
    if stat.ci:
        text += f" ({stat.ci[0] * scale:.{digits}g}-{stat.ci[1] * scale:.{digits}g})"
    return text


class Pairs:
    """Lookups over one run's cases (summarize.load_cases)."""

    def __init__(self, cases):
        self.cases = cases

    def stat(self, name):
        case = self.cases.get(name)
        if case is None or not case.runs:
            return None
        return summarize.Stat(us(case))

    def ratio(self, a, b):
        """a/b: the median of per-repetition ratios and its CI95, or None."""
        ca, cb = self.cases.get(a), self.cases.get(b)
        if ca is None or cb is None or not ca.runs or not cb.runs:
            return None
        values = paired_ratios(ca.runs, cb.runs, key_of(a))
        return summarize.Stat(values) if values else None

    def counter(self, name, key):
        case = self.cases.get(name)
        values = case.values(key) if case else []
        return summarize.Stat(values).median if values else None

    def why(self, *names):
        """Why a row's figures are absent: each missing or failed case."""
        reasons = []
        for name in names:
            case = self.cases.get(name)
            if case is None:
                reasons.append(f"{name.removeprefix('rtt/')}: not in the run")
            elif case.reason():
                reasons.append(f"{name.removeprefix('rtt/')}: {case.reason()}")
        return "; ".join(reasons)


def wire(pairs, name):
    request, response = (pairs.counter(name, k) for k in ("request_bytes", "response_bytes"))
    return None if request is None or response is None else request + response


def grpc_table(pairs, plot):
    rows, grpc_us, rest_us = [], [], []
    for op in GRPC_OPS:
        g, r = row(GRPC, op), row(REST_PROTOBUF, op)
        gs, rs = pairs.stat(g), pairs.stat(r)
        gw, rw = wire(pairs, g), wire(pairs, r)
        rows.append([op, fmt_stat(gs), fmt_stat(rs), fmt_stat(pairs.ratio(g, r), digits=3),
                     fmt_floor(pairs, g), fmt_floor(pairs, r),
                     summarize.fmt_bytes(gw), summarize.fmt_bytes(rw), pairs.why(g, r) or "-"])
        grpc_us.append(gs.median if gs else None)
        rest_us.append(rs.median if rs else None)
    out = ["### gRPC beside REST-protobuf\n\n"
           "The same protobuf messages, as one unary RPC per operation over HTTP/2 (gRPC's "
           "library, client and server) and as REST bodies over HTTP/1.1 (Beast). Round trips "
           "in us (median over repetitions of each repetition's median call, CI95); gRPC/REST "
           "paired by repetition; each row against its TCP floor (floor ratio: the row's p50 "
           "over the floor's, measured beside it); bytes on the socket per call, both ways "
           "(HTTP/2 frames and HPACK headers for gRPC). gRPC runs on its own library only, so "
           "its figures are the protocol's and its library's together.",
           table(["operation", "gRPC us", "REST-protobuf us", "gRPC/REST", "gRPC/floor",
                  "REST/floor", "gRPC bytes", "REST bytes", "missing"], rows),
           plot.bars("beyond-grpc.png", "gRPC (HTTP/2) and REST-protobuf (HTTP/1.1)", "us",
                     GRPC_OPS, [("gRPC", grpc_us), ("REST-protobuf (Beast)", rest_us)])]
    return out


def fmt_floor(pairs, name):
    ratio = pairs.counter(name, "ratio_p50")
    return "-" if ratio is None else f"{ratio:.3g}"


def tls_pairs(cases):
    """(TLS stack/codec, plain stack/codec) for each TLS row family in the run."""
    found = set()
    for name in cases:
        m = re.match(rf"^rtt/([^/]+{TLS_SUFFIX})/([^/]+)/", name)
        if m:
            found.add((f"{m.group(1)}/{m.group(2)}",
                       f"{m.group(1).removesuffix(TLS_SUFFIX)}/{m.group(2)}"))
    return sorted(found)


def tls_table(pairs, plot):
    rows, labels, steady, fresh = [], [], [], []
    for tls, plain in tls_pairs(pairs.cases):
        for op in TLS_OPS:
            t, p = row(tls, op), row(plain, op)
            tn, pn = row(tls, op, NEW_CONNECTION), row(plain, op, NEW_CONNECTION)
            s, n = pairs.ratio(t, p), pairs.ratio(tn, pn)
            rows.append([tls, op, fmt_stat(pairs.stat(t)), fmt_stat(pairs.stat(p)),
                         fmt_stat(s, digits=3), fmt_floor(pairs, t), fmt_stat(pairs.stat(tn)),
                         fmt_stat(pairs.stat(pn)), fmt_stat(n, digits=3), fmt_floor(pairs, tn),
                         pairs.why(t, p, tn, pn) or "-"])
            if op == "ping":
                labels.append(tls.removesuffix("/ping"))
                steady.append(s.median if s else None)
                fresh.append(n.median if n else None)
    if not rows:
        return ["### TLS against plain TCP\n\nNo TLS rows in the run (rtt/<stack>-tls/...)."]
    return ["### TLS against plain TCP\n\n"
            "Each TLS row (TLS 1.3, TLS_AES_128_GCM_SHA256, x25519, ECDSA P-256; grpc-tls "
            "negotiates secp256r1, which gRPC 1.51 sets itself; docs/servers/tls.md) beside the same stack and codec over plain TCP: kept alive "
            "(steady state) and with a new connection per call (connect, handshake, the call, "
            "close, all timed). TLS/plain paired by repetition; TLS/floor is the row over a "
            "raw TLS ping-pong of the same bytes measured beside it (for a new-connection row, "
            "a raw connect, handshake, exchange and close). Times in us. Whose difference "
            "TLS/plain is: beast-tls runs beast's server and client code over TLS (one "
            "session, src/beast/session.h), so its TLS/plain is TLS's alone (by instructions "
            "a ping's TLS share is 1.09x the TLS floor's over the TCP floor: "
            "docs/servers/stacks/beast.md); gsoap-tls and grpc-tls are their libraries' own "
            "TLS paths, with what those libraries add to TLS.",
            table(["TLS stack/codec", "operation", "TLS us", "plain us", "TLS/plain",
                   "TLS/floor", "new-conn TLS us", "new-conn plain us", "new-conn TLS/plain",
                   "new-conn TLS/floor", "missing"], rows),
            plot.bars("beyond-tls.png", "TLS over plain TCP, ping", "TLS/plain (ratio)", labels,
                      [("kept-alive", steady), ("new connection per call", fresh)],
                      logy=False)]


def payload_order(label):
    """ints/200 before ints/3200: the kind, then the size as a number."""
    kind, _, size = label.partition("/")
    digits = "".join(c for c in size if c.isdigit())
    return kind, int(digits) * (1024 if "MiB" in size else 1) if digits else 0, size


def json_payloads(cases):
    return sorted({n[len("decode/json-simdjson/"):] for n in cases
                   if n.startswith("decode/json-simdjson/")
                   and f"decode/json/{n[len('decode/json-simdjson/'):]}" in cases},
                  key=payload_order)


def simdjson_table(pairs, plot):
    rows, labels, rapid, simd = [], [], [], []
    for payload in json_payloads(pairs.cases):
        r, s = f"decode/json/{payload}", f"decode/json-simdjson/{payload}"
        rs, ss, ratio = pairs.stat(r), pairs.stat(s), pairs.ratio(s, r)
        saved = "-" if ratio is None or ratio.median is None else f"{1 - ratio.median:.0%}"
        rows.append([payload, fmt_stat(rs), fmt_stat(ss), fmt_stat(ratio, digits=3),
                     saved, pairs.why(r, s) or "-"])
        labels.append(payload)
        rapid.append(rs.median if rs else None)
        simd.append(ss.median if ss else None)
    if not rows:
        return ["### simdjson against RapidJSON\n\nNo decode/json-simdjson rows in the run."]
    return ["### simdjson against RapidJSON\n\n"
            "The JSON codec's wire bytes decoded into the payload model by RapidJSON (the "
            "codec's own path) and by simdjson's On Demand API, both verified against the "
            "payload before timing. Times in us (median over repetitions, CI95); "
            "simdjson/RapidJSON paired by repetition. The share saved is how much of "
            "RapidJSON's decode is the parser's rather than JSON's: another parser reads the "
            "same bytes in that much less time.",
            table(["payload", "RapidJSON us", "simdjson us", "simdjson/RapidJSON",
                   "saved", "missing"], rows),
            plot.bars("beyond-simdjson.png", "JSON decode: RapidJSON and simdjson", "us", labels,
                      [("RapidJSON", rapid), ("simdjson On Demand", simd)])]


class CaseResults:
    """What claims.ClaimContext reads, over one run's cases."""

    def __init__(self, cases):
        self.cases = cases

    def reason(self, name):
        case = self.cases.get(name)
        return "not in the run" if case is None else case.reason() or "no figure"


def who(rule):
    """Whose verdict an expectation's is: the rule's stacks say it."""
    stacks = claims_mod.stacks_named(rule)
    if "grpc" in stacks and len(stacks) > 1:
        return ("protocol and library together: gRPC runs on its own library only, so no "
                "common transport separates them")
    if rule.count(TLS_SUFFIX) and len(stacks) == 1:
        return f"TLS on one stack ({stacks.pop()}): the same library with and without it"
    if stacks:
        return f"one stack, {', '.join(sorted(stacks))}"
    return "codec rows, no HTTP stack"


def expectation_rows(rows, cases):
    out = []
    for x in rows:
        ctx = claims_mod.ClaimContext(CaseResults(cases))
        verdict, evidence, _ = ctx.evaluate(x["rule"].strip())
        out.append([x["id"], x["quote"], x["claim"], verdict, who(x["rule"]),
                    ctx.interval_rule(), evidence or "-"])
    return out


def render(cases, plot, expectations=None):
    """The section's body: the three tables with their plots, and our
    expectations decided on the run."""
    pairs = Pairs(cases)
    rows = read_csv(EXPECTATIONS) if expectations is None else expectations
    out = grpc_table(pairs, plot) + tls_table(pairs, plot) + simdjson_table(pairs, plot)
    out.append("### Our expectations\n\n"
               "Stated by wsbench, not by any of the papers, and decided by the same rules "
               "as the papers' claims (docs/experiments/expectations.csv):\n\n"
               + table(["id", "we expect", "we test", "verdict", "whose", "interval",
                        "figures"], expectation_rows(rows, cases)))
    return out
