#!/usr/bin/env bash
# The README's main command: installs what is missing, builds, and runs the embedded default case
# (DeepSeek-V3 on 256 GB300 NVL72 GPUs, the published Megatron layout). Extra arguments go to `moesim run`.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh >/dev/null
exec build/moesim run "$@"
