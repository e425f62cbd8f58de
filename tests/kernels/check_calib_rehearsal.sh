#!/usr/bin/env bash
# ctest calib_rehearsal_scripts: the Python calibration suites' rehearsal output equals the committed format sample
# (tests/kernels/calibration_format_sample/), and tools/calibrate.sh --dry-run --quick expects as many records as
# the sample holds. Exit 77 (skipped) without python3 or a C++ compiler.
set -euo pipefail
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the source tree
root="$1"
sample="$root/tests/kernels/calibration_format_sample"
command -v python3 >/dev/null || { echo "python3 not found: skipped"; exit 77; }
command -v "${CXX:-c++}" >/dev/null || { echo "no C++ compiler for the dry run's planner: skipped"; exit 77; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 "$root/kernels-sim/cuda/calib_attention.py" --rehearse --quick >"$tmp/attention.jsonl"
python3 "$root/kernels-sim/cuda/calib_host.py" --rehearse --quick >"$tmp/host_costs.jsonl"
diff -u "$sample/attention.jsonl" "$tmp/attention.jsonl"
diff -u "$sample/host_costs.jsonl" "$tmp/host_costs.jsonl"
expected="$(cat "$sample"/*.jsonl | grep -c .)"
dry="$("$root/tools/calibrate.sh" "$tmp/out" --dry-run --quick)"
echo "$dry"
grep -q "^Expected records: $expected " <<<"$dry" || { echo "dry run does not expect $expected records"; exit 1; }
[[ ! -e "$tmp/out" ]] || { echo "the dry run created its output folder"; exit 1; }
echo "calib_rehearsal_scripts: OK ($expected records)"
