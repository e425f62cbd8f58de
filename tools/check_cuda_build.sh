#!/usr/bin/env bash
# Compiles the CUDA calibration program (kernels-sim/cuda) without needing a GPU: nvcc only. Kept out of the
# normal build because nvcc for sm_90 + sm_100 takes minutes on a small machine.
#   tools/check_cuda_build.sh [BUILD_DIR]   (default build-cuda-check)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build-cuda-check}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMOESIM_CUDA=ON -DMOESIM_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j2 --target moesim_calib
echo "check_cuda_build: moesim_calib compiled: $build/moesim_calib"
