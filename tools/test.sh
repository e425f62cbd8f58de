#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs the whole doctest suite through ctest, and,
# where nvcc exists, compiles the CUDA calibration program with the exact nvcc build the GPU machine runs
# (tools/calibrate.sh --build-only; no GPU needed to compile it).
# `tools/test.sh --sanitize` runs the same suite from build-asan/ instead: clang with AddressSanitizer and
# UndefinedBehaviorSanitizer, where any report fails the test (tools/sanitize-build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--sanitize" ]; then
  tools/sanitize-build.sh
  # detect_leaks: a leak is a bug too; halt_on_error: the first report fails the test binary.
  export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  cd build-asan && ctest --output-on-failure -j"$(nproc)"
  exit
fi
tools/build.sh
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "test.sh: nvcc found, compiling the CUDA calibration program (kernels-sim/cuda)"
  bash tools/calibrate.sh build/calib --build-only
fi
cd build && ctest --output-on-failure -j"$(nproc)"
