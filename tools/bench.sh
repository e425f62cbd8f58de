#!/usr/bin/env bash
# Speed benchmark of moesim (a benchmark, not a test: it asserts nothing about the figures).
#
# Builds moesim Release (-O2, no tests) into build-bench/, then runs each case RUNS times pinned to one core
# (taskset) under /usr/bin/time -v and prints, per case: median, min and max wall seconds, the ratio of the
# median to the baseline's median measured in the same invocation, median user+sys CPU seconds, and peak RSS.
# Targets (from the speed issue) are printed beside the figures and judged on the wall median and the peak RSS:
# the default `run` < 2 s on one core, the 8,192-GPU case < 10 s, every case < 2 GiB.
#
#   tools/bench.sh [--runs N] [--markdown] [--core C] [--csv FILE] [--no-build] [--no-engine] [--no-python] [--jobs J]
#
#   --runs N     runs per case (default 5)
#   --markdown   print the table as markdown on stdout (progress always goes to stderr)
#   --core C     the core to pin to (default 0)
#   --csv FILE   measurements table for the validate case (default data/measurements/groundtruth.csv)
#   --no-build   reuse build-bench/ as it is
#   --no-engine  leave out the optional engine micro-benchmark row (tools/engine_bench.cpp)
#   --no-python  leave out the Python module's table (tools/bench/python.py)
#   --jobs J     build parallelism (default 2: the development machine is shared)
#
# Cases: baseline `describe --model deepseek-v3` (process start + catalog load, nearly no work); `run` (the
# embedded default, DeepSeek-V3 on 256 GB300); DeepSeek-V3 on 8,192 GB200, balanced, with skewed routing and
# stragglers, and with skewed routing on the cluster fabric (ECMP; issue 18: < 10 s and < 4 GiB, its ratio to the
# balanced case printed under the table); `validate` over the CSV; and, if
# it builds, moesim_engine_bench with its default arguments (tools/bench/engine.sh). When the Python module builds
# (pybind11, tools/setup.sh --python), a second table from tools/bench/python.py: import time, run() in-process
# against `moesim run --json`, and a 1,000-point sweep from Python against `moesim sweep`, as ratios.
# Exit status: 0 when every case ran, 1 on usage errors or when a case exited non-zero (its row says FAILED).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-bench"
runs=5 core=0 markdown=0 do_build=1 engine=1 python=1 jobs=2
csv="$root/data/measurements/groundtruth.csv"
usage() { sed -n '/^#   tools\/bench.sh/,/^#   --jobs/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit "${1:-1}"; }
while (($#)); do
  case "$1" in
    --runs) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage; runs="$2"; shift 2 ;;
    --core) [[ "${2:-}" =~ ^[0-9]+$ ]] || usage; core="$2"; shift 2 ;;
    --csv) [[ -n "${2:-}" ]] || usage; csv="$2"; shift 2 ;;
    --jobs) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage; jobs="$2"; shift 2 ;;
    --markdown) markdown=1; shift ;;
    --no-build) do_build=0; shift ;;
    --no-engine) engine=0; shift ;;
    --no-python) python=0; shift ;;
    -h|--help) usage 0 ;;
    *) echo "bench.sh: unknown argument $1" >&2; usage ;;
  esac
done
log() { echo "bench.sh: $*" >&2; }

if ((do_build)); then
  log "building Release (-O2) in $build"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    -DMOESIM_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" -j"$jobs" --target moesim >/dev/null
  if ((python)) && cmake --build "$build" --target help | grep -q '_moesim'; then
    cmake --build "$build" -j"$jobs" --target _moesim >/dev/null
  fi
fi
moesim="$build/moesim"
[[ -x "$moesim" ]] || { log "no $moesim (run without --no-build)"; exit 1; }

# DeepSeek-V3 (no MTP) on 8,192 GB200: TP2 PP4 VPP4 EP32, DP 1024, 16 micro-batches. The pipeline layout puts
# the 61 decoder layers on 16 virtual stages: 3 + 14 x 4 + 2 (embedding on the first, loss on the last).
big_case=(run --model deepseek-v3-no-mtp --system gb200-nvl72 --gpus 8192 --tp 2 --pp 4 --vpp 4 --ep 32 --mbs 1
          --gbs 16384 --seq 4096 --precision mxfp8 --dispatcher hybridep --pp-layout "Et*3|(t*4|)*14t*2L")

# The same with skewed routing (issue 18: Dirichlet popularity, the most loaded EP rank of each MoE layer paces
# it, so every MoE layer differs) and the straggler wait of the slowest of the 8,192 ranks.
skewed_case=("${big_case[@]}" --routing dirichlet:10 --stragglers gaussian:0.02)

# Skewed routing with the fabric on (issue 18): the cluster graph's leaf-spine fabric, flows hashed by ECMP onto the
# leaves' uplink cables (more flows than adaptive routing's bundles).
fabric_case=("${big_case[@]}" --routing dirichlet:10 --fabric cluster --fabric-routing ecmp)

# id | label | wall target in seconds ("" = none) | command
names=(baseline default big skewed fabric validate)
declare -A label target cmd
label[baseline]="baseline: describe --model deepseek-v3"; target[baseline]=""
label[default]="run (default: DeepSeek-V3, 256 GB300)";   target[default]="2"
label[big]="run DeepSeek-V3, 8,192 GB200";                target[big]="10"
label[skewed]="run DeepSeek-V3, 8,192 GB200, skewed routing"; target[skewed]="10"
label[fabric]="run DeepSeek-V3, 8,192 GB200, skewed, fabric on (ECMP)"; target[fabric]="10"
label[validate]="validate ($(basename "$csv"))"; target[validate]=""
cmd[baseline]="$(printf '%q ' "$moesim" describe --model deepseek-v3)"
cmd[default]="$(printf '%q ' "$moesim" run)"
cmd[big]="$(printf '%q ' "$moesim" "${big_case[@]}")"
cmd[skewed]="$(printf '%q ' "$moesim" "${skewed_case[@]}")"
cmd[fabric]="$(printf '%q ' "$moesim" "${fabric_case[@]}")"
cmd[validate]="$(printf '%q ' "$moesim" validate --csv "$csv")"
if ((engine)); then
  if bin="$("$root/tools/bench/engine.sh" "$build" "$jobs")"; then
    names+=(engine)
    label[engine]="moesim_engine_bench (defaults)"; target[engine]=""
    cmd[engine]="$(printf '%q ' "$bin")"
  else
    log "engine micro-benchmark row left out (it did not build)"
  fi
fi
rss_target_mib=2048
declare -A rss_target=([fabric]=4096)  # the fabric case's target (issue 18): < 4 GiB

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0
declare -A med min max cpu rss status
for n in "${names[@]}"; do
  log "${label[$n]}: $runs runs on core $core"
  eval "set -- ${cmd[$n]}"
  "$root/tools/bench/measure.sh" "$runs" "$core" "$tmp/$n.err" -- "$@" >"$tmp/$n.runs"
  read -r med[$n] min[$n] max[$n] < <(cut -d' ' -f1 "$tmp/$n.runs" | sort -g |
    awk '{a[NR] = $1} END {printf "%.3f %.3f %.3f\n", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2, a[1], a[NR]}')
  cpu[$n]="$(cut -d' ' -f2 "$tmp/$n.runs" | sort -g | awk '{a[NR] = $1} END {printf "%.2f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}')"
  rss[$n]="$(awk '$3 > m {m = $3} END {printf "%.0f", m / 1024}' "$tmp/$n.runs")"
  status[$n]="$(awk '$4 != 0 {bad = $4} END {print bad + 0}' "$tmp/$n.runs")"
  if [[ "${status[$n]}" != 0 ]]; then
    failed=1
    log "${label[$n]} exited ${status[$n]}: $(head -c 600 "$tmp/$n.err")"
  fi
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

verdict() {  # wall median, wall target, rss MiB, exit status, rss target MiB -> "ok" / "MISS ..." / "FAILED"
  awk -v w="$1" -v t="$2" -v r="$3" -v rt="$5" -v rc="$4" 'BEGIN {
    if (rc != 0) { print "FAILED (exit " rc ")"; exit }
    v = ""
    if (t != "" && w >= t) v = "MISS wall"
    if (r >= rt) v = (v == "" ? "MISS" : v ",") " RSS"
    print (v == "" ? "ok" : v) }'
}
header=(case runs "wall median s" "min s" "max s" "x baseline" "CPU median s" "peak RSS MiB" target verdict)
rows=()
for n in "${names[@]}"; do
  ratio="$(awk -v a="${med[$n]}" -v b="${med[baseline]}" 'BEGIN {printf (b > 0 ? "%.1f" : "n/a"), (b > 0 ? a / b : 0)}')"
  rt="${rss_target[$n]:-$rss_target_mib}"
  tgt="${target[$n]:+wall < ${target[$n]} s, }RSS < $((rt / 1024)) GiB"
  rows+=("${label[$n]}|$runs|${med[$n]}|${min[$n]}|${max[$n]}|$ratio|${cpu[$n]}|${rss[$n]}|$tgt|$(verdict "${med[$n]}" "${target[$n]}" "${rss[$n]}" "${status[$n]}" "$rt")")
done

fabric_ratio="$(awk -v a="${med[fabric]}" -v b="${med[big]}" 'BEGIN {printf (b > 0 ? "%.2f" : "n/a"), (b > 0 ? a / b : 0)}')"
fabric_note="Skewed routing with the fabric on over the balanced default path (8,192 GB200, wall medians of this run): $fabric_ratio x."
machine="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), load average $load_before before, $load_after after; pinned to core $core; commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD -- src kernels-sim 2>/dev/null || echo ' + local changes')"
if ((markdown)); then
  line="|"; sep="|"
  for h in "${header[@]}"; do line+=" $h |"; sep+="---|"; done
  echo "$line"; echo "$sep"
  for r in "${rows[@]}"; do echo "| ${r//|/ | } |"; done
  echo
  echo "$fabric_note"
  echo
  echo "Release -O2, $runs runs per case; $machine."
else
  {
    (IFS='|'; echo "${header[*]}")
    printf '%s\n' "${rows[@]}"
  } | column -t -s '|'
  echo "$fabric_note"
  echo "Release -O2, $runs runs per case; $machine."
fi
if ((python)); then
  interpreter="$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")"
  if [[ -n "$interpreter" ]] && ls "$build"/python/moesim/_moesim*.so >/dev/null 2>&1; then
    log "Python module: $runs runs per row on core $core"
    echo
    "$interpreter" "$root/tools/bench/python.py" "$build" --runs "$runs" --core "$core" \
      $( ((markdown)) && echo --markdown) || failed=1
  else
    log "Python table left out (the module did not build: tools/setup.sh --python)"
  fi
fi
exit "$failed"
