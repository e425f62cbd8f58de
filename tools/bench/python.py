#!/usr/bin/env python3
"""Speed of the Python module against the command line, in one run (a benchmark, not a test).

Rows: `import moesim` in a fresh interpreter; one `moesim.run()` of the default case in-process against
`moesim run --json` as a process, and the Python layer's own share (run() less the extension's bare call of the
same command); a 1,000-point sweep (small-moe on 8 H100, engine per point, --jobs 1) from Python against
`moesim sweep`. Everything pinned to one core; medians of RUNS. Targets: import < 0.5 s, sweep <= 1.2x the CLI.

    tools/bench/python.py BUILD_DIR [--runs N] [--core C] [--markdown]
(run with the interpreter the build found: tools/bench.sh does so).
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--model", str(ROOT / "tests/fixtures/predict/small_moe.json"), "--system", "dgx-h100",
         "--layout", str(ROOT / "tests/fixtures/predict/h100x8.json")]
VARY = {"gbs": [32 * k for k in range(1, 11)], "seq": [1024 * k for k in range(1, 11)],
        "nic.bandwidth_GBps": [10 * k for k in range(1, 11)]}


def wall(cmd, env=None):
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - t0


def timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


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

    code = "import time; t = time.perf_counter(); import moesim; print(time.perf_counter() - t)"
    imports = [float(subprocess.run(pin + [sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                    check=True).stdout) for _ in range(a.runs)]

    import moesim
    from moesim import _moesim

    moesim.run()  # warm: the first call reads the catalog files into the page cache
    cli_run = [wall(pin + cli + ["run", "--json"]) for _ in range(a.runs)]
    py_run = [timed(moesim.run) for _ in range(a.runs)]
    bare_run = [timed(lambda: _moesim.call(["run", "--json"])) for _ in range(a.runs)]
    overhead = [p - b for p, b in zip(py_run, bare_run)]

    vary_flags = []
    for k, vs in VARY.items():
        vary_flags += ["--vary", f"{k}={','.join(map(str, vs))}"]
    case = moesim.Case(model=SMALL[1], system=SMALL[3], layout=SMALL[5])
    cli_sweep = [wall(pin + cli + ["sweep"] + SMALL + vary_flags + ["--jobs", "1"]) for _ in range(a.runs)]
    py_sweep = [timed(lambda: moesim.sweep(case, vary=VARY, jobs=1)) for _ in range(a.runs)]
    points = len(moesim.sweep(case, vary=VARY, jobs=1))
    py_frame = [timed(lambda: moesim.sweep(case, vary=VARY, jobs=1).to_dataframe()) for _ in range(a.runs)]

    med = statistics.median
    rows = [
        ("import moesim (fresh interpreter)", f"{med(imports):.3f}", "", "", "< 0.5 s",
         "ok" if med(imports) < 0.5 else "MISS"),
        ("run() default case: Python in-process vs `moesim run --json` process", f"{med(py_run):.3f}",
         f"{med(cli_run):.3f}", f"{med(py_run) / med(cli_run):.2f}", "", ""),
        ("run(): the Python layer's share (run() less the bare extension call)", f"{med(overhead) * 1e3:.2f} ms",
         "", "", "", ""),
        (f"sweep, {points} points, --jobs 1: Python vs `moesim sweep`", f"{med(py_sweep):.3f}",
         f"{med(cli_sweep):.3f}", f"{med(py_sweep) / med(cli_sweep):.2f}", "<= 1.2x",
         "ok" if med(py_sweep) <= 1.2 * med(cli_sweep) else "MISS"),
        ("the same sweep with .to_dataframe()", f"{med(py_frame):.3f}", f"{med(cli_sweep):.3f}",
         f"{med(py_frame) / med(cli_sweep):.2f}", "<= 1.2x", "ok" if med(py_frame) <= 1.2 * med(cli_sweep) else "MISS"),
    ]
    header = ("Python row", "Python median s", "CLI median s", "ratio", "target", "verdict")
    if a.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
        for r in [header] + rows:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    print(f"{a.runs} runs each, pinned to core {a.core}; {sys.executable} {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
