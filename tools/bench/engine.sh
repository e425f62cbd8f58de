#!/usr/bin/env bash
# Hook for the optional engine micro-benchmark row of tools/bench.sh: builds tools/engine_bench.cpp (CMake
# target moesim_engine_bench, EXCLUDE_FROM_ALL, defined in src/engine/CMakeLists.txt) in BUILD_DIR and prints
# the path of the binary. Exits 1, printing nothing on stdout, when the target does not exist or does not
# build; tools/bench.sh then leaves the row out and says why.
#
#   tools/bench/engine.sh BUILD_DIR [JOBS]
set -euo pipefail
build="${1:?usage: $0 BUILD_DIR [JOBS]}"
jobs="${2:-2}"
if ! cmake --build "$build" -j"$jobs" --target moesim_engine_bench >"$build/engine_bench_build.log" 2>&1; then
  echo "engine.sh: moesim_engine_bench did not build (see $build/engine_bench_build.log)" >&2
  exit 1
fi
bin="$build/src/engine/moesim_engine_bench"
[[ -x "$bin" ]] || bin="$(find "$build" -name moesim_engine_bench -type f -perm -u+x | head -1)"
[[ -n "$bin" && -x "$bin" ]] || { echo "engine.sh: built, but moesim_engine_bench not found under $build" >&2; exit 1; }
echo "$bin"
