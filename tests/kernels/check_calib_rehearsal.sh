#!/usr/bin/env bash
# ctest calib_rehearsal_scripts: the Python calibration suites' rehearsal output equals the committed format sample
# (tests/kernels/calibration_format_sample/), and `bash tools/calibrate.sh --dry-run --quick` expects as many
# records as the sample holds; both time budgets fit one device command; an empty or bare --commit is harmless;
# every sample line carries written_at; no fp8_block128 fast-accumulation GEMM and no flash case with two head
# dimensions is planned. Exit 77 (skipped) without python3 or a C++ compiler.
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
# Called with bash, as on the GPU machine (the exec bit may not survive the copy there). `--commit ""` and a bare
# --commit (what `--commit $(git rev-parse HEAD)` gives where there is no .git) are neither refused nor allowed to
# swallow the option after them: the first two runs would otherwise not be dry runs.
dry="$(bash "$root/tools/calibrate.sh" "$tmp/out" --commit "" --dry-run --quick)"
echo "$dry"
grep -q "^Expected records: $expected " <<<"$dry" || { echo "dry run does not expect $expected records"; exit 1; }
full="$(bash "$root/tools/calibrate.sh" "$tmp/out" --commit --dry-run)" || { echo "full dry run failed"; exit 1; }
grep -q "^Expected records: " <<<"$full" || { echo "a bare --commit swallowed --dry-run"; exit 1; }
bash "$root/tools/calibrate.sh" "$tmp/out" --dry-run --commit >/dev/null || { echo "a trailing --commit was refused"; exit 1; }
[[ ! -e "$tmp/out" ]] || { echo "the dry run created its output folder"; exit 1; }
# The whole run fits one device command (600 s) with 60 s to spare, quick and full alike.
for text in "$dry" "$full"; do
  budget="$(sed -n 's/^Time budget: .* = \([0-9]*\) s at most.*/\1/p' <<<"$text")"
  [[ -n "$budget" && "$budget" -le 540 ]] || { echo "time budget '$budget' s, over 540 s"; exit 1; }
  echo "time budget: $budget s"
done
# Every line of the sample is stamped; the plan has no fast-accumulation block-scaled GEMM and no flash case
# with two head dimensions (the flash backend refuses those before running anything).
for f in "$sample"/*.jsonl; do
  [[ "$(grep -vc '"written_at":"' "$f")" == 0 ]] || { echo "unstamped lines in $f"; exit 1; }
done
if grep -h '"dtype":"fp8_block128"' "$sample/kernels.jsonl" | grep '"fast_accum":true' >/dev/null; then
  echo "the plan has fp8_block128 with fast accumulation"; exit 1
fi
for q in --quick ""; do
  python3 - "$root/kernels-sim/cuda" $q <<'PY' || { echo "calib_attention.py plans a flash case it cannot run"; exit 1; }
import sys
sys.path.insert(0, sys.argv[1])
import calib_attention
bad = [c["shape"] for c in calib_attention.plan(len(sys.argv) > 2)
       if c["_backend"] == "FLASH_ATTENTION" and c["shape"]["head_dim_qk"] != c["shape"]["head_dim_v"]]
sys.exit(1 if bad else 0)
PY
done
echo "calib_rehearsal_scripts: OK ($expected records)"
