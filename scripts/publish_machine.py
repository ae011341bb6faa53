#!/usr/bin/env python3
"""machine.md of a published run: the machine, placement, link, library
versions, commands, wall times and the machine's load while it ran.

  scripts/publish_machine.py --vmstat LOG [--timing FILE] [--started T] [--ended T]

Used by scripts/publish.py; run alone it prints the timing and load
sections for a vmstat log, to check a log before publishing.

Timing file (--timing): one line per part of the run, the part's name then
key=value fields, any of started=T, ended=T (UTC, ISO 8601), secs=N (wall
seconds), rc=N (exit status), e.g. the lines scripts/publish writes

  experiments started=2026-11-26T04:53:05Z ended=2026-11-26T05:55:10Z secs=3725 rc=0
  bench rc=0 secs=812

A part without started= starts where the previous one ended (the first at
--started); one without ended= ends secs later; the last part ends at
--ended when it gives neither. Lines starting with # are comments.
"""
import argparse
import datetime
import os
import shlex
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiment_tables import table  # noqa: E402  (the reports' Markdown table, cells escaped)

UTC = datetime.timezone.utc

# The Debian packages wsbench is built against (scripts/deps.sh), asked of
# dpkg when the run is published.
PACKAGES = ["g++", "gsoap", "libgsoap-dev", "libxmlrpc-c++8-dev", "libboost1.81-dev",
            "rapidjson-dev", "libxml2-dev", "libprotobuf-dev", "libgrpc++-dev", "libsimdjson-dev",
            "libbenchmark-dev", "libcurl4-openssl-dev", "libssl-dev", "libsqlite3-dev",
            "python3-matplotlib"]

# The libraries a figure is cited with: (name, the context key of the version
# the build compiled against, the key of the loaded copy's own answer or
# None where the library gives none). bench/harness/build_info.cpp and
# environment.cpp write them.
LIBRARIES = [("gRPC", "grpc_version", "grpc_core_runtime_version"),
             ("protobuf", "protobuf_version", "protobuf_runtime_version"),
             ("simdjson", "simdjson_version", None),
             ("OpenSSL", "openssl_version", "openssl_runtime_version"),
             ("libxml2", "libxml2_version", "libxml2_runtime_version"),
             ("RapidJSON", "rapidjson_version", None),
             ("Beast", "beast_version", None),
             ("Boost", "boost_version", None),
             ("gSOAP", "gsoap_version", "gsoap_runtime_version"),
             ("xmlrpc-c", "xmlrpc_c_version", "xmlrpc_c_runtime_version"),
             ("Google Benchmark", "google_benchmark_version", None)]


# ---- times ----

def parse_time(value):
    """A UTC time: ISO 8601 ('2026-11-26T04:53:05Z'), or a file whose first
    line is one (as `date -u +%FT%TZ > FILE` writes)."""
    if value is None:
        return None
    text = value
    if os.path.isfile(value):
        with open(value) as f:
            text = f.readline()
    text = text.strip()
    try:
        t = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"'{text}' is not an ISO 8601 time (e.g. 2026-11-26T04:53:05Z)") from None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def fmt_time(t):
    return "-" if t is None else t.strftime("%Y-%m-%d %H:%M:%S UTC")


def fmt_secs(secs):
    if secs is None:
        return "-"
    secs = int(round(secs))
    return f"{secs // 3600}:{secs % 3600 // 60:02d}:{secs % 60:02d} ({secs} s)"


class Part:
    def __init__(self, name, started=None, ended=None, secs=None, rc=None):
        self.name, self.started, self.ended, self.secs, self.rc = name, started, ended, secs, rc

    @property
    def wall(self):
        if self.started and self.ended:
            return (self.ended - self.started).total_seconds()
        return self.secs


def read_timing(path):
    """The parts of a timing file, in order (see the module's doc)."""
    parts = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            words = shlex.split(line, comments=True)
            if not words:
                continue
            part = Part(words[0])
            for word in words[1:]:
                key, sep, value = word.partition("=")
                if not sep:
                    raise ValueError(f"{path}:{number}: '{word}' is not key=value")
                if key in ("started", "ended"):
                    setattr(part, key, parse_time(value))
                elif key in ("secs", "rc"):
                    setattr(part, key, float(value) if key == "secs" else int(value))
                # Other keys (a command, a host) are the writer's notes.
            parts.append(part)
    return parts


def settle(parts, started=None, ended=None):
    """Fills each part's start and end from its neighbours, secs and the
    run's start and end (see the module's doc)."""
    previous_end = started
    for i, p in enumerate(parts):
        last = i == len(parts) - 1
        if p.started is None and p.ended is not None and p.secs is not None:
            p.started = p.ended - datetime.timedelta(seconds=p.secs)
        if p.started is None:
            p.started = previous_end
        if p.ended is None and p.started is not None and p.secs is not None:
            p.ended = p.started + datetime.timedelta(seconds=p.secs)
        if p.ended is None and last:
            p.ended = ended
        previous_end = p.ended
    return parts


# ---- vmstat ----

class Vmstat:
    """Samples of a `vmstat -t N` log (the first line, averages since boot,
    dropped): (time or None, {column: value})."""

    def __init__(self, path):
        self.samples, columns, local = [], None, False
        first = True
        with open(path) as f:
            for line in f:
                words = line.split()
                if not words:
                    continue
                if words[0] == "r" and "us" in words:
                    columns = words[:words.index("st") + 1] if "st" in words else words
                    # -t's time is in the zone its header names after st.
                    zone = words[len(columns):]
                    local = bool(zone) and zone[0] not in ("UTC", "GMT")
                    continue
                if columns is None or not words[0].isdigit():
                    continue
                values = dict(zip(columns, (float(w) for w in words[:len(columns)])))
                when = None
                if len(words) >= len(columns) + 2:
                    try:
                        when = datetime.datetime.fromisoformat(" ".join(words[len(columns):
                                                                              len(columns) + 2]))
                        when = when.astimezone(UTC) if local else when.replace(tzinfo=UTC)
                    except ValueError:
                        when = None
                if first:
                    first = False
                    continue
                self.samples.append((when, values))

    def window(self, start=None, end=None):
        if start is None and end is None:
            return [v for _, v in self.samples]
        return [v for t, v in self.samples
                if t is not None and (start is None or t >= start) and (end is None or t <= end)]


def load_row(label, samples):
    if not samples:
        return [label, "0", "-", "-", "-", "-", "-"]
    busy = [s.get("us", 0) + s.get("sy", 0) for s in samples]
    r = [s.get("r", 0) for s in samples]
    st = [s.get("st", 0) for s in samples]
    return [label, str(len(samples)), f"{statistics.median(busy):.0f}", f"{max(busy):.0f}",
            f"{statistics.median(r):.0f}", f"{max(r):.0f}", f"{max(st):.0f}"]


def run_windows(ends, contexts):
    """Each run's window: from its context's date (else the previous run's
    end) to when its JSON was written (`ends`: {run: time}), in run order,
    so that a disturbed run can be told from a quiet one."""
    windows, previous = [], None
    for run, end in sorted(ends.items(), key=lambda kv: kv[1]):
        try:
            start = parse_time(contexts.get(run, {}).get("date")) or previous
        except ValueError:
            start = previous
        windows.append(Part(f"run {run}", start, end))
        previous = end
    return windows


def load_section(vmstat_path, parts, runs=()):
    if not vmstat_path:
        return ["No vmstat log was given (scripts/publish records one with `vmstat -t 10`); "
                "the machine's load during the run is not known beyond the load average each "
                "run records at its start (above)."]
    vm = Vmstat(vmstat_path)
    rows = [load_row(f"{p.name} ({fmt_time(p.started)} to {fmt_time(p.ended)})",
                     vm.window(p.started, p.ended))
            for p in list(runs) + list(parts) if p.started and p.ended]
    rows.append(load_row("the whole log", vm.window()))
    header = ["window", "samples", "us+sy median %", "us+sy max %", "r median", "r max",
              "steal max %"]
    return [f"From `{os.path.basename(vmstat_path)}` (`vmstat -t`, a sample every few seconds; "
            "the first line, an average since boot, left out). us+sy: the share of all "
            "vCPUs busy, the run's own work included. bench's round trips (placement `same`: "
            "client and server threads on one vCPU) keep one vCPU busy, so with nothing else "
            "running a two-vCPU machine shows about 50% and r (runnable threads) about 1-2 "
            "while they run; E7 and E8 (wsbench-load: the clients on one vCPU, the server "
            "on the other) and builds use both, and E7's 40 and E8's ramp of users are "
            "client threads that r counts. Beyond those, a higher r or us+sy is other work "
            "competing with the measurement. A run's window ends when its JSON "
            "was written; a run shorter than the sampling interval has no sample.",
            table(header, rows)]


# ---- contexts and versions ----

def dpkg_versions(packages=PACKAGES):
    rows = []
    for pkg in packages:
        try:
            out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True,
                                 text=True, timeout=20)
            version = out.stdout.strip() if out.returncode == 0 and out.stdout.strip() \
                else "not installed"
        except (OSError, subprocess.TimeoutExpired):
            version = "unknown (no dpkg-query)"
        rows.append([pkg, version])
    return rows


def first(contexts, key):
    return next((c[key] for c in contexts.values() if c.get(key) not in (None, "")), None)


def distinct(contexts, key):
    """{value: [runs]} of a context key over the runs that record it."""
    seen = {}
    for run, ctx in contexts.items():
        if ctx.get(key) not in (None, ""):
            seen.setdefault(str(ctx[key]), []).append(run)
    return seen


def one_value(contexts, key):
    """The key's value, or each value with its runs when the runs differ."""
    seen = distinct(contexts, key)
    if not seen:
        return "not recorded"
    if len(seen) == 1:
        return next(iter(seen))
    return "; ".join(f"{v} ({', '.join(runs)})" for v, runs in seen.items())


def caches(ctx):
    out = []
    for c in ctx.get("caches") or []:
        size = c.get("size", 0)
        kind = {"Data": "d", "Instruction": "i"}.get(c.get("type"), "")
        shared = f", shared by {c['num_sharing']}" if c.get("num_sharing", 1) > 1 else ""
        out.append(f"L{c.get('level')}{kind} {size // 1024} KiB{shared}")
    return "; ".join(out) or "not recorded"


def machine_section(contexts):
    rows = [["CPU", one_value(contexts, "cpu_model")],
            ["vCPUs", one_value(contexts, "num_cpus")],
            ["MHz per CPU (as Google Benchmark reads it)", one_value(contexts, "mhz_per_cpu")],
            ["caches", caches(next((c for c in contexts.values() if c.get("caches")), {}))],
            ["hypervisor", one_value(contexts, "cpu_hypervisor")],
            ["governor", one_value(contexts, "cpu_governor")],
            ["frequency boost", one_value(contexts, "cpu_boost")],
            ["kernel", one_value(contexts, "kernel")],
            ["glibc", one_value(contexts, "glibc_runtime_version")],
            ["heap policy", one_value(contexts, "heap_policy")],
            ["allocation policy", one_value(contexts, "alloc_policy")],
            ["probes", one_value(contexts, "probes")]]
    return table(["", "value"], rows)


def runs_section(contexts, links):
    """Per run: where client and server ran, over what link, from what build."""
    rows = []
    for run, ctx in contexts.items():
        placement = ctx.get("wsbench_placement") or ctx.get("load_placement") or "not recorded"
        link = ctx.get("link", "loopback")
        if ctx.get("link_shaping"):
            link += f" ({ctx['link_shaping']})"
        if links.get(run):
            link += f"; {links[run]}"
        commit = (ctx.get("source_git_commit") or "not recorded")[:12]
        dirty = "modified tree" if str(ctx.get("source_git_dirty")).lower() == "true" else "clean"
        rows.append([run, placement, link, f"{commit} ({dirty})", ctx.get("date", "-"),
                     " ".join(str(x) for x in ctx.get("load_avg", [])) or "-"])
    return table(["run", "placement", "link", "built from", "started", "load avg at start"],
                 rows)


def versions_section(contexts):
    """The cited libraries (build and run time), the build, then every
    other version the contexts hold."""
    rows = [[name, one_value(contexts, build),
             one_value(contexts, runtime) if runtime else "(no run-time query)"]
            for name, build, runtime in LIBRARIES]
    libraries = table(["library", "compiled against", "loaded at run time"], rows)
    listed = {k for _, build, runtime in LIBRARIES for k in (build, runtime) if k}
    keys = sorted({k for c in contexts.values() for k in c
                   if (k.endswith("_version") or k == "compiler") and k not in listed})
    rows = [["wsbench_build_type", one_value(contexts, "wsbench_build_type")],
            ["wsbench_cxx_flags", one_value(contexts, "wsbench_cxx_flags")]]
    rows += [[k, one_value(contexts, k)] for k in keys]
    rows.append(["library_build_type (Google Benchmark's own build)",
                 one_value(contexts, "library_build_type")])
    return libraries + "\n\n" + table(["recorded by the run", "value"], rows)


# What the measured binaries (bench, wsbench-load, wsbench-server, the
# managed runtimes' services) are built from; scripts, docs and tests are not.
BUILD_INPUTS = ("src", "bench", "runtimes", "cmake", "CMakeLists.txt", "CMakePresets.json")


def build_input_changes(commits):
    """{commit: [build inputs changed since the first]} or None without git.
    Each build stamps the checkout's HEAD, so a run whose parts were built
    at different commits can still be one build's figures."""
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    changes = {}
    for commit in commits[1:]:
        try:
            changes[commit] = subprocess.run(
                ["git", "-C", root, "diff", "--name-only", commits[0], commit, "--"]
                + list(BUILD_INPUTS), capture_output=True, text=True,
                check=True).stdout.split()
        except (OSError, subprocess.CalledProcessError):
            return None
    return changes


def build_commits_line(contexts):
    """A line when runs were built from more than one commit: whether the
    binaries' sources differ between them."""
    commits = list(distinct(contexts, "source_git_commit"))
    if len(commits) < 2:
        return None
    changes = build_input_changes(commits)
    inputs = ", ".join(BUILD_INPUTS)
    if changes is None:
        return (f"- the runs were built from {len(commits)} commits; whether their sources "
                f"differ is unknown here (no git history of {commits[0][:7]})")
    changed = sorted({f for files in changes.values() for f in files})
    if not changed:
        return (f"- the runs were built from {len(commits)} commits whose binaries have the "
                f"same sources: no file under {inputs} differs between them (the later "
                "commits change scripts, docs or tests)")
    return (f"- **WARNING**: the runs were built from {len(commits)} commits whose binaries' "
            f"sources differ: {', '.join(changed[:10])}"
            + (f" and {len(changed) - 10} more" if len(changed) > 10 else ""))


def provenance_lines(contexts, tree):
    out = []
    for label, key in (("built from commit", "source_git_commit"),
                       ("built from a modified tree", "source_git_dirty"),
                       ("checkout when run", "checkout_git_commit"),
                       ("checkout modified when run", "checkout_git_dirty")):
        out.append(f"- {label}: `{one_value(contexts, key)}`")
    if line := build_commits_line(contexts):
        out.append(line)
    warnings = distinct(contexts, "provenance_warning")
    for text, runs in warnings.items():
        out.append(f"- **WARNING** ({', '.join(runs)}): {text}")
    if tree:
        out.append(f"- the checkout scripts/publish ran in: `{tree['commit']}`"
                   + (" with uncommitted changes" if tree["dirty"] else ", clean"))
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vmstat", required=True, help="a `vmstat -t N` log")
    ap.add_argument("--timing", help="a timing file (format above)")
    ap.add_argument("--started", help="the run's start: a UTC time or a file holding one")
    ap.add_argument("--ended", help="the run's end: a UTC time or a file holding one")
    args = ap.parse_args(argv)
    try:
        parts = settle(read_timing(args.timing) if args.timing else [],
                       parse_time(args.started), parse_time(args.ended))
    except (OSError, ValueError) as e:
        ap.error(str(e))
    for p in parts:
        print(f"{p.name}: {fmt_time(p.started)} to {fmt_time(p.ended)}, {fmt_secs(p.wall)}, "
              f"exit {p.rc if p.rc is not None else '-'}")
    print("\n\n".join(load_section(args.vmstat, parts)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
