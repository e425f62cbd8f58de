#!/usr/bin/env bash
# The README's fabric what-if (issue 18): DeepSeek-V3 on 8,192 GB200 NVL72 (the 8,192-GPU case of tools/bench.sh:
# TP2 PP4 VPP4 EP32, HybridEP) on the cluster fabric, with each EP group inside one NVL72 rack (Megatron's rank
# order) versus spread across 32 racks, and, across racks, adaptive routing versus ECMP over seeds 1-5. Prints a
# markdown table of the predicted step times and the breakdown rows that explain them, and the fabric report lines.
#
#   tools/fabric-whatif.sh [--update]   # --update: rewrite README.md between the fabric-whatif markers
#   MOESIM_BIN=path/to/moesim tools/fabric-whatif.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${MOESIM_BIN:-$root/build/moesim}"
update=0
[[ "${1:-}" == "--update" ]] && update=1
case_args=(run --json --model deepseek-v3-no-mtp --system gb200-nvl72 --gpus 8192 --tp 2 --pp 4 --vpp 4 --ep 32
           --mbs 1 --gbs 16384 --seq 4096 --precision mxfp8 --dispatcher hybridep --pp-layout "Et*3|(t*4|)*14t*2L"
           --fabric cluster)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$bin" "${case_args[@]}" >"$tmp/packed.json"
"$bin" "${case_args[@]}" --fabric-routing ecmp >"$tmp/packed-ecmp.json"
"$bin" "${case_args[@]}" --ep-placement across-racks >"$tmp/across.json"
for seed in 1 2 3 4 5; do
  "$bin" "${case_args[@]}" --ep-placement across-racks --fabric-routing ecmp --fabric-seed "$seed" >"$tmp/across-ecmp-$seed.json"
done
table="$(python3 - "$tmp" <<'PY'
import json, sys, statistics
d = sys.argv[1]
load = lambda n: json.load(open(f"{d}/{n}.json"))
base = load("packed")
rows = [("EP in one rack, adaptive routing", [base]),
        ("EP in one rack, ECMP (seed 1)", [load("packed-ecmp")]),
        ("EP across 32 racks, adaptive routing", [load("across")]),
        ("EP across 32 racks, ECMP (seeds 1-5, median)", [load(f"across-ecmp-{s}") for s in range(1, 6)])]
cols = ["compute", "exposed_ep", "exposed_dp", "exposed_pp", "exposed_tp", "bubble"]
print("| case | step s | vs in-rack | " + " | ".join(cols) + " |")
print("|---|---|---|" + "---|" * len(cols))
for name, runs in rows:
    med = lambda f: statistics.median(f(r) for r in runs)
    t = med(lambda r: r["step_time_s"])
    span = ""
    if len(runs) > 1:
        ts = sorted(r["step_time_s"] for r in runs)
        span = f" ({ts[0]:.2f}-{ts[-1]:.2f})"
    cells = [f"{med(lambda r: r['breakdown'].get(c, 0.0)):.2f}" for c in cols]
    print(f"| {name} | {t:.2f}{span} | {100 * (t / base['step_time_s'] - 1):+.0f} % | " + " | ".join(cells) + " |")
print()
ep = [l for l in load("across-ecmp-1")["fabric"] if l.startswith("ep ")]
dp = [l for l in load("packed-ecmp")["fabric"] if l.startswith("dp_cp ")]
print("Fabric report, across racks with ECMP seed 1: `" + ep[0] + "`; in one rack with ECMP: `" + dp[0] + "`.")
PY
)"
if ((update)); then
  python3 - "$root/README.md" "$table" <<'PY'
import sys
path, table = sys.argv[1], sys.argv[2]
text = open(path).read()
begin, end = "<!-- fabric-whatif:begin -->", "<!-- fabric-whatif:end -->"
if begin not in text or end not in text:
    sys.exit(f"{path}: no {begin} ... {end} markers")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(head + begin + "\n" + table + "\n" + end + tail)
PY
  echo "fabric-whatif.sh: README.md updated" >&2
else
  echo "$table"
fi
