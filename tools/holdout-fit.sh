#!/usr/bin/env bash
# Held-out check of a fitted general parameter: fit it on the rows with odd ids of a measurements CSV, then
# report the rows with even ids at the parameter's lower bound and at that fit (neither set saw the other).
#
#   tools/holdout-fit.sh NAME=LO:HI [CSV]      e.g. tools/holdout-fit.sh framework_host_factor=1:8
#
# CSV defaults to data/measurements/groundtruth.csv; with it, the recipe settings of
# data/measurements/groundtruth_recipes.csv are split the same way and applied to each half, as `validate` does.
# Uses build/moesim (tools/build.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 && "$1" == *=*:* ]] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 1; }
spec="$1"
csv="${2:-data/measurements/groundtruth.csv}"
name="${spec%%=*}" bounds="${spec#*=}" lo="${bounds%%:*}"
tools/build.sh >/dev/null
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
recipes=none
[[ $# -lt 2 ]] && recipes=data/measurements/groundtruth_recipes.csv
python3 - "$csv" "$tmp" "$recipes" <<'PY'
import csv, sys
digits = lambda s: int("".join(c for c in s if c.isdigit()) or 0)
def split(src, stem):
    rows = list(csv.reader(open(src, newline="")))
    head, body = rows[0], rows[1:]
    for part, keep in (("odd", 1), ("even", 0)):
        with open(f"{sys.argv[2]}/{stem}-{part}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(head)
            w.writerows(r for r in body if r and digits(r[0]) % 2 == keep)
split(sys.argv[1], "rows")
if sys.argv[3] != "none":
    split(sys.argv[3], "recipes")
PY
part_args() {  # sets `args` to the CSV of one half and its recipe settings (none when there are none)
  args=(--csv "$tmp/rows-$1.csv" --recipes "none")
  [[ $recipes == none ]] || args[3]="$tmp/recipes-$1.csv"
}
part_args odd
fit="$(build/moesim validate "${args[@]}" --fit "$spec")"
echo "fit on the odd ids:"
echo "$fit" | sed 's/^/  /'
best="$(echo "$fit" | sed -n 's/.*: best \([0-9.e+-]*\) .*/\1/p' | head -1)"
part_args even
echo "even ids, $name=$lo:   $(build/moesim validate "${args[@]}" --param "$name=$lo" | grep '^rows predicted')"
echo "even ids, $name=$best: $(build/moesim validate "${args[@]}" --param "$name=$best" | grep '^rows predicted')"
