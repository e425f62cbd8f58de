#!/usr/bin/env bash
# `mpirun -n 2 moesim search ...` against the same search in one process: the JSON results (counts, pruning
# reasons, ranking with estimates and the verified engine times) must be equal; only the stage wall times differ.
#   check_mpi_search.sh MPIEXEC MOESIM
set -euo pipefail
mpiexec="$1" bin="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Open MPI refuses root unless told (CI runs as root); --oversubscribe lets 2 ranks share fewer cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
search=(search --model qwen3-30b-a3b --system dgx-h100 --gpus 64 --gbs 256 --seq 4096 --precision bf16 --tp 1,2
        --ep 4,8 --etp 1 --cp 1 --mbs 1 --recompute none --dispatcher alltoall --grouped-gemm fused
        --cuda-graph none --fsdp 0 --a2a-overlap 0,1 --tp-comm-overlap 0 --top 8 --verify 2 --jobs 1 --json --exhaustive)
# Under AddressSanitizer (tools/test.sh --sanitize) Open MPI's own allocations at MPI_Init, never freed by design,
# read as leaks: leak checking is off for the MPI ranks only; the one-process run below keeps it.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$mpiexec" -n 2 "$bin" "${search[@]}" >"$work/mpi.json"
"$bin" "${search[@]}" >"$work/one.json"
python3 - "$work/mpi.json" "$work/one.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for d in (a, b):
    d.pop("stage_seconds", None)
if a != b:
    for k in a:
        if a.get(k) != b.get(k):
            print(f"mpirun -n 2 and one process differ in {k!r}:\n  {str(a.get(k))[:400]}\n  {str(b.get(k))[:400]}")
    sys.exit(1)
print(f"mpirun -n 2 equals one process: {a['feasible']} feasible, {len(a['ranking'])} ranked")
PY
