#!/usr/bin/env bash
# Calibration run on a GPU machine: builds moesim_calib and moesim, runs the sweep (about 5-8 minutes on an
# H100/H200; --quick about 1 minute), writes kernels-sim/data/<gpu-slug>/*.jsonl plus PROVENANCE.md
# (nvidia-smi output, clocks, driver, date), then fits kernels-sim/fits/<gpu-slug>.json.
#
#   tools/calibrate.sh [--quick] [--only gemm,grouped_gemm,moe,attention,memcpy] [--build-dir DIR]
#
# Refuses to run without an NVIDIA GPU: measurements are never synthesised.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-calib"
calib_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) calib_args+=(--quick); shift ;;
    --only) calib_args+=(--only "$2"); shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    *) echo "usage: $0 [--quick] [--only LIST] [--build-dir DIR]" >&2; exit 1 ;;
  esac
done

command -v nvidia-smi >/dev/null || { echo "calibrate.sh: nvidia-smi not found: this needs a machine with an NVIDIA GPU" >&2; exit 1; }
gpu_name="$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | head -1)"
[[ -n "$gpu_name" ]] || { echo "calibrate.sh: no GPU visible to nvidia-smi" >&2; exit 1; }
# "NVIDIA H200" -> "h200"; "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3".
slug="$(echo "$gpu_name" | sed -e 's/^NVIDIA //' | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed -e 's/^-//' -e 's/-$//')"
out="$root/kernels-sim/data/$slug"

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMOESIM_CUDA=ON -DMOESIM_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target moesim_calib moesim

if [[ -d "$out" ]] && ls "$out"/*.jsonl >/dev/null 2>&1; then
  stamp="$(date -u +%Y%m%dT%H%M%SZ)"
  echo "calibrate.sh: moving the previous run to $out/previous-$stamp/"
  mkdir -p "$out/previous-$stamp" && mv "$out"/*.jsonl "$out"/PROVENANCE.md "$out/previous-$stamp/" 2>/dev/null || true
fi
mkdir -p "$out"
start=$(date +%s)
{
  echo "# Provenance of the measurements in this folder"
  echo
  echo "- GPU: $gpu_name"
  echo "- date (UTC): $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- host: $(hostname)"
  echo "- command: tools/calibrate.sh ${calib_args[*]:-}"
  echo "- moesim commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "- nvcc: $("$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" --version | tail -1)"
  echo
  echo '## nvidia-smi'
  echo '```'
  nvidia-smi
  echo '```'
  echo
  echo '## Clocks (current / max / application) and power'
  echo '```'
  nvidia-smi -q -d CLOCK,POWER,PERFORMANCE -i 0
  echo '```'
} > "$out/PROVENANCE.md"

"$build/moesim_calib" --out "$out" "${calib_args[@]}" | tee "$out/run.log"
echo "- sweep wall time: $(( $(date +%s) - start )) s" >> "$out/PROVENANCE.md"

"$build/moesim" fit --data "$out" --out "$root/kernels-sim/fits/$slug.json" || {
  echo "calibrate.sh: the fit was refused (see above); the measurements are kept in $out" >&2
  exit 2
}
