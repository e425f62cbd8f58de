#!/usr/bin/env bash
# Installs the Debian packages moesim builds with, if any is missing. Needs root (or sudo) only when installing.
# `tools/setup.sh --sanitize` also installs clang and its runtime libraries (libFuzzer, ASan, UBSan), which only
# the sanitizer and fuzz builds use (tools/test.sh --sanitize, tools/fuzz.sh); the default build needs neither.
set -euo pipefail
pkgs=(g++ cmake make libboost-graph-dev libeigen3-dev libcli11-dev nlohmann-json3-dev doctest-dev ccache python3)
if [ "${1:-}" = "--sanitize" ]; then pkgs+=(clang libclang-rt-dev); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "moesim setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
