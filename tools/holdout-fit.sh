#!/usr/bin/env bash
# Held-out check of a fitted general parameter: fit it on the rows with odd ids of a measurements CSV, then
# report the rows with even ids at the parameter's lower bound and at that fit (neither set saw the other).
#
#   tools/holdout-fit.sh NAME=LO:HI [CSV]      e.g. tools/holdout-fit.sh framework_host_factor=1:8
#
# CSV defaults to ../shared/reference/groundtruth.csv. Uses build/moesim (tools/build.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 && "$1" == *=*:* ]] || { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 1; }
spec="$1"
csv="${2:-../shared/reference/groundtruth.csv}"
name="${spec%%=*}" bounds="${spec#*=}" lo="${bounds%%:*}"
tools/build.sh >/dev/null
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 - "$csv" "$tmp" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
head, body = rows[0], rows[1:]
digits = lambda s: int("".join(c for c in s if c.isdigit()) or 0)
for part, keep in (("odd", 1), ("even", 0)):
    with open(f"{sys.argv[2]}/{part}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        w.writerows(r for r in body if r and digits(r[0]) % 2 == keep)
PY
fit="$(build/moesim validate --csv "$tmp/odd.csv" --fit "$spec")"
echo "fit on the odd ids:"
echo "$fit" | sed 's/^/  /'
best="$(echo "$fit" | sed -n 's/.*: best \([0-9.e+-]*\) .*/\1/p' | head -1)"
echo "even ids, $name=$lo:   $(build/moesim validate --csv "$tmp/even.csv" --param "$name=$lo" | grep '^rows predicted')"
echo "even ids, $name=$best: $(build/moesim validate --csv "$tmp/even.csv" --param "$name=$best" | grep '^rows predicted')"
