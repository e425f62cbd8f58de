#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs the whole doctest suite through ctest, and,
# where nvcc exists, compiles the CUDA calibration program with the exact nvcc build the GPU machine runs
# (tools/calibrate.sh --build-only; no GPU needed to compile it).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "test.sh: nvcc found, compiling the CUDA calibration program (kernels-sim/cuda)"
  tools/calibrate.sh build/calib --build-only
fi
cd build && ctest --output-on-failure -j"$(nproc)"
