#!/usr/bin/env bash
# Installs the Debian packages moesim builds with, if any is missing. Needs root (or sudo) only when installing.
# `tools/setup.sh --sanitize` also installs clang and its runtime libraries (libFuzzer, ASan, UBSan), which only
# the sanitizer and fuzz builds use (tools/test.sh --sanitize, tools/fuzz.sh); the default build needs neither.
# `tools/setup.sh --mpi` also installs Open MPI, with which `mpirun -n N moesim search` spreads a search over
# ranks (CMake finds it and builds it in; without it, search shards with --shard and merge).
# `tools/setup.sh --python` also installs what the Python module (python/, docs/python.md) builds and tests with:
# pybind11 and Python's headers (CMake then builds the module), pip/venv/setuptools (its install), pytest, pandas,
# matplotlib and Jupyter's nbconvert with the Python kernel (its tests and the example notebook).
set -euo pipefail
pkgs=(g++ cmake make libboost-graph-dev libeigen3-dev libcli11-dev nlohmann-json3-dev doctest-dev ccache python3
      libjemalloc-dev)
for opt in "$@"; do
  case "$opt" in
    --sanitize) pkgs+=(clang libclang-rt-dev) ;;
    --mpi) pkgs+=(libopenmpi-dev openmpi-bin) ;;
    --python) pkgs+=(pybind11-dev python3-dev python3-pip python3-venv python3-setuptools python3-wheel python3-pytest
                     python3-pandas python3-numpy python3-matplotlib jupyter-nbconvert python3-nbconvert
                     python3-ipykernel) ;;
    *) echo "setup.sh: unknown option $opt (expected --sanitize, --mpi, --python)" >&2; exit 1 ;;
  esac
done
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
