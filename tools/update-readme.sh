#!/usr/bin/env bash
# Regenerates the README's accuracy tables: the groundtruth.csv table from `moesim validate --markdown` (between
# the validation markers) and the held-out summary of data/measurements/bridge_heldout.csv, per system and model
# kind, from `moesim validate --csv ... --json` (between the heldout markers).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh >/dev/null
table=$(build/moesim validate --markdown)
heldout_csv=data/measurements/bridge_heldout.csv
heldout_json=$(build/moesim validate --csv "$heldout_csv" --json)
python3 - "$table" "$heldout_csv" "$heldout_json" <<'PY'
import csv, json, statistics, sys
table, heldout_csv, heldout_json = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])

def median(v): return statistics.median(v) if v else float("nan")

rows = {r["id"]: r for r in csv.DictReader(open(heldout_csv, newline=""))}
groups = {}
for r in heldout_json["rows"]:
    if "error_pct" not in r:
        continue
    row = rows[r["id"]]
    kind = "dense" if row["model"].startswith("llama") else "MoE"
    groups.setdefault((row["hardware"], kind), []).append(r["error_pct"])
lines = ["| system | models | rows | median abs error | median signed error | within 10 % | range |",
         "|---|---|---|---|---|---|---|"]
for (hw, kind), errs in sorted(groups.items()):
    lines.append(f"| {hw} | {kind} | {len(errs)} | {median([abs(e) for e in errs]):.1f} % | {median(errs):+.1f} % | "
                 f"{sum(abs(e) <= 10 for e in errs)} | {min(errs):+.0f} .. {max(errs):+.0f} % |")
s = heldout_json["summary"]
errs = [r["error_pct"] for r in heldout_json["rows"] if "error_pct" in r]
lines.append("")
lines.append(f"All {s['n']} rows ({s['skipped']} skipped): median |error| {s['median_abs_error_pct']:.1f} %, "
             f"p90 {s['p90_abs_error_pct']:.1f} %, max {s['max_abs_error_pct']:.1f} %; "
             f"{sum(abs(e) <= 10 for e in errs)} within 10 %, {sum(abs(e) > 30 for e in errs)} above 30 %.")
heldout = "\n".join(lines)

text = open("README.md").read()
def replace(text, name, body):
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin not in text or end not in text:
        sys.exit(f"README.md lacks the {name} markers")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + body.strip() + "\n" + end + tail
text = replace(text, "validation", table)
text = replace(text, "heldout", heldout)
open("README.md", "w").write(text)
PY
echo "README.md validation tables updated"
