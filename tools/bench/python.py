#!/usr/bin/env python3
"""Speed of the Python module against the command line, in one run (a benchmark, not a test).

Rows: `import moesim` in a fresh interpreter; one `moesim.run()` of the default case in-process against
`moesim run --json` as a process, and the Python layer's own share (run() less the extension's bare call of the
same command); a 1,000-point sweep (small-moe on 8 H100, engine per point, --jobs 1) from Python against
`moesim sweep`, repeated in one interpreter and as the first call of a fresh one. Everything pinned to one core;
medians of RUNS, of wall time and of CPU time (user + sys, which a loaded machine disturbs less). Targets: import
< 0.5 s, sweep <= 1.2x the CLI.

    tools/bench/python.py BUILD_DIR [--runs N] [--core C] [--markdown]
(run with the interpreter the build found: tools/bench.sh does so).
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SMALL = dict(model=str(ROOT / "tests/fixtures/predict/small_moe.json"), system="dgx-h100",
             layout=str(ROOT / "tests/fixtures/predict/h100x8.json"))
VARY = {"gbs": [32 * k for k in range(1, 11)], "seq": [1024 * k for k in range(1, 11)],
        "nic.bandwidth_GBps": [10 * k for k in range(1, 11)]}
# Run in a fresh interpreter: prints the wall and CPU seconds of its body (after `import moesim`).
FRESH = """import os, sys, time
t0, c0 = time.perf_counter(), os.times()
import moesim
{body}
c1 = os.times()
print(time.perf_counter() - t0, c1.user + c1.system - c0.user - c0.system)"""


def child(cmd, env=None):
    """(wall, CPU) seconds of a process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def fresh(pin, env, body):
    """(wall, CPU) seconds that a fresh interpreter reports for `body` (and the import before it)."""
    out = subprocess.run(pin + [sys.executable, "-c", FRESH.format(body=body)], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


def here(f):
    t0, c0 = time.perf_counter(), os.times()
    f()
    c1 = os.times()
    return time.perf_counter() - t0, c1.user + c1.system - c0.user - c0.system


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--core", type=int, default=0)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    build = Path(a.build).resolve()
    package = build / "python"
    cli = [str(build / "moesim")]
    env = dict(os.environ, PYTHONPATH=str(package), MOESIM_PROGRESS="0")
    pin = ["taskset", "-c", str(a.core)]
    os.sched_setaffinity(0, {a.core})
    sys.path.insert(0, str(package))
    os.environ["MOESIM_PROGRESS"] = "0"
    n = range(a.runs)

    imports = [fresh(pin, env, "pass") for _ in n]

    import moesim
    from moesim import _moesim

    moesim.run()  # warm: the first call reads the catalog files into the page cache
    cli_run = [child(pin + cli + ["run", "--json"]) for _ in n]
    py_run = [here(moesim.run) for _ in n]
    bare_run = [here(lambda: _moesim.call(["run", "--json"])) for _ in n]

    case = moesim.Case(**SMALL)
    vary_flags = []
    for k, vs in VARY.items():
        vary_flags += ["--vary", f"{k}={','.join(map(str, vs))}"]
    cli_sweep = [child(pin + cli + ["sweep"] + case.args() + vary_flags + ["--jobs", "1"]) for _ in n]
    py_sweep = [here(lambda: moesim.sweep(case, vary=VARY, jobs=1)) for _ in n]
    py_frame = [here(lambda: moesim.sweep(case, vary=VARY, jobs=1).to_dataframe()) for _ in n]
    sweep_body = f"moesim.sweep(moesim.Case(**{SMALL!r}), vary={VARY!r}, jobs=1)"
    # Less the import, timed alone above.
    py_first = [tuple(x - y for x, y in zip(fresh(pin, env, sweep_body), imports[i])) for i in n]
    points = len(moesim.sweep(case, vary=VARY, jobs=1))

    def med(xs, k):
        return statistics.median(x[k] for x in xs)

    def row(label, py, other=None, target=None, scale=1.0, unit="s"):
        cells = [label, f"{med(py, 0) * scale:.3f} {unit}", f"{med(py, 1) * scale:.3f} {unit}"]
        if other is None:
            return cells + ["", "", "", "", target or "", ""]
        wall, cpu = med(py, 0) / med(other, 0), med(py, 1) / med(other, 1)
        verdict = "" if target is None else ("ok" if max(wall, cpu) <= 1.2 else "MISS" if min(wall, cpu) > 1.2
                                             else "ok by CPU" if cpu <= 1.2 else "ok by wall")
        return cells + [f"{med(other, 0):.3f} s", f"{med(other, 1):.3f} s", f"{wall:.2f}", f"{cpu:.2f}",
                        target or "", verdict]

    imp = row("import moesim (fresh interpreter)", imports, target="< 0.5 s")
    imp[-1] = "ok" if med(imports, 0) < 0.5 else "MISS"
    overhead = [(p[0] - b[0], p[1] - b[1]) for p, b in zip(py_run, bare_run)]
    rows = [
        imp,
        row("run(), default case, in-process vs `moesim run --json` as a process", py_run, cli_run),
        row("run(): the Python layer's share (less the bare extension call)", overhead, scale=1e3, unit="ms"),
        row(f"sweep, {points} points, --jobs 1, repeated in one interpreter vs `moesim sweep`", py_sweep, cli_sweep,
            "<= 1.2x"),
        row("the same sweep, first call of a fresh interpreter", py_first, cli_sweep, "<= 1.2x"),
        row("the same sweep with .to_dataframe()", py_frame, cli_sweep, "<= 1.2x"),
    ]
    header = ["Python row", "Python wall", "Python CPU", "CLI wall", "CLI CPU", "ratio wall", "ratio CPU", "target",
              "verdict"]
    if a.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
        for r in [header] + rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    print(f"Medians of {a.runs} runs, pinned to core {a.core}; {sys.executable} {sys.version.split()[0]}; load average "
          f"{' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
