#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs the whole doctest suite through ctest, and,
# where nvcc exists, compiles the CUDA calibration program with the exact nvcc build the GPU machine runs
# (tools/calibrate.sh --build-only; no GPU needed to compile it). It installs the Python module's packages too
# (tools/setup.sh --python), so ctest also runs the pytest suite (python/tests) and executes the example notebook
# (examples/moesim.ipynb); it fails if either is missing from ctest's list.
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
tools/setup.sh --python
tools/build.sh
for t in python_pytest python_notebook; do
  (cd build && ctest -N -R "^$t\$" | grep -q "Total Tests: 1") || { echo "test.sh: ctest has no $t test" >&2; exit 1; }
done
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "test.sh: nvcc found, compiling the CUDA calibration program (kernels-sim/cuda)"
  bash tools/calibrate.sh build/calib --build-only
fi
cd build && ctest --output-on-failure -j"$(nproc)"
