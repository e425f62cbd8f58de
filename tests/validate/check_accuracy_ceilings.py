#!/usr/bin/env python3
"""Runs `moesim validate --json` on each bundled table named in accuracy_ceilings.txt and fails when its median
or p90 |error| rises above the ceiling there, or fewer rows are predicted than the floor there.

The README's accuracy tables are regenerated from whatever the model predicts (tools/update-readme.sh), so a
regression on the real tables would pass CI once they are regenerated; these ceilings do not move by themselves.
Usage: check_accuracy_ceilings.py MOESIM_BINARY REPOSITORY_ROOT"""
import json
import subprocess
import sys
from pathlib import Path

binary, root = sys.argv[1], Path(sys.argv[2])
ceilings = Path(__file__).with_name("accuracy_ceilings.txt")
failures, checked = [], 0
for number, line in enumerate(ceilings.read_text().splitlines(), 1):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    fields = line.split()
    if len(fields) != 4:
        sys.exit(f"{ceilings}:{number}: expected 'TABLE MIN_PREDICTED MEDIAN_MAX P90_MAX', got '{line}'")
    table, min_predicted, median_max, p90_max = fields[0], int(fields[1]), float(fields[2]), float(fields[3])
    path = root / "data" / "measurements" / table
    if not path.is_file():
        failures.append(f"{ceilings}:{number}: no table {path}")
        continue
    # groundtruth.csv is validate's default table, which is read with its recipe settings (groundtruth_recipes.csv)
    # as the README's table is; any other table is passed with --csv.
    table_args = [] if table == "groundtruth.csv" else ["--csv", str(path)]
    run = subprocess.run([binary, "--data-dir", str(root), "validate", "--json", *table_args], capture_output=True,
                         text=True, cwd=root)
    if run.returncode != 0:
        failures.append(f"{table}: moesim validate exited {run.returncode}: {run.stderr.strip()}")
        continue
    s = json.loads(run.stdout)["summary"]
    predicted, median, p90 = s["n"], s["median_abs_error_pct"], s["p90_abs_error_pct"]
    print(f"{table}: {predicted} rows predicted (floor {min_predicted}), median |error| {median:.2f} % "
          f"(ceiling {median_max}), p90 {p90:.2f} % (ceiling {p90_max})")
    if predicted < min_predicted:
        failures.append(f"{table}: {predicted} rows predicted, fewer than the floor {min_predicted}")
    if median > median_max:
        failures.append(f"{table}: median |error| {median:.2f} % above its ceiling {median_max} %")
    if p90 > p90_max:
        failures.append(f"{table}: p90 |error| {p90:.2f} % above its ceiling {p90_max} %")
    checked += 1
if checked == 0 and not failures:
    failures.append(f"{ceilings}: no table listed")
for f in failures:
    print("FAIL " + f, file=sys.stderr)
if failures:
    print(f"An improvement lowers the ceilings in {ceilings.name} in the same commit; a regression is a bug, or "
          "a deliberate trade-off that raises them in its own commit saying why.", file=sys.stderr)
sys.exit(1 if failures else 0)
