#!/usr/bin/env bash
# Configures and builds moesim into build/ (Release-with-debug-info, all cores; MOESIM_WERROR=ON makes warnings errors).
set -euo pipefail
cd "$(dirname "$0")/.."
"$(dirname "$0")/setup.sh"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMOESIM_WERROR="${MOESIM_WERROR:-OFF}" >/dev/null
cmake --build build -j"$(nproc)"
