#!/usr/bin/env bash
# tools/fuzz.sh TARGET SECONDS [libFuzzer flags...]: builds tests/fuzz/fuzz_TARGET in build-asan/ (clang, ASan +
# UBSan, tools/sanitize-build.sh) and runs it for SECONDS from the committed seed corpus tests/fuzz/corpus/TARGET/.
# New inputs go to build-asan/fuzz-corpus/TARGET/ (not committed; copy an interesting one into the seed corpus by
# hand, minimised with -minimize_crash=1 if it crashed). A finding stops the run with exit 1 and leaves
# build-asan/fuzz-findings/TARGET/crash-* (or timeout-*, oom-*): make it a regression case under tests/.
# Targets: config (model / system / layout / part JSON), pp_layout (pipeline-layout strings), csv (validation
# tables), trace (Chrome traces of trace-calib).
set -euo pipefail
cd "$(dirname "$0")/.."
targets="config pp_layout csv trace"
if (($# < 2)) || [[ " $targets " != *" $1 "* ]] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: tools/fuzz.sh TARGET SECONDS [libFuzzer flags...]   (TARGET: ${targets// /, })" >&2
  exit 1
fi
target="$1" seconds="$2"
shift 2
tools/sanitize-build.sh "fuzz_$target" >/dev/null
seeds="tests/fuzz/corpus/$target"
work="build-asan/fuzz-corpus/$target"
findings="build-asan/fuzz-findings/$target"
mkdir -p "$work" "$findings"
dict=()
[ -f "tests/fuzz/$target.dict" ] && dict=(-dict="tests/fuzz/$target.dict")
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
# -rss_limit_mb / -timeout: the corpus contract (tests/bad_input/README.md) is 1 GiB and 5 s per input.
"build-asan/tests/fuzz/fuzz_$target" "$work" "$seeds" "${dict[@]}" -max_total_time="$seconds" -rss_limit_mb=1024 \
  -timeout=5 -artifact_prefix="$findings/" -print_final_stats=1 "$@"
