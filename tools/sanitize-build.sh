#!/usr/bin/env bash
# Configures and builds build-asan/: clang with AddressSanitizer + UndefinedBehaviorSanitizer (any report aborts)
# and libFuzzer coverage, so that one build serves tools/test.sh --sanitize and tools/fuzz.sh. Arguments are build
# targets (default: all). No Python module here: an ASan-built extension cannot load into an uninstrumented python.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --sanitize
# MOESIM_WERROR only when set, so that a later call without it keeps the cached choice (and the objects).
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMOESIM_SANITIZE=ON -DMOESIM_FUZZ=ON \
  -DMOESIM_PYTHON=OFF \
  ${MOESIM_WERROR:+-DMOESIM_WERROR="$MOESIM_WERROR"} >/dev/null
if (($#)); then
  cmake --build build-asan -j"$(nproc)" --target "$@"
else
  cmake --build build-asan -j"$(nproc)"
fi
