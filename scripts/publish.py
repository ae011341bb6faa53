#!/usr/bin/env python3
"""A published reference run: docs/results/<YYYY-MM-DD>-<commit7>/ from an
experiments run and a bench run (scripts/publish runs both, then this).

  scripts/publish.py --from-experiments DIR --from-bench JSON [--from-count JSON]
                     [--vmstat LOG] [--timing FILE] [--started T] [--ended T] [--out DIR]

The folder gets the experiments run's report.md, PNGs and JSON (the data:
`scripts/experiments.py report FOLDER` rewrites the report from them; a
JSON above --gzip-above MB is stored gzipped, and machine.md says so),
report.html (scripts/report_html.py), bench.json and bench-summary.md (the
summary of the bench run, scripts/summarize.py; with --from-count, the
instructions per operation of `scripts/count --default-sweep` beside each
case's time, and count.json), machine.md (machine,
placement, link, library versions, commands, wall times, the machine's
load from the vmstat log) and README.md (the glance and an index). The
block between README.md's glance markers is rewritten from the same run
(scripts/glance.py).

Times (T) are UTC ISO 8601 or a file holding one; per-part times come
from --timing (format: scripts/publish_machine.py --help) or the
--<part>-started/--<part>-ended options. The folder's date is the
experiments' start, its commit the one the benchmarks were built from.
"""
import argparse
import contextlib
import datetime
import glob
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import glance  # noqa: E402  (the README's table, from the run)
import publish_machine as pm  # noqa: E402  (machine.md's sections)
import report_html  # noqa: E402  (report.html)
import summarize  # noqa: E402  (bench-summary.md)
from experiment_tables import table  # noqa: E402  (the reports' Markdown table)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PARTS = ("experiments", "bench", "count")
# Besides *.json and *.png: files the report reads (E9's link note, the
# managed runtimes' folder).
EXTRA = ("e9.link.txt",)
RUNTIMES = "runtimes"


def log(message):
    print(f"publish: {message}", flush=True)


def read_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def contexts_of(folder):
    """{run: context} of the experiments folder's JSON (runtimes' too)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        try:
            out[os.path.basename(path)[:-5]] = read_json(path).get("context", {})
        except (OSError, ValueError) as e:
            log(f"warning: {path}: {e}")
    return out


def git_tree():
    """The checkout's commit and whether tracked files are modified."""
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                 "--untracked-files=no"], capture_output=True, text=True,
                                check=True).stdout
        return {"commit": commit, "dirty": bool(status.strip())}
    except (OSError, subprocess.CalledProcessError):
        return None


def quick_runs(contexts):
    """Runs made with --quick's settings: a folder of those is no reference."""
    marks = ("--iterations=", "--quick", "--repeat 1")
    return [run for run, ctx in contexts.items()
            if any(m in str(ctx.get("command_line", "")) for m in marks)]


def folder_name(contexts, parts, tree):
    ping = contexts.get("ping") or next(iter(contexts.values()), {})
    commit = ping.get("source_git_commit") or (tree or {}).get("commit") or "unknown"
    started = parts[0].started if parts and parts[0].started else None
    if started is None and ping.get("date"):
        started = pm.parse_time(ping["date"])
    day = (started or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%d")
    return f"{day}-{commit[:7]}"


def prepare(out, force):
    if os.path.isdir(out) and os.listdir(out):
        if not force:
            sys.exit(f"publish: {out} exists and is not empty; --force replaces it")
        shutil.rmtree(out)
    os.makedirs(out, exist_ok=True)


def copy_experiments(src, out, regenerate):
    """The run's data and report; the report rewritten from the data when
    asked or when the run has none. Returns what was done, for machine.md."""
    for path in glob.glob(os.path.join(src, "*.json")) + glob.glob(os.path.join(src, "*.png")):
        shutil.copy2(path, out)
    for name in EXTRA + ("report.md",):
        if os.path.exists(os.path.join(src, name)):
            shutil.copy2(os.path.join(src, name), out)
    if os.path.isdir(os.path.join(src, RUNTIMES)):
        shutil.copytree(os.path.join(src, RUNTIMES), os.path.join(out, RUNTIMES),
                        ignore=shutil.ignore_patterns("*.log"))
    if regenerate or not os.path.exists(os.path.join(out, "report.md")):
        import experiments  # matplotlib and the papers' CSVs: only when rewriting
        for png in glob.glob(os.path.join(out, "*.png")):
            os.remove(png)
        experiments.write_report(out)
        return "rewritten by `scripts/experiments.py report` from the JSON here"
    return "as the run wrote it"


def bench_summary(bench_json, out, command, part, count_json=None):
    """bench.json and bench-summary.md: summarize.py's tables of it, with
    count.json's instructions per operation beside the times if given."""
    dest = os.path.join(out, "bench.json")
    shutil.copy2(bench_json, dest)
    extra = []
    if count_json:
        shutil.copy2(count_json, os.path.join(out, "count.json"))
        extra = ["--instructions", os.path.join(out, "count.json")]
    text = io.StringIO()
    try:
        with contextlib.redirect_stdout(text):
            summarize.main(extra + [dest])
    except (SystemExit, Exception) as e:  # the summary says why instead of stopping the run
        text.write(f"\nsummarize.py failed: {type(e).__name__}: {e}\n")
    table = text.getvalue().replace(out + os.sep, "")
    when = f"{pm.fmt_time(part.started)} to {pm.fmt_time(part.ended)}, {pm.fmt_secs(part.wall)}" \
        if part else "times not given"
    with open(os.path.join(out, "bench-summary.md"), "w") as f:
        f.write(f"# A default `scripts/bench` run\n\nCommand: `{command}` ({when}). The raw "
                f"Google Benchmark JSON is [bench.json](bench.json) (original name "
                f"`{os.path.basename(bench_json)}`); these are `scripts/summarize.py "
                + ("--instructions count.json " if count_json else "")
                + "bench.json`'s tables, column legend in its `--help` and in the README."
                + (" instr/op: instructions per operation, client and in-process server, "
                   "counted by callgrind (`scripts/count --default-sweep`, "
                   "[count.json](count.json)); they repeat to the instruction for codec "
                   "rows and to about 0.3% for round trips ('~1%' marks them), where a "
                   "time moves 20-50% between rounds on these VMs." if count_json else "")
                + "\n\n"
                f"```text\n{table.rstrip()}\n```\n")
    return read_json(dest).get("context", {})


def compress_large(out, limit_mb):
    """Gzips every JSON above limit_mb; returns [(name, bytes before, after)]."""
    done = []
    for path in sorted(glob.glob(os.path.join(out, "**", "*.json"), recursive=True)):
        size = os.path.getsize(path)
        if size <= limit_mb * 1e6:
            continue
        # mtime 0 and no name: the same JSON gives the same bytes, so a
        # regenerated folder changes only where the figures do.
        with open(path, "rb") as src, open(path + ".gz", "wb") as raw, \
                gzip.GzipFile("", "wb", 9, raw, mtime=0) as dst:
            shutil.copyfileobj(src, dst)
        os.remove(path)
        done.append((os.path.relpath(path, out), size, os.path.getsize(path + ".gz")))
    # Links written before the compression follow the file to its new name.
    for page in glob.glob(os.path.join(out, "*.md")):
        with open(page) as f:
            text = f.read()
        for name, _, _ in done:
            text = text.replace(f"]({name})", f"]({name}.gz)")
        with open(page, "w") as f:
            f.write(text)
    return done


def files_section(out, gzipped):
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "**", "*"), recursive=True)):
        if os.path.isfile(path):
            rows.append([f"`{os.path.relpath(path, out)}`", f"{os.path.getsize(path):,}"])
    text = [table(["file", "bytes"], rows)]
    if gzipped:
        text.append("Gzipped because larger than the limit (" + "; ".join(
            f"{n}: {a:,} bytes, {b:,} gzipped" for n, a, b in gzipped) + "): `gunzip` them "
            "before `scripts/experiments.py report` or `scripts/summarize.py` reads them.")
    return "\n\n".join(text)


def part_lines(parts, commands):
    rows = [[p.name, f"`{commands.get(p.name, '-')}`", pm.fmt_time(p.started),
             pm.fmt_time(p.ended), pm.fmt_secs(p.wall), "-" if p.rc is None else str(p.rc)]
            for p in parts]
    if not rows:
        return "No times were given (--timing, --started, --ended)."
    starts = [p.started for p in parts if p.started]
    ends = [p.ended for p in parts if p.ended]
    total = ""
    if starts and ends:
        total = (f"\n\nThe whole run: {pm.fmt_time(min(starts))} to {pm.fmt_time(max(ends))}, "
                 f"{pm.fmt_secs((max(ends) - min(starts)).total_seconds())}.")
    return table(["part", "command", "started", "ended", "wall time", "exit"], rows) + total


def relative(command):
    """A command line with the checkout's location left out (/home/x/wsbench/
    build/release/bench -> build/release/bench): the same on every machine."""
    return re.sub(r"(?<![\w.])/[^\s'\"]*/(?=(build|scripts)/)", "", command)


def machine_md(args, out, contexts, parts, tree, report_note, gzipped, links, runs):
    commands = {"experiments": args.experiments_command, "bench": args.bench_command,
                "count": args.count_command}
    quick = quick_runs(contexts)
    run_commands = "\n".join(f"- {run}: `{relative(ctx['command_line'])}`"
                             for run, ctx in contexts.items() if ctx.get("command_line"))
    sections = [
        f"# Machine and method: {os.path.basename(out)}",
        "The reference run in this folder: `scripts/experiments all` (report.md, its PNGs and "
        "JSON) and a default `scripts/bench` (bench-summary.md, bench.json)"
        + (", with the instructions per operation of every case of the default sweep "
           "(`scripts/count --default-sweep`, count.json) beside its time" if args.from_count
           else ", without instruction counts")
        + (f", published by `{args.publish_command}`" if args.publish_command else "") + "."
        + (f"\n\n**Not a reference run:** {', '.join(quick)} used --quick's settings "
           "(fewer calls or repetitions)." if quick else ""),
        "## The machine\n\n" + pm.machine_section(contexts),
        "## Placement, link and build per run\n\n" + pm.runs_section(contexts, links)
        + "\n\nPlacement `same`: client and server threads pinned to one vCPU; wsbench-load "
        "(E7, E8) puts the driver and the server on different vCPUs. Link `loopback` unless "
        "a run says otherwise (bench --link shapes one).",
        "## Commit\n\n" + pm.provenance_lines(contexts, tree),
        "## Library versions\n\n" + pm.versions_section(contexts)
        + "\n\nDebian packages (dpkg-query when this folder was written):\n\n"
        + table(["package", "version"], pm.dpkg_versions()),
        "## Commands and wall time\n\n" + part_lines(parts, commands)
        + "\n\nThe benchmark processes these ran, with their exact arguments (paths "
        "relative to the checkout):\n\n"
        + (run_commands or "(none recorded)"),
        "## The machine's load during the run\n\n"
        + "\n\n".join(pm.load_section(args.vmstat, parts, runs))
        + "".join(f"\n\n- {note}" for note in args.note),
        f"## Files\n\nreport.md: {report_note}. report.html: report.md with its plots inline "
        "(scripts/report_html.py).\n\n" + files_section(out, gzipped),
    ]
    with open(os.path.join(out, "machine.md"), "w") as f:
        f.write("\n\n".join(sections) + "\n")


def index_md(out, block):
    name = os.path.basename(out)
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(f"# Reference run {name}\n\n"
                "- [report.md](report.md): the studies' experiments E1-E9 beside the papers' "
                "figures, and the claims' verdicts ([report.html](report.html): the same, one "
                "self-contained page)\n"
                "- [bench-summary.md](bench-summary.md): a default `scripts/bench` run"
                + (", instructions per operation beside each time ([count.json](count.json))"
                   if os.path.exists(os.path.join(out, "count.json")) else "") + "\n"
                "- [machine.md](machine.md): the machine, placement, link, library versions, "
                "commands, wall times and load\n\n" + block + "\n")


def settle_parts(args):
    parts = pm.read_timing(args.timing) if args.timing else []
    by_name = {p.name: p for p in parts}
    for name in PARTS:
        started = pm.parse_time(getattr(args, f"{name}_started"))
        ended = pm.parse_time(getattr(args, f"{name}_ended"))
        if started or ended:
            part = by_name.get(name) or pm.Part(name)
            part.started, part.ended = started or part.started, ended or part.ended
            if name not in by_name:
                parts.append(part)
                by_name[name] = part
    order = {n: i for i, n in enumerate(PARTS)}
    parts.sort(key=lambda p: order.get(p.name, len(order)))
    return pm.settle(parts, pm.parse_time(args.started), pm.parse_time(args.ended))


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog=__doc__.split(
        "\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--from-experiments", required=True, metavar="DIR",
                    help="a `scripts/experiments all` run's folder (results/experiments/<time>)")
    ap.add_argument("--from-bench", metavar="JSON", help="a default `scripts/bench` run's JSON")
    ap.add_argument("--from-count", metavar="JSON",
                    help="`scripts/count --default-sweep`'s count.json (with --from-bench)")
    ap.add_argument("--vmstat", metavar="LOG", help="`vmstat -t N` logged during the runs")
    ap.add_argument("--timing", metavar="FILE", help="per-part times (scripts/publish_machine.py)")
    ap.add_argument("--started", metavar="T", help="the whole run's start")
    ap.add_argument("--ended", metavar="T", help="the whole run's end")
    for part in PARTS:
        ap.add_argument(f"--{part}-started", metavar="T", help=f"the {part} part's start")
        ap.add_argument(f"--{part}-ended", metavar="T", help=f"the {part} part's end")
    ap.add_argument("--experiments-command", default="scripts/experiments all",
                    help="the experiments command as machine.md names it (default: %(default)s)")
    ap.add_argument("--bench-command", default="scripts/bench",
                    help="the bench command as machine.md names it (default: %(default)s)")
    ap.add_argument("--count-command", default="scripts/count --default-sweep",
                    help="the count command as machine.md names it (default: %(default)s)")
    ap.add_argument("--note", action="append", default=[], metavar="TEXT",
                    help="a line machine.md's load section carries: what ran beside the parts, "
                         "what was redone (repeatable)")
    ap.add_argument("--publish-command", help=argparse.SUPPRESS)
    ap.add_argument("--out", metavar="DIR",
                    help="the folder (default: docs/results/<YYYY-MM-DD>-<commit7>)")
    ap.add_argument("--force", action="store_true", help="replace the folder if it exists")
    ap.add_argument("--regenerate-report", action="store_true",
                    help="rewrite report.md and the PNGs from the JSON with today's "
                         "scripts/experiments.py instead of copying the run's")
    ap.add_argument("--gzip-above", type=float, default=1, metavar="MB",
                    help="gzip JSON files larger than this (default: %(default)s MB)")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"),
                    help="the README whose glance block is rewritten (default: the repo's)")
    ap.add_argument("--no-readme", action="store_true", help="leave README.md alone")
    args = ap.parse_args(argv)
    if not os.path.isfile(os.path.join(args.from_experiments, glance.PING)):
        ap.error(f"{args.from_experiments}: no {glance.PING}; not an experiments run")
    if args.from_bench and not os.path.isfile(args.from_bench):
        ap.error(f"{args.from_bench}: no such file")
    if args.from_count and not args.from_bench:
        ap.error("--from-count needs --from-bench: the counts sit beside the bench run's times")
    if args.from_count and not os.path.isfile(args.from_count):
        ap.error(f"{args.from_count}: no such file")
    if args.vmstat and not os.path.isfile(args.vmstat):
        ap.error(f"{args.vmstat}: no such file")
    return ap, args


def main(argv=None):
    ap, args = parse_args(argv)
    try:
        parts = settle_parts(args)
    except (OSError, ValueError) as e:
        ap.error(str(e))
    src = os.path.abspath(args.from_experiments)
    contexts = contexts_of(src)
    # When each run's JSON was written: the end of its window in machine.md.
    ends = {run: datetime.datetime.fromtimestamp(
        os.path.getmtime(os.path.join(src, run + ".json")), datetime.timezone.utc)
        for run in contexts}
    tree = git_tree()
    out = os.path.abspath(args.out or os.path.join(ROOT, "docs", "results",
                                                    folder_name(contexts, parts, tree)))
    log(f"output folder {out}")
    quick = quick_runs(contexts)
    if quick:
        log(f"warning: {', '.join(quick)} ran with --quick's settings: not a reference run")
    prepare(out, args.force)

    log(f"copying {src}")
    report_note = copy_experiments(src, out, args.regenerate_report)
    log("report.html")
    report_html.convert(os.path.join(out, "report.md"))
    links = {}
    if os.path.exists(os.path.join(out, "e9.link.txt")):
        with open(os.path.join(out, "e9.link.txt")) as f:
            links["e9"] = f.read().strip()
    by_name = {p.name: p for p in parts}
    if args.from_bench:
        log(f"bench summary of {args.from_bench}")
        contexts["bench"] = bench_summary(args.from_bench, out, args.bench_command,
                                          by_name.get("bench"), args.from_count)
    else:
        log("warning: no --from-bench: the folder has no bench summary")

    log("glance")
    readme_dir = os.path.dirname(os.path.abspath(args.readme))
    link = os.path.relpath(out, readme_dir)
    day = by_name["experiments"].started.strftime("%Y-%m-%d") \
        if "experiments" in by_name and by_name["experiments"].started else None
    index_md(out, glance.glance(out, ".", day))
    if not args.no_readme:
        if os.path.exists(args.readme):
            note = glance.update_readme(args.readme, glance.glance(out, link, day))
        else:
            note = f"{args.readme}: no such file"
        log(note or f"{args.readme}: glance block rewritten")

    gzipped = compress_large(out, args.gzip_above)
    for name, before, after in gzipped:
        log(f"{name}: {before:,} bytes, gzipped to {after:,}")
    log("machine.md")
    machine_md(args, out, contexts, parts, tree, report_note, gzipped, links,
               pm.run_windows(ends, contexts))
    for p in parts:
        if p.rc:
            log(f"warning: {p.name} exited {p.rc} (machine.md says so)")
    log(f"done: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
