#!/usr/bin/env python3
"""PNG plots of a wsbench-load JSON file, one per experiment (the tables
never depend on this): E7 as mean latency (the mean of the repetitions'
means) with min-max bars (over every repetition's calls) per shape and
column; E8 as the server's CPU % and RSS per user step, a line per protocol,
size and repetition; a plain run as throughput per target and repetition.
Needs matplotlib
(Debian python3-matplotlib); without it, says so and exits 0. scripts/load
runs it on every run's load.json."""
import argparse
import json
import os


def main():
    ap = argparse.ArgumentParser(
        description="PNG plots of a wsbench-load JSON file, one per experiment.",
        epilog="Takes a few seconds. Output: <RESULT>-<experiment>.png beside RESULT.json "
               "(load-E7.png, load-E8.png, load-runs.png).")
    ap.add_argument("result", metavar="RESULT.json", help="a wsbench-load JSON file")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("load_plot: matplotlib is not installed (python3-matplotlib); no plot made")
        return
    path = args.result
    with open(path) as f:
        runs = json.load(f)["runs"]
    experiments = sorted({r["experiment"] or "runs" for r in runs})
    for experiment in experiments:
        rows = [r for r in runs if (r["experiment"] or "runs") == experiment]
        if experiment == "E8":
            fig, (cpu, rss) = plt.subplots(1, 2, figsize=(11, 4.5))
            # A colour per protocol, a line style per size.
            protocols = list(dict.fromkeys(r["target"].split()[0] for r in rows))
            sizes = list(dict.fromkeys(r["size"] for r in rows))
            for r in rows:
                users = [s["users"] for s in r["steps"]]
                protocol = r["target"].split()[0]
                # Repetitions share a style; the legend names each line once.
                style = {"color": f"C{protocols.index(protocol)}",
                         "linestyle": ["-", "--", ":", "-."][sizes.index(r["size"]) % 4],
                         "label": f"{protocol} {r['size']}" if r.get("repetition", 0) == 0
                         else None}
                cpu.plot(users, [s["cpu_percent"] for s in r["steps"]], **style)
                rss.plot(users, [s["rss_mb"] for s in r["steps"]], **style)
            for ax, what in ((cpu, "server CPU % (100 = one vCPU)"), (rss, "server RSS, MB")):
                ax.set_xscale("log")
                ax.set_xlabel("users")
                ax.set_ylabel(what)
                ax.grid(True, which="both", alpha=0.3)
            rss.legend(fontsize=7)
            fig.suptitle("E8: the dictionary under ramping users")
            fig.tight_layout()
            out = os.path.splitext(path)[0] + f"-{experiment}.png"
            fig.savefig(out, dpi=100)
            print(f"wrote {out}")
            continue
        fig, ax = plt.subplots(figsize=(8, 4.5))
        if experiment == "E7":
            shapes = list(dict.fromkeys(r["shape"] for r in rows))
            series = list(dict.fromkeys(f"{r['column']}: {r['target'].split()[0]}" for r in rows))
            width = 0.8 / len(series)
            for i, name in enumerate(series):
                xs, means, lo, hi = [], [], [], []
                for j, shape in enumerate(shapes):
                    # The cell's repetitions, each a record of its own.
                    lats = [r["latency_ms"] for r in rows if r["shape"] == shape
                            and f"{r['column']}: {r['target'].split()[0]}" == name
                            and r["latency_ms"]["mean"] is not None]
                    if not lats:
                        continue
                    mean = sum(lat["mean"] for lat in lats) / len(lats)
                    xs.append(j + i * width)
                    means.append(mean)
                    lo.append(mean - min(lat["min"] for lat in lats))
                    hi.append(max(lat["max"] for lat in lats) - mean)
                ax.bar(xs, means, width, yerr=[lo, hi], capsize=3, label=name)
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(shapes))])
            ax.set_xticklabels([f"{s} (threads x requests)" for s in shapes])
            ax.set_ylabel("latency, ms (mean of repetitions; bars: min-max)")
            ax.set_title(f"E7: {rows[0]['target'].split()[1]} under concurrent clients")
        else:
            labels = [f"{r['target']} {r['shape']} #{r.get('repetition', 0)}" for r in rows]
            ax.barh(labels, [r["throughput_per_s"] for r in rows])
            ax.set_xlabel("requests per second")
            ax.set_title("wsbench-load runs")
        ax.legend(fontsize=8) if experiment == "E7" else None
        fig.tight_layout()
        out = os.path.splitext(path)[0] + f"-{experiment}.png"
        fig.savefig(out, dpi=100)
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
