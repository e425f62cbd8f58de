#!/usr/bin/env bash
# Runs one command RUNS times pinned to CORE and prints one line per run:
#   <wall seconds> <user+sys CPU seconds> <peak RSS KiB> <exit status>
# Wall time comes from the monotonic nanosecond clock around the process (GNU time's "Elapsed" has only 10 ms
# resolution, too coarse for the near-zero baseline); CPU time and peak RSS come from `/usr/bin/time -v`.
# The command's stdout is discarded; its stderr of the last failing run goes to ERR_FILE.
#
#   tools/bench/measure.sh RUNS CORE ERR_FILE -- COMMAND [ARGS...]
set -euo pipefail
(($# >= 5)) && [[ "$4" == "--" ]] || { echo "usage: $0 RUNS CORE ERR_FILE -- COMMAND [ARGS...]" >&2; exit 1; }
runs="$1" core="$2" err_file="$3"
shift 4

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < runs; i++)); do
  t0=$(date +%s%N)
  rc=0
  /usr/bin/time -v -o "$tmp/time" taskset -c "$core" "$@" >/dev/null 2>"$tmp/err" || rc=$?
  t1=$(date +%s%N)
  ((rc == 0)) || cp "$tmp/err" "$err_file"
  # GNU time reports a non-zero child status on its first line ("Command exited with non-zero status N").
  awk -v wall_ns=$((t1 - t0)) -v rc="$rc" '
    /User time \(seconds\)/ { cpu += $NF }
    /System time \(seconds\)/ { cpu += $NF }
    /Maximum resident set size \(kbytes\)/ { rss = $NF }
    END { printf "%.4f %.2f %d %d\n", wall_ns / 1e9, cpu, rss, rc }' "$tmp/time"
done
