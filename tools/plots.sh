#!/usr/bin/env bash
# Regenerates the README's figures under docs/img/ from moesim's own outputs (nothing hand-entered):
#   deepseek-v3-scaling.png      DeepSeek-V3 (MLPerf v6 recipe: TP2 PP4 VPP4 EP32, GBS 16384, MXFP8, HybridEP, full
#                                CUDA graphs) from 256 to 8,192 GPUs on GB200 vs GB300 NVL72 (moesim sweep), with
#                                the published MLPerf GB200 points (data/measurements/mlperf-v6-dsv3-gb200-scaling.csv)
#   deepseek-v3-breakdown.png    where the step time goes (% of the step) at 256 to 8,192 GB300 GPUs
#   deepseek-v3-memory.png       memory per pipeline rank at 256 GB300 GPUs
#   validation-scatter.png       measured vs predicted over the three bundled validation tables (moesim validate)
# Usage: tools/plots.sh [OUT_DIR]   (default docs/img; MOESIM_BIN picks the binary, default build/moesim)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/img}"
bin="${MOESIM_BIN:-build/moesim}"
[ -x "$bin" ] || tools/build.sh
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3  # Debian's python3, where python3-matplotlib lives
"$py" -c "import matplotlib" 2>/dev/null || {
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-matplotlib
}
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mlperf=(--model deepseek-v3-mlperf --tp 2 --pp 4 --vpp 4 --ep 32 --mbs 1 --gbs 16384 --seq 4096 --precision mxfp8
  --dispatcher hybridep --cuda-graph full --a2a-overlap --pp-layout "Et*4|(t*4|)*14tmL" --recompute "selective: mlp")
"$bin" sweep "${mlperf[@]}" --system gb200-nvl72 --vary system=gb200-nvl72,gb300-nvl72 \
  --vary gpus=256,512,1024,2048,4096,8192 --csv "$tmp/scaling.csv"
"$py" tools/plot.py scaling "$tmp/scaling.csv" --measured data/measurements/mlperf-v6-dsv3-gb200-scaling.csv \
  --title "DeepSeek-V3, MLPerf v6 recipe, GBS 16384: moesim on GB200 vs GB300 NVL72" -o "$out/deepseek-v3-scaling.png"
"$bin" sweep "${mlperf[@]}" --system gb300-nvl72 --vary gpus=256,1024,4096,8192 --csv "$tmp/breakdown.csv"
"$py" tools/plot.py breakdown "$tmp/breakdown.csv" --label vary.gpus --percent \
  --title "DeepSeek-V3, GB300 NVL72, MLPerf v6 recipe: where the step goes, by GPU count" -o "$out/deepseek-v3-breakdown.png"
"$bin" run "${mlperf[@]}" --system gb300-nvl72 --gpus 256 --json >"$tmp/run.json"
"$py" tools/plot.py memory "$tmp/run.json" --title "DeepSeek-V3 on 256 GB300: memory per pipeline rank" \
  -o "$out/deepseek-v3-memory.png"
"$bin" validate --json >"$tmp/groundtruth.json"
"$bin" validate --json --csv data/measurements/bridge_heldout.csv >"$tmp/bridge_heldout.json"
"$bin" validate --json --csv data/measurements/gb200_ladder.csv >"$tmp/gb200_ladder.json"
"$py" tools/plot.py scatter "$tmp/groundtruth.json" "$tmp/bridge_heldout.json" "$tmp/gb200_ladder.json" \
  --title "moesim validate: measured vs predicted" -o "$out/validation-scatter.png"
