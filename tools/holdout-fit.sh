#!/usr/bin/env bash
# Held-out checks of the fitted general parameters.
#
#   tools/holdout-fit.sh [--update-docs]      the split-half check of all five fitted parameters
#   tools/holdout-fit.sh NAME=LO:HI [CSV]     one parameter alone, e.g. tools/holdout-fit.sh framework_host_factor=1:8
#
# The first form runs `moesim validate --split-half` on data/measurements/groundtruth.csv with its recipe settings
# (validate/split_half.hpp: the full joint fit; per split rule -- row-id parity, then id pairs -- a joint refit on
# one half judged on the other, and each parameter at its unfitted value with the others refitted on the same
# half). It takes tens of minutes (thousands of row predictions). With --update-docs it writes its tables between
# the split-half markers of docs/accuracy.md (tools/update-readme.sh does not rerun it).
# The second form fits one parameter on the rows with odd ids of a measurements CSV and reports the rows with even
# ids at the parameter's lower bound and at that fit, the other parameters at their built-in values. CSV defaults
# to data/measurements/groundtruth.csv; with it, the recipe settings of data/measurements/groundtruth_recipes.csv
# are split the same way and applied to each half, as `validate` does.
# Uses build/moesim (tools/build.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -eq 0 || "$1" == --update-docs ]]; then
  tools/build.sh >/dev/null
  out="$(build/moesim validate --split-half)"
  if [[ $# -eq 0 ]]; then
    echo "$out"
    exit 0
  fi
  python3 - docs/accuracy.md "$out" "$(git rev-parse --short HEAD)" <<'PY'
import re, sys
path, body, commit = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
begin, end = "<!-- split-half:begin -->", "<!-- split-half:end -->"
if begin not in text or end not in text:
    sys.exit(f"{path}: no {begin} / {end} markers")
note = f"Written by `tools/holdout-fit.sh --update-docs` (moesim at {commit}).\n\n"
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(head + begin + "\n" + note + body.rstrip() + "\n" + end + tail)
PY
  exit 0
fi
[[ "$1" == *=*:* ]] || { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 1; }
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
