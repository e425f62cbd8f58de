#!/usr/bin/env bash
# Formats the C++ and CUDA sources with .clang-format (clang-format from Debian; installed when missing).
#   tools/format.sh           rewrite the files in place
#   tools/format.sh --check   change nothing; exit 1 listing the files that differ (CI runs this)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends clang-format >/dev/null
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
case "${1:-}" in
  --check)
    bad=()
    for f in "${files[@]}"; do
      clang-format --style=file "$f" | cmp -s - "$f" || bad+=("$f")
    done
    if ((${#bad[@]})); then
      printf 'not formatted (run tools/format.sh): %s\n' "${bad[@]}" >&2
      exit 1
    fi
    echo "format: ${#files[@]} files follow .clang-format" ;;
  "") clang-format --style=file -i "${files[@]}" ;;
  *) echo "usage: tools/format.sh [--check]" >&2; exit 1 ;;
esac
