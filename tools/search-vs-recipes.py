#!/usr/bin/env python3
"""Where do published recipe layouts land in moesim's own layout ranking? ("Is the search right?")

For each case: the recipe row of a bundled table (its id, measured figure and layout), `moesim estimate` and
`moesim run` on the recipe's layout, and `moesim search` over the layouts around it with the recipe's software
stack pinned (precision, dispatcher, CUDA graphs, grouped GEMM, TE release) and the parallel layout, micro-batch,
recompute and A2A overlap free. Prints markdown: the recipe's rank among the feasible layouts, what moesim
prefers instead, the predicted gain and the breakdown that explains it, and whether moesim can tell its best from
the recipe at all: the chance that the recipe is truly faster at that predicted gap (`moesim bands --chance-slower`,
from how often moesim orders pairs of one job of the bundled layout sweeps right at such gaps); under 20 % counts
as told apart.

    tools/search-vs-recipes.py [--bin build/moesim] [--jobs N] > docs/studies/search-vs-recipes.md
"""
import argparse
import csv
import io
import json
import subprocess
import sys
import time

# Settings every Megatron-Bridge MoE recipe has and the table rows get from data/rules/row_settings.json: BF16
# gradient reduce, and BF16 Adam moments for the MLA (DeepSeek) models; DeepSeek-V3's stage layout for 16
# virtual stages (groundtruth.md; the default case's source).
BRIDGE = "--grad-reduce-dtype bf16"
MLA = " --optimizer-moment-dtype bf16"
DSV3_16 = "--pp-layout 'Et*4|(t*4|)*14tmL'"
CASES = [
    # (title, recipe id and table, measured TFLOPS/GPU, common flags, recipe layout flags)
    ("DeepSeek-V3 on 256 GB300", "GT001", "groundtruth.csv", 1648,
     "--model deepseek-v3 --system gb300-nvl72 --gpus 256 --gbs 4096 --seq 4096 --precision mxfp8 "
     "--fp8-attention --dispatcher hybridep --cuda-graph full --grouped-gemm fused-mlp --mtp 1 " + BRIDGE + MLA,
     "--tp 1 --pp 2 --vpp 8 --ep 32 --etp 1 --cp 1 --mbs 1 --recompute none --a2a-overlap true " + DSV3_16),
    ("DeepSeek-V3 on 256 GB200", "GT003", "groundtruth.csv", 1292,
     "--model deepseek-v3 --system gb200-nvl72 --gpus 256 --gbs 4096 --seq 4096 --precision mxfp8 "
     "--dispatcher hybridep --cuda-graph full --grouped-gemm fused-mlp --mtp 1 " + BRIDGE + MLA,
     "--tp 1 --pp 4 --vpp 4 --ep 64 --etp 1 --cp 1 --mbs 1 --recompute 'selective: mla_up_proj' --a2a-overlap true "
     + DSV3_16),
    ("Qwen3-235B-A22B on 256 GB300", "BH023", "bridge_heldout.csv", 1335,
     "--model qwen3-235b-a22b --system gb300-nvl72 --gpus 256 --gbs 8192 --seq 4096 --precision mxfp8 "
     "--fp8-attention --dispatcher hybridep --cuda-graph full --grouped-gemm fused-mlp " + BRIDGE,
     "--tp 1 --pp 4 --vpp 12 --ep 32 --etp 1 --cp 1 --mbs 2 --recompute none --a2a-overlap true"),
    ("Qwen3-235B-A22B on 256 H100", "GT021", "groundtruth.csv", 253,
     "--model qwen3-235b-a22b --system dgx-h100 --gpus 256 --gbs 8192 --seq 4096 --precision fp8-tensorwise "
     "--dispatcher alltoall --cuda-graph none --te-version 2.14 " + BRIDGE,
     "--tp 2 --pp 8 --vpp 4 --ep 32 --etp 1 --cp 1 --mbs 1 --recompute none --a2a-overlap true"),
]
# What the search may change (everything else is the recipe's): the parallel layout, the micro-batch, recompute
# (none, full and the useful selective sets) and the A2A overlap. etp 1, cp 1 and no FSDP, as every recipe here.
VERIFY = 3  # the search's --verify
SPACE = "--tp 1,2,4 --etp 1 --cp 1 --fsdp 0 --mbs 1,2 --a2a-overlap true,false --tp-comm-overlap false"


def moesim(binary, args):
    out = subprocess.run(f"{binary} {args}", shell=True, check=True, capture_output=True, text=True)
    return out.stdout


def shares(breakdown, step):
    top = sorted(((v / step, k) for k, v in breakdown.items() if v / step >= 0.005), reverse=True)
    return ", ".join(f"{k} {100 * s:.0f} %" for s, k in top)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/moesim")
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--only", help="run the case of this recipe id only")
    a = ap.parse_args()
    jobs = f"--jobs {a.jobs}" if a.jobs else ""
    print("| case | recipe (measured TFLOPS/GPU) | recipe estimate / engine | rank of the recipe | feasible layouts "
          "| moesim's best (estimate / engine) | predicted gain | chance the recipe is faster | told apart | search time |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    details = []
    only = [c for c in CASES if not a.only or a.only in c[1]]
    for title, rid, table, measured, common, recipe in only:
        est = json.loads(moesim(a.bin, f"estimate {common} {recipe} --json"))
        eng = json.loads(moesim(a.bin, f"run {common} {recipe} --json"))
        t0 = time.monotonic()
        res = json.loads(moesim(a.bin, f"search {common} {SPACE} --top 1000000 --verify {VERIFY} {jobs} --json"))
        took = time.monotonic() - t0
        ranking = res["ranking"]
        rank = 1 + sum(1 for r in ranking if r["estimate"]["step_time_s"] < est["step_time_s"])
        best = ranking[0]
        b_est = best["estimate"]["step_time_s"]
        b_eng = best["simulated"]["step_time_s"] if best.get("simulated") else float("nan")
        gain = eng["step_time_s"] / b_eng - 1
        chance = float(moesim(a.bin, f"bands --chance-slower {100 * gain:.4f}"))
        print(f"| {title} | {rid}: {est['layout'].split(' seq')[0]} ({measured}) | {est['step_time_s']:.2f} / "
              f"{eng['step_time_s']:.2f} s | {rank} | {res['feasible']} | {b_est:.2f} / {b_eng:.2f} s | "
              f"{100 * gain:+.1f} % (engine) | {100 * chance:.0f} % | {'yes' if chance < 0.2 else 'no'} | {took:.0f} s |")
        verified = sum(1 for r in ranking if r.get("simulated"))
        details.append((title, rid, est, eng, best, ranking[:5], verified))
    for title, rid, est, eng, best, top, verified in details:
        print(f"\n### {title}\n")
        print(f"- Recipe {rid}: `{est['layout']}`; engine breakdown: {shares(eng['breakdown'], eng['step_time_s'])}; "
              f"memory {eng['memory_max_GiB']:.0f} GiB.")
        sim = best.get("simulated") or best["estimate"]
        print(f"- moesim's best: `{best['layout']}`; engine breakdown: "
              f"{shares(sim['breakdown'], sim['step_time_s'])}; memory {sim['memory_max_GiB']:.0f} GiB.")
        print("- Top 5 (verified layouts ranked by the engine; estimate / engine): " + "; ".join(
            f"{r['estimate']['step_time_s']:.2f} / "
            + (f"{r['simulated']['step_time_s']:.2f} s" if r.get("simulated") else "- s")
            + f" `{r['layout'].split(' seq')[0]}`" for r in top))
        print(f"- Verified with the engine: {verified} layouts ({VERIFY} asked; more while an unverified estimate "
              f"could still enter the engine's top {VERIFY}).")


if __name__ == "__main__":
    sys.exit(main())
