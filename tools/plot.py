#!/usr/bin/env python3
"""Figures from moesim's outputs (Python 3 with Debian's python3-matplotlib; nothing else).

  plot.py scaling   SWEEP.csv -o OUT.png [--group COLUMN] [--measured CSV] [--title T]
      GPUs vs tokens/s/GPU, and scaling efficiency (tokens/s/GPU relative to the group's smallest GPU count),
      one line per value of --group (default: the sweep's vary.system column, else one line). --measured adds
      published points from a CSV with gpus, tokens_per_s_per_gpu and gpu_model columns (e.g.
      data/measurements/mlperf-v6-dsv3-gb200-scaling.csv), as markers without a line. Where the sweep carries
      error bands (its tokens_per_s_per_gpu_low / _high columns), each line gets its band, shaded.
  plot.py breakdown SWEEP.csv -o OUT.png [--label COLUMN] [--percent] [--title T]
      one stacked bar per sweep row that ran: the step's time by part (the time_*_s columns, which add up to the
      step time; --percent: as a share of it), labelled by the vary.* columns (or --label).
  plot.py scatter   VALIDATE.json [VALIDATE.json ...] -o OUT.png [--title T]
      measured vs predicted for every predicted row of `moesim validate --json` outputs (one colour per file, one
      panel per metric), with the y = x line and a +-10 % band.
  plot.py memory    RUN.json|SWEEP.csv -o OUT.png [--row N] [--title T]
      bytes per GPU per pipeline rank (weights, gradients, optimizer, activations, buffers), stacked, against the
      usable HBM: from `moesim run --json`, or row N (default 0) of a sweep CSV.
"""
import argparse
import csv
import json
import os
import sys

try:
    import matplotlib
except ModuleNotFoundError:
    # A fresh machine has no matplotlib: say what to install instead of a traceback (tools/plots.sh installs it).
    sys.exit("plot.py needs matplotlib: sudo apt-get install python3-matplotlib (Debian / Ubuntu; run plot.py with "
             "/usr/bin/python3), or pip install matplotlib; tools/plots.sh installs it itself")

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

MEMORY_PARTS = ["weights", "gradients", "optimizer", "activations", "buffers"]
# Breakdown parts in the StepReport's priority order (report/step_report.hpp), then anything else.
BREAKDOWN_ORDER = ["compute", "optimizer", "exposed_ep", "exposed_tp", "exposed_cp", "exposed_pp", "exposed_dp",
                   "host", "bubble"]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def ran(rows):
    return [r for r in rows if r.get("status", "ok") == "ok"]


def vary_columns(rows):
    return [c for c in (rows[0].keys() if rows else []) if c.startswith("vary.")]


def save(fig, out):
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"plot.py: wrote {out}")


def plot_scaling(args):
    rows = ran(read_csv(args.csv))
    if not rows:
        sys.exit("plot.py scaling: no row of the sweep ran")
    group = args.group or ("vary.system" if "vary.system" in rows[0] else None)
    groups = {}
    for r in rows:
        groups.setdefault(r[group] if group else "", []).append(r)
    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, members in groups.items():
        pts = sorted((int(r["gpus"]), number(r["tokens_per_s_per_gpu"])) for r in members)
        gpus = [g for g, _ in pts]
        tps = [t for _, t in pts]
        line = ax_t.plot(gpus, tps, marker="o", label=f"{name} (moesim)" if name else "moesim")[0]
        band = sorted((int(r["gpus"]), number(r.get("tokens_per_s_per_gpu_low")),
                       number(r.get("tokens_per_s_per_gpu_high"))) for r in members)
        if all(lo is not None and hi is not None for _, lo, hi in band):
            coverage = number(members[0].get("band_coverage")) or 0.8
            ax_t.fill_between([g for g, _, _ in band], [lo for _, lo, _ in band], [hi for _, _, hi in band],
                              color=line.get_color(), alpha=0.15, label=f"{100 * coverage:.0f} % error band")
        ax_e.plot(gpus, [100 * t / tps[0] for t in tps], marker="o", label=name or "moesim")
    if args.measured:
        measured = {}
        for r in read_csv(args.measured):
            t = number(r.get("tokens_per_s_per_gpu"))
            if t:
                measured.setdefault(r.get("gpu_model", "measured"), []).append((int(r["gpus"]), t))
        for name, pts in measured.items():
            pts.sort()
            ax_t.plot([g for g, _ in pts], [t for _, t in pts], linestyle="none", marker="x", markersize=9,
                      label=f"{name} measured ({os.path.basename(args.measured)})")
    for ax in (ax_t, ax_e):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("GPUs")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    ax_t.set_ylabel("tokens/s per GPU")
    ax_t.set_ylim(bottom=0)
    ax_e.set_ylabel("scaling efficiency, %")
    ax_e.set_title("tokens/s/GPU relative to the smallest GPU count", fontsize=9)
    ax_t.set_title("throughput per GPU", fontsize=9)
    if args.title:
        fig.suptitle(args.title)
    save(fig, args.out)


def plot_breakdown(args):
    rows = ran(read_csv(args.csv))
    if not rows:
        sys.exit("plot.py breakdown: no row of the sweep ran")
    parts = [c[len("time_"):-len("_s")] for c in rows[0] if c.startswith("time_") and c.endswith("_s")]
    parts.sort(key=lambda p: (BREAKDOWN_ORDER.index(p) if p in BREAKDOWN_ORDER else len(BREAKDOWN_ORDER), p))
    labels_from = [args.label] if args.label else (vary_columns(rows) or ["layout"])
    labels = [" ".join(r[c] for c in labels_from) for r in rows]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(rows) + 3), 4.5))
    bottom = [0.0] * len(rows)
    totals = [sum(number(r.get(f"time_{p}_s")) or 0.0 for p in parts) or 1.0 for r in rows]
    for p in parts:
        values = [number(r.get(f"time_{p}_s")) or 0.0 for r in rows]
        if args.percent:
            values = [100 * v / t for v, t in zip(values, totals)]
        if not any(values):
            continue
        ax.bar(range(len(rows)), values, bottom=bottom, label=p.replace("_", " "))
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("% of the step (critical rank)" if args.percent else "seconds per step (critical rank)")
    ax.legend(fontsize=8, bbox_to_anchor=(1.01, 1), loc="upper left")
    ax.grid(True, axis="y", alpha=0.3)
    if args.title:
        ax.set_title(args.title, fontsize=10)
    save(fig, args.out)


def plot_scatter(args):
    # One panel per metric (TFLOPS/GPU, tokens/s/GPU, step seconds): their scales differ by decades.
    by_metric = {}
    for path in args.json:
        with open(path) as f:
            doc = json.load(f)
        name = os.path.basename(path).rsplit(".", 1)[0]
        for r in doc["rows"]:
            if r.get("predicted") is not None:
                by_metric.setdefault(r["metric"], {}).setdefault(name, []).append((r["measured"], r["predicted"]))
    if not by_metric:
        sys.exit("plot.py scatter: no predicted row")
    metrics = sorted(by_metric, key=lambda m: -sum(len(v) for v in by_metric[m].values()))
    fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 5), squeeze=False)
    colours = {name: f"C{i}" for i, name in enumerate(os.path.basename(p).rsplit(".", 1)[0] for p in args.json)}
    for ax, metric in zip(axes[0], metrics):
        lo, hi = float("inf"), 0.0
        for name, pts in by_metric[metric].items():
            lo = min(lo, *[min(m, p) for m, p in pts])
            hi = max(hi, *[max(m, p) for m, p in pts])
            ax.scatter([m for m, _ in pts], [p for _, p in pts], s=14, alpha=0.75, color=colours[name],
                       label=f"{name} (n={len(pts)})")
        line = [lo * 0.9, hi * 1.1]
        ax.plot(line, line, color="black", linewidth=0.8, label="predicted = measured")
        ax.fill_between(line, [v * 0.9 for v in line], [v * 1.1 for v in line], color="grey", alpha=0.15,
                        label="within 10 %")
        ax.set_xlabel(f"measured {metric}")
        ax.set_ylabel(f"predicted {metric}")
        ax.legend(fontsize=7, loc="upper left")
        ax.grid(True, alpha=0.3)
    if args.title:
        fig.suptitle(args.title)
    save(fig, args.out)


def memory_from(path, row):
    if path.endswith(".json"):
        with open(path) as f:
            doc = json.load(f)
        stages = doc.get("memory", [])
        parts = {p: [s.get(f"{p}_GiB", 0.0) for s in stages] for p in MEMORY_PARTS}
        return parts, doc.get("usable_hbm_GiB"), doc.get("layout_summary", "")
    rows = read_csv(path)
    r = rows[row]
    if r.get("status", "ok") != "ok":
        sys.exit(f"plot.py memory: row {row} did not run: {r.get('reason')}")
    stages = sorted({int(c[len("mem_pp"):].split("_")[0]) for c in r if c.startswith("mem_pp") and r[c] != ""})
    parts = {p: [number(r[f"mem_pp{s}_{p}_GiB"]) or 0.0 for s in stages] for p in MEMORY_PARTS}
    return parts, number(r.get("usable_hbm_GiB")), r.get("layout", "")


def plot_memory(args):
    parts, usable, layout = memory_from(args.input, args.row)
    n = len(next(iter(parts.values())))
    if n == 0:
        sys.exit("plot.py memory: no per-rank memory in the input")
    fig, ax = plt.subplots(figsize=(max(5, 0.6 * n + 3), 4.5))
    bottom = [0.0] * n
    for p in MEMORY_PARTS:
        ax.bar(range(n), parts[p], bottom=bottom, label=p)
        bottom = [b + v for b, v in zip(bottom, parts[p])]
    if usable:
        ax.axhline(usable, color="red", linestyle="--", linewidth=1, label=f"usable HBM {usable:.0f} GiB")
    ax.set_xticks(range(n))
    ax.set_xticklabels([f"pp{s}" for s in range(n)])
    ax.set_xlabel("pipeline rank")
    ax.set_ylabel("GiB per GPU")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(args.title or layout, fontsize=9)
    save(fig, args.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="kind", required=True)
    s = sub.add_parser("scaling")
    s.add_argument("csv")
    s.add_argument("--group")
    s.add_argument("--measured")
    b = sub.add_parser("breakdown")
    b.add_argument("csv")
    b.add_argument("--label")
    b.add_argument("--percent", action="store_true")
    c = sub.add_parser("scatter")
    c.add_argument("json", nargs="+")
    m = sub.add_parser("memory")
    m.add_argument("input")
    m.add_argument("--row", type=int, default=0)
    for p in (s, b, c, m):
        p.add_argument("-o", "--out", required=True)
        p.add_argument("--title")
    args = ap.parse_args()
    {"scaling": plot_scaling, "breakdown": plot_breakdown, "scatter": plot_scatter, "memory": plot_memory}[args.kind](
        args)


if __name__ == "__main__":
    main()
