#!/usr/bin/env python3
"""Per layout of data/measurements/simumax_b200.csv: the time per micro-batch (slope) and the fixed part F of
step = m * t + F, measured, predicted by moesim and predicted by SimuMax (its own perf_ms, quoted in each row's
notes), fitted by least squares over the layout's three micro-batch counts (4, 8, 32).

Usage (from the repository root):
  python3 tools/simumax-slopes.py                  # runs build/moesim validate --csv ... --json
  python3 tools/simumax-slopes.py --json FILE      # reads a saved `validate --json` output
  python3 tools/simumax-slopes.py --moesim PATH    # another binary; extra args after `--` go to validate
  python3 tools/simumax-slopes.py --decompose      # also moesim's step end per layout, from each layout's trace

Columns: m (micro-batch counts), slope t in ms (measured / moesim / SimuMax; moesim's error against the measured
one and against SimuMax's), the pair slopes 4->8 and 8->32 (measured and moesim: a cost that grew with the step's
length would make the second larger), and F in ms with moesim's error. "F meas 4-8 / 8-32" is the fixed part each pair
of micro-batch counts gives alone: how far the measurement itself pins F down. The summary prints the medians and how many
layouts have F within 20 % of the measured one. Rows at a single micro-batch count (the context-parallel ones) are
not fitted and are left out.

--decompose splits moesim's step end per layout (the ops after the last stage's last backward, which recur once per
step at every micro-batch count): it traces the layout's smallest-m row (`validate --explain ID --trace`) and, on
the pipeline rank whose ops end the step, sums the time of each step-end op kind from the first of them to the end.
"wait" is that rank's idle time before its clip (the stages meet at the gradient norm); "rest" is moesim's F minus
that tail: the pipeline's fill and drain beyond m micro-batches, and the loss stage's last micro-batch extras.
"""
import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

TABLE = "data/measurements/simumax_b200.csv"
# Columns that name a layout; a layout's rows differ only in the global batch (and so the micro-batch count).
LAYOUT_KEYS = ("model", "tp", "pp", "vpp", "ep", "etp", "cp", "dp", "mbs", "seq", "cp_comm_type", "recompute")


def fit(points):
    """Least-squares line through (m, step): returns (slope, intercept)."""
    n = len(points)
    mx = sum(m for m, _ in points) / n
    my = sum(s for _, s in points) / n
    sxx = sum((m - mx) ** 2 for m, _ in points)
    t = sum((m - mx) * (s - my) for m, s in points) / sxx
    return t, my - t * mx


def pair_slope(points, a, b):
    d = dict(points)
    return (d[b] - d[a]) / (b - a) if a in d and b in d else float("nan")


def pair_intercept(points, a, b):
    """The fixed part the pair (a, b) alone gives: step(a) - a * slope(a, b)."""
    d = dict(points)
    return d[a] - a * pair_slope(points, a, b) if a in d and b in d else float("nan")


def pct(x, ref):
    return 100.0 * (x - ref) / ref


def self_test():
    """Hand-derived checks: an exact line comes back exactly, and a pair's slope and intercept are the line's."""
    line = [(4, 450.0), (8, 850.0), (32, 3250.0)]  # step = 100 m + 50
    t, f = fit(line)
    assert abs(t - 100) < 1e-9 and abs(f - 50) < 1e-9, (t, f)
    assert abs(pair_slope(line, 4, 8) - 100) < 1e-9 and abs(pair_intercept(line, 8, 32) - 50) < 1e-9
    # Three points off a line, against the normal equations written out:
    # slope = (n Sum(m s) - Sum(m) Sum(s)) / (n Sum(m^2) - Sum(m)^2), intercept = (Sum(s) - slope Sum(m)) / n.
    pts = [(4, 400.0), (8, 900.0), (32, 3250.0)]
    n, sm, ss = 3, 44.0, 4550.0
    sms, smm = 4 * 400.0 + 8 * 900.0 + 32 * 3250.0, 16.0 + 64.0 + 1024.0
    slope = (n * sms - sm * ss) / (n * smm - sm * sm)
    t, f = fit(pts)
    assert abs(t - slope) < 1e-9 and abs(f - (ss - slope * sm) / n) < 1e-9, (t, f, slope)
    # Step-end split, hand-built: rank 1 ends the step; its RS 0-2 ms, norm 2-3, idle 3-5 (waiting for rank 0's
    # norm), clip 5-6, Adam 6-9, AG 9-10; rank 0's ops do not count.
    ev = [dict(ph="X", pid=1, name=n, ts=a * 1e3, dur=(b - a) * 1e3) for n, a, b in (
        ("experts_wgrad", -4, 0), ("dp_grad_reduce_scatter", 0, 2), ("grad_norm", 2, 3), ("grad_clip", 5, 6),
        ("optimizer_step", 6, 9), ("dp_param_allgather", 9, 10))]
    ev.append(dict(ph="X", pid=0, name="grad_norm", ts=4e3, dur=1e3))
    sp = step_end_split(ev)
    assert (sp["RS"], sp["norm"], sp["Adam etc."], sp["AG"], sp["wait"], sp["tail"]) == (2, 1, 4, 1, 2, 10), sp
    print("simumax-slopes self-test: ok")
    return 0


# The step-end ops the builder emits (src/workload/optimizer_step.cpp emit_optimizer, the DP reductions and the
# parameter gather), grouped as the --decompose columns print them.
STEP_END_GROUPS = (
    ("RS", ("dp_grad_reduce_scatter", "embedding_grad_allreduce")),
    ("NaN check", ("grad_nan_check_norm", "grad_nan_check_isnan", "grad_nan_check_isinf")),
    ("scale", ("grad_scale", "grad_to_main")),
    ("norm", ("grad_norm",)),
    ("Adam etc.", ("grad_clip", "optimizer_step", "copy_main_to_model_params", "zero_grad_buffer")),
    ("AG", ("dp_param_allgather",)),
)


def step_end_split(events):
    """From Chrome-trace 'X' events (ms fields ts, dur in us as moesim writes them) of one step: on the pid whose
    events end last, the time of each STEP_END_GROUPS group from the first step-end op on, the idle time before its
    clip ("wait": the stages meet at the norm) and the tail's length. Ops overlapping on two streams count each."""
    x = [e for e in events if e.get("ph") == "X"]
    end = max(e["ts"] + e["dur"] for e in x)
    pid = max(x, key=lambda e: e["ts"] + e["dur"])["pid"]
    names = {n: g for g, ns in STEP_END_GROUPS for n in ns}
    mine = sorted((e for e in x if e["pid"] == pid and e["name"] in names), key=lambda e: e["ts"])
    if not mine:
        return None
    out = {g: 0.0 for g, _ in STEP_END_GROUPS}
    for e in mine:
        out[names[e["name"]]] += e["dur"] / 1e3
    clip = [e for e in mine if e["name"] == "grad_clip"]
    before = [e["ts"] + e["dur"] for e in x if e["pid"] == pid and clip and e["ts"] + e["dur"] <= clip[0]["ts"]
              and e["name"] != "grad_norm_item_sync"]
    out["wait"] = (clip[0]["ts"] - max(before)) / 1e3 if clip and before else 0.0
    out["tail"] = (end - mine[0]["ts"]) / 1e3
    return out


def decompose(args, layout_rows):
    """Per layout: the step-end split of its smallest-m row's trace."""
    res = {}
    for name, row_id in layout_rows:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.json")
            cmd = [args.moesim, "validate", "--csv", TABLE, "--explain", row_id, "--trace", path] + args.extra
            subprocess.run(cmd, check=True, capture_output=True, text=True)
            with open(path) as f:
                t = json.load(f)
        res[name] = step_end_split(t["traceEvents"] if isinstance(t, dict) else t)
    return res


def load_predictions(args):
    if args.json:
        with open(args.json) as f:
            return json.load(f)
    cmd = [args.moesim, "validate", "--csv", TABLE, "--json"] + args.extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def print_table(head, lines, markdown):
    """One table of string cells, as markdown or as right-aligned columns."""
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(head)]
        print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        for line in lines:
            print("  ".join(c.rjust(w) for c, w in zip(line, widths)))


def print_decomposition(args, rows):
    split = decompose(args, [(r["name"], r["first_id"]) for r in rows])
    groups = [g for g, _ in STEP_END_GROUPS] + ["wait", "tail", "rest"]
    head = ["layout", "F meas", "F moesim"] + groups
    lines = []
    for r in rows:
        sp = split[r["name"]]
        if sp is None:
            continue
        sp["rest"] = r["fp"] - sp["tail"]
        lines.append([r["name"], "%.1f" % r["fm"], "%.1f" % r["fp"]] + ["%.1f" % sp[g] for g in groups])
    print()
    print("moesim's step end (ms, the rank that ends the step, traced at the smallest micro-batch count):")
    print_table(head, lines, args.markdown)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", help="saved output of `moesim validate --csv %s --json`" % TABLE)
    ap.add_argument("--moesim", default=os.path.join("build", "moesim"))
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    ap.add_argument("--self-test", action="store_true", help="check the fitting arithmetic and exit")
    ap.add_argument("--decompose", action="store_true", help="also split moesim's step end per layout (traces)")
    ap.add_argument("extra", nargs="*", help="extra arguments for validate (after --)")
    args = ap.parse_args()
    if args.self_test:
        return self_test()

    predicted = {r["id"]: r["predicted"] for r in load_predictions(args)["rows"]}
    layouts = {}
    with open(TABLE) as f:
        for r in csv.DictReader(f):
            if r["id"] not in predicted:
                continue
            m = int(r["gbs"]) // (int(r["mbs"]) * int(r["dp"]))
            simumax = re.search(r"perf_ms=([0-9.]+)", r["notes"])
            key = tuple(r[k] for k in LAYOUT_KEYS)
            layouts.setdefault(key, []).append(
                (m, 1e3 * float(r["value"]), 1e3 * predicted[r["id"]], float(simumax.group(1)) if simumax else None,
                 r["id"]))

    rows = []
    for key, pts in layouts.items():
        if len({p[0] for p in pts}) < 2:
            continue
        pts.sort()
        meas = [(p[0], p[1]) for p in pts]
        pred = [(p[0], p[2]) for p in pts]
        simu = [(p[0], p[3]) for p in pts] if all(p[3] is not None for p in pts) else None
        tm, fm = fit(meas)
        tp, fp = fit(pred)
        ts, fs = fit(simu) if simu else (float("nan"), float("nan"))
        k = dict(zip(LAYOUT_KEYS, key))
        name = "%s TP%s PP%s%s DP%s" % (k["model"].replace("-simumax", ""), k["tp"], k["pp"],
                                        " EP" + k["ep"] if k["ep"] else "", k["dp"])
        rows.append(dict(name=name, ms="/".join(str(p[0]) for p in pts), tm=tm, tp=tp, ts=ts, fm=fm, fp=fp, fs=fs,
                         m48=pair_slope(meas, 4, 8), m832=pair_slope(meas, 8, 32), p48=pair_slope(pred, 4, 8),
                         p832=pair_slope(pred, 8, 32), f48=pair_intercept(meas, 4, 8),
                         f832=pair_intercept(meas, 8, 32), first_id=pts[0][4]))

    head = ["layout", "m", "t meas", "t moesim", "t SimuMax", "moesim vs meas", "moesim vs SimuMax",
            "meas 4-8 / 8-32", "moesim 4-8 / 8-32", "F meas", "F meas 4-8 / 8-32", "F moesim", "F SimuMax", "F error"]
    lines = []
    for r in rows:
        lines.append([r["name"], r["ms"], "%.1f" % r["tm"], "%.1f" % r["tp"], "%.1f" % r["ts"],
                      "%+.1f %%" % pct(r["tp"], r["tm"]), "%+.1f %%" % pct(r["tp"], r["ts"]),
                      "%.1f / %.1f" % (r["m48"], r["m832"]), "%.1f / %.1f" % (r["p48"], r["p832"]),
                      "%.1f" % r["fm"], "%.1f / %.1f" % (r["f48"], r["f832"]), "%.1f" % r["fp"], "%.1f" % r["fs"], "%+.1f %%" % pct(r["fp"], r["fm"])])
    print_table(head, lines, args.markdown)
    if args.decompose:
        print_decomposition(args, rows)
    vs_meas = [pct(r["tp"], r["tm"]) for r in rows]
    vs_simu = [pct(r["tp"], r["ts"]) for r in rows]
    simu_vs_meas = [pct(r["ts"], r["tm"]) for r in rows]
    f_err = [pct(r["fp"], r["fm"]) for r in rows]
    drift = [pct(r["m832"], r["m48"]) for r in rows]
    print()
    print("%d layouts. Slope, median: moesim vs measured %+.1f %%, moesim vs SimuMax %+.1f %%, SimuMax vs measured "
          "%+.1f %%; measured 8->32 vs 4->8 pair slope %+.1f %%." %
          (len(rows), statistics.median(vs_meas), statistics.median(vs_simu), statistics.median(simu_vs_meas),
           statistics.median(drift)))
    print("Fixed part F within 20 %% of the measured one on %d of %d layouts (median |error| %.1f %%)." %
          (sum(abs(e) <= 20 for e in f_err), len(rows), statistics.median(abs(e) for e in f_err)))
    inside = sum(min(r["f48"], r["f832"]) <= r["fp"] <= max(r["f48"], r["f832"]) for r in rows)
    print("moesim's F lies between the two pair intercepts (4-8 and 8-32) on %d of %d layouts." % (inside, len(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
