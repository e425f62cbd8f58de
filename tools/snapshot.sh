#!/usr/bin/env bash
# Writes the outputs a behaviour-preserving refactor must leave byte-identical into DIR: validate --json on
# every bundled measurement table, the ladder, the default run's StepReport and trace, its memory report, and
# two FSDP / TP-heavy what-ifs. Usage: tools/snapshot.sh DIR [MOESIM_BINARY]
#   tools/snapshot.sh /tmp/before && <refactor> && tools/snapshot.sh /tmp/after && diff -r /tmp/before /tmp/after
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: tools/snapshot.sh DIR [MOESIM_BINARY]}"
bin="${2:-$root/build/moesim}"
mkdir -p "$out"
cd "$root"
m=data/measurements
"$bin" validate --json >"$out/validate_groundtruth.json"
"$bin" validate --json --csv "$m/bridge_heldout.csv" >"$out/validate_heldout.json"
"$bin" validate --json --csv "$m/gb200_ladder.csv" --ladder >"$out/validate_ladder.json"
"$bin" run --json --trace "$out/default_trace.json" >"$out/default_run.json"
"$bin" memory --json >"$out/default_memory.json"
"$bin" run --json --model deepseek-v3 --system gb200-nvl72 --gpus 8192 --tp 2 --pp 4 --vpp 4 --ep 32 --gbs 16384 --seq 4096 --precision mxfp8 --recompute "selective: mlp" --mtp 1 --pp-layout "Et*4|(t*4|)*14tmL" --trace "$out/gb200_8192_trace.json" \
  >"$out/gb200_8192_run.json" || echo "exit $?" >"$out/gb200_8192_run.exit"
"$bin" run --json --model qwen3-30b-a3b --system dgx-h100 --gpus 16 --ep 16 --gbs 256 --seq 4096 --precision bf16 \
  --fsdp --trace "$out/qwen_fsdp_trace.json" >"$out/qwen_fsdp_run.json" || echo "exit $?" >"$out/qwen_fsdp_run.exit"
"$bin" run --json --model gpt-oss-120b --system dgx-b200 --gpus 16 --tp 2 --cp 2 --ep 8 --etp 2 --recompute full \
  --tp-comm-overlap --gbs 128 --seq 8192 --trace "$out/gptoss_tp_trace.json" >"$out/gptoss_tp_run.json" \
  || echo "exit $?" >"$out/gptoss_tp_run.exit"
echo "snapshot written to $out"
