#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs the whole doctest suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh
cd build && ctest --output-on-failure -j"$(nproc)"
