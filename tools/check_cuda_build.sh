#!/usr/bin/env bash
# Compiles the CUDA calibration program (kernels-sim/cuda) without needing a GPU, with the same nvcc-only build
# tools/calibrate.sh runs on the GPU machine (called with bash, as there: the exec bit may not survive the copy).
#   bash tools/check_cuda_build.sh [BUILD_DIR]   (default build-cuda-check)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
exec bash "$root/tools/calibrate.sh" "${1:-$root/build-cuda-check}" --build-only
