#!/usr/bin/env bash
# Speed benchmark of `moesim search` (a benchmark, not a test): DeepSeek-V3 on 1,024 GB300 GPUs over a pinned search
# space, on one core (taskset, --jobs 1), RUNS times. Prints the median wall seconds, the ratio of the median to a
# baseline measured in the same invocation (`moesim describe`, process start + catalog load), the candidates
# decided per second per core (past the arithmetic screens, each either estimated or set aside by its lower bound,
# search_run.hpp), the layouts estimated per second per core, and the estimates per second per core of an exhaustive
# search (no bound) over the space's tp1 cp1 part. With --full it also times the unpinned search
# (every dimension, --verify 3) once, on one core.
#
#   tools/bench/search.sh [--runs N] [--core C] [--full] [BIN]      (BIN default: build/moesim)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
runs=3 core=0 full=0 bin="$root/build/moesim"
while (($#)); do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --core) core="$2"; shift 2 ;;
    --full) full=1; shift ;;
    *) bin="$1"; shift ;;
  esac
done
[[ -x "$bin" ]] || { echo "search.sh: no moesim binary at $bin (build it first: tools/build.sh)" >&2; exit 1; }
space=(--gpus 1024 --dispatcher hybridep --grouped-gemm fused --cuda-graph full --fsdp 0 --recompute none,full
       --mbs 1,2)
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
time_of() {  # wall seconds of one run of "$@"
  local t0 t1
  t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
base=() walls=()
for ((i = 0; i < runs; ++i)); do
  base+=("$(time_of taskset -c "$core" "$bin" describe --model deepseek-v3)")
  walls+=("$(time_of taskset -c "$core" "$bin" search "${space[@]}" --jobs 1 --verify 0 --top 5)")
done
counts=$(taskset -c "$core" "$bin" search "${space[@]}" --jobs 1 --verify 0 --top 5 --json | \
  python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["screened_in"], d["feasible"])')
read -r decided estimated <<<"$counts"
# Every candidate estimated (no bound) on the tp1 cp1 part of the space: what one estimate costs when the probe
# cache serves a search's candidates.
exh=()
for ((i = 0; i < runs; ++i)); do
  exh+=("$(time_of taskset -c "$core" "$bin" search "${space[@]}" --tp 1 --cp 1 --exhaustive --jobs 1 --verify 0 --top 5)")
done
exh_count=$(taskset -c "$core" "$bin" search "${space[@]}" --tp 1 --cp 1 --exhaustive --jobs 1 --verify 0 --top 5 \
  --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["feasible"])')
b=$(printf '%s\n' "${base[@]}" | median) w=$(printf '%s\n' "${walls[@]}" | median)
echo "search (DeepSeek-V3, 1,024 GB300, ${space[*]}, --top 5), one core, $runs runs"
printf '  baseline (describe)   median %.3f s\n' "$b"
printf '  search                median %.3f s  (%.1fx baseline)\n' "$w" "$(echo "$w / $b" | bc -l)"
printf '  candidates decided    %d  ->  %.0f per second per core\n' "$decided" "$(echo "$decided / $w" | bc -l)"
printf '  layouts estimated     %d  ->  %.0f per second per core\n' "$estimated" "$(echo "$estimated / $w" | bc -l)"
e=$(printf '%s\n' "${exh[@]}" | median)
printf '  every layout estimated (--tp 1 --cp 1 --exhaustive)  %d in median %.3f s  ->  %.0f per second per core\n' \
  "$exh_count" "$e" "$(echo "$exh_count / $e" | bc -l)"
if ((full)); then
  out=$(mktemp)
  t=$(time_of sh -c "taskset -c $core $bin search --gpus 1024 --jobs 1 --verify 3 --top 10 --json > $out")
  python3 - "$out" "$t" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = float(sys.argv[2])
print(f"unpinned search (DeepSeek-V3, 1,024 GB300, every dimension, --verify 3), one core: {t:.1f} s")
print(f"  {d['combinations']:,} combinations, {d['screened_in']:,} past the screens "
      f"({d['screened_in'] / t:,.0f} decided per second), {d['feasible']:,} estimated")
for k, v in d.get("stage_seconds", {}).items():
    print(f"  {k}: {v:.1f} s")
PY
  rm -f "$out"
fi
