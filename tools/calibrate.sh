#!/usr/bin/env bash
# Calibration run on the GPU machine, everything written under OUT_DIR (the one folder copied back):
#
#   bash tools/calibrate.sh OUT_DIR [--quick] [--only SUITES] [--commit SHA]   build with nvcc, run the suites
#   bash tools/calibrate.sh OUT_DIR --dry-run [--quick] [--only SUITES]        print the plan; no GPU, no nvcc
#   bash tools/calibrate.sh BUILD_DIR --build-only [--arch sm_90]              compile only (tools/test.sh; no GPU)
#
# Call it with bash: the copy sent to the GPU machine may not keep the exec bit (this script calls itself so too).
# SUITES: comma-separated of memcpy, moe, gemm, grouped_gemm (the CUDA program, kernels-sim/cuda/*.cu),
# attention (calib_attention.py: PyTorch SDPA, cuDNN and flash backends) and host (calib_host.py: PyTorch eager
# dispatch). Default: all. --commit names the project commit when the machine has no git metadata: give a literal
# SHA written into the command where git works (`--commit $(git rev-parse HEAD)` expands on the GPU machine, where
# there is no .git); a --commit without a value is "unknown" in PROVENANCE.md, never a reason to stop.
#
# The build uses nvcc alone (no CMake, none of the simulator's dependencies), linking only cuBLAS and cuBLASLt, from
# the folder they were found in and with an rpath to it (no loader path needed at run time).
# OUT_DIR gets at most 7 files: kernels.jsonl, attention.jsonl, host_costs.jsonl (records), run.log (this
# script's output, written as it goes), build.log, clocks.csv (nvidia-smi clocks, power and throttle reasons every
# 250 ms for the whole run) and PROVENANCE.md (GPU, driver, CUDA, cuBLAS, cuDNN, PyTorch, commit, date, what
# each suite measures, stage times, record and skip counts). Every record line carries `written_at` (UTC, ms) and
# clocks.csv is sampled in UTC, so clocks can be matched to records. Each stage runs under a time cap so that a
# whole run, cold build included, fits one device command of 10 minutes with a minute to spare: 480 s at most
# (quick 330 s), inside the 15 minutes of device time a task has (the caps: --dry-run prints them). A failing
# configuration is a skip record with its error; a failing stage is logged and the others still run.
#
# Fitting happens afterwards, on the CPU machine: `moesim fit --data OUT_DIR` (kernels-sim/fits/README.md).
# Without a GPU this script refuses to run: measurements are never synthesised.
# Exit: 0 every stage ran to its end; 3 a stage failed or hit its cap (the rest ran; run.log says which);
# 2 no GPU, no nvcc or a failed build-only; 1 usage.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cuda_dir="$root/kernels-sim/cuda"
python="${PYTHON:-python3}"
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the source tree

usage() {
  echo "usage: $0 OUT_DIR [--quick] [--only SUITES] [--commit SHA] [--dry-run] [--build-only] [--arch sm_NN]" >&2
  exit 1
}

out="" quick=0 only="" dry=0 build_only=0 arch="" commit="" commit_missing=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --only) [[ $# -ge 2 ]] || usage; only="$2"; shift 2 ;;
    # `--commit $(git rev-parse HEAD)` run where there is no .git expands to a bare --commit (or to "--commit ''"):
    # the commit is then unknown, and the option after it is not taken for a SHA.
    --commit)
      if [[ $# -ge 2 && -n "$2" && "$2" != -* ]]; then commit="$2"; shift 2
      else commit_missing=1; [[ $# -ge 2 && -z "$2" ]] && shift; shift; fi ;;
    --commit=*) commit="${1#--commit=}"; [[ -n "$commit" ]] || commit_missing=1; shift ;;
    --arch) [[ $# -ge 2 ]] || usage; arch="$2"; shift 2 ;;
    --dry-run) dry=1; shift ;;
    --build-only) build_only=1; shift ;;
    -*) usage ;;
    *) [[ -z "$out" ]] || usage; out="$1"; shift ;;
  esac
done
[[ -n "$out" ]] || usage

# ---- suites ------------------------------------------------------------------------------------------------------
all_suites="memcpy moe gemm grouped_gemm attention host"
cuda_suites="" run_attention=0 run_host=0
IFS=',' read -r -a wanted <<<"${only:-${all_suites// /,}}"
for s in "${wanted[@]}"; do
  case "$s" in
    memcpy|moe|gemm|grouped_gemm) cuda_suites="${cuda_suites:+$cuda_suites,}$s" ;;
    attention) run_attention=1 ;;
    host) run_host=1 ;;
    "") ;;
    *) echo "calibrate.sh: unknown suite \"$s\" (suites: ${all_suites// /, })" >&2; exit 1 ;;
  esac
done

# ---- time caps (seconds) --------------------------------------------------------------------------------------------
# One device command may run 600 s and a task has 900 s of device time in all, the machine's start (a minute or
# two) included. The whole run fits one command with 60 s to spare (copying the tree in and $OUT back, the
# timeout's margin): full 480 s, quick 330 s, so a quick run plus its machine's start leaves room for a second
# quick run. The cold build is about 25 s of CPU time in all (nvcc 13.0), one file per core. Attention gets the
# largest share: each new cuDNN shape builds a cuDNN graph on its first call (seconds per configuration).
device_command_s=600 device_spare_s=60
cap_build=90 cap_overhead=30  # overhead: provenance (imports torch), the summary, each stage's kill-after margin
if [[ $quick -eq 1 ]]; then cap_kernels=60 cap_attention=120 cap_host=30; else cap_kernels=120 cap_attention=200 cap_host=40; fi
cap_total=$((cap_build + cap_kernels + cap_attention + cap_host + cap_overhead))
if ((cap_total + device_spare_s > device_command_s)); then
  echo "calibrate.sh: the stage caps add up to $cap_total s, past one device command ($device_command_s s - $device_spare_s s)" >&2
  exit 2
fi

# ---- the build command --------------------------------------------------------------------------------------------
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
if [[ -z "$arch" ]]; then
  cc="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | head -1 | tr -d ' .')"
  arch="sm_${cc:-90}"
fi
sm="${arch#sm_}"
bin_dir="${BUILD_DIR:-$root/build-calib}"
[[ $build_only -eq 1 ]] && bin_dir="$out"
# cuBLAS and cuBLASLt: the CUDA toolkit's (next to nvcc), else PyTorch's pip package (nvidia-cublas). Whichever is
# found is linked from its folder by file name (-L DIR -l:FILE: nvcc refuses a versioned .so.13 given as a path,
# and the pip package has only versioned files) with an rpath to that folder, so the program loads the copy it was
# built against whether or not the folder is on the loader's path (a library the loader cannot find exits 127
# before main, and every record of the CUDA suites would be lost).
cuda_home="$(cd "$(dirname "$(readlink -f "$nvcc" 2>/dev/null || echo "$nvcc")")/.." 2>/dev/null && pwd)"
# The folder holding both libraries, or nothing.
find_cublas_dir() {
  local d
  for d in "$cuda_home/lib64" "$cuda_home"/targets/*/lib "$cuda_home/lib"; do
    if compgen -G "$d/libcublasLt.so*" >/dev/null && compgen -G "$d/libcublas.so*" >/dev/null; then
      echo "$d"
      return
    fi
  done
  d="$("$python" -c 'import glob, os, nvidia
for p in list(nvidia.__path__):
    for f in sorted(glob.glob(os.path.join(p, "**", "libcublasLt.so*"), recursive=True)):
        if glob.glob(os.path.join(os.path.dirname(f), "libcublas.so*")):
            print(os.path.dirname(f)); raise SystemExit' 2>/dev/null | head -1)"
  [[ -n "$d" ]] && echo "$d"
}
# A library file in a folder: the unversioned name when there is one, else the shortest versioned one.
library_in() { ls -1 "$1"/"$2".so* 2>/dev/null | sort -V | head -1; }
extra_flags=()
link_libs=(-lcublasLt -lcublas)  # nothing found: the linker's search (the build log says what is missing)
cublas_dir="$(find_cublas_dir)"
if [[ -n "$cublas_dir" ]]; then
  cublas_dir="$(cd "$cublas_dir" && pwd -P)"
  link_libs=("-L$cublas_dir" "-l:$(basename "$(library_in "$cublas_dir" libcublasLt)")"
    "-l:$(basename "$(library_in "$cublas_dir" libcublas)")")
  extra_flags+=(-Xlinker "-rpath=$cublas_dir")
  [[ "$cublas_dir" != "$cuda_home"/* && -d "$cublas_dir/../include" ]] && extra_flags+=("-I$cublas_dir/../include")
fi
sources=("$cuda_dir"/*.cu "$cuda_dir"/*.cpp)
compile_flags=(-std=c++17 -O2 "-gencode=arch=compute_${sm},code=[sm_${sm},compute_${sm}]" -Xcompiler=-Wall,-Wextra)
# The commands as printed by --dry-run and build.log (the build runs them from arrays, never through eval).
compile_cmd() { echo "$nvcc ${compile_flags[*]} ${extra_flags[*]} -c $1 -o $bin_dir/$(basename "$1").o"; }
link_cmd="$nvcc ${compile_flags[*]} ${extra_flags[*]} $bin_dir/*.o ${link_libs[*]} -o $bin_dir/moesim_calib"

# Compiles every translation unit in parallel, then links; returns nvcc's status. Output to stdout.
build() {
  mkdir -p "$bin_dir" && rm -f "$bin_dir"/*.o "$bin_dir/moesim_calib"
  local pids=() status=0 src
  for src in "${sources[@]}"; do
    echo "$(compile_cmd "$src")"
    (cd "$root" && "$nvcc" "${compile_flags[@]}" "${extra_flags[@]}" -c "$src" -o "$bin_dir/$(basename "$src").o") &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
  [[ $status -eq 0 ]] || return 1
  echo "$link_cmd"
  (cd "$root" && "$nvcc" "${compile_flags[@]}" "${extra_flags[@]}" "$bin_dir"/*.o "${link_libs[@]}" -o "$bin_dir/moesim_calib")
}

if [[ $build_only -eq 1 ]]; then
  [[ -x "$nvcc" ]] || { echo "calibrate.sh: nvcc not found (set NVCC)" >&2; exit 2; }
  build || { echo "calibrate.sh: the build failed" >&2; exit 2; }
  echo "calibrate.sh: built $bin_dir/moesim_calib ($arch; cuBLAS from ${cublas_dir:-the search path of the linker})"
  exit 0
fi

quick_flag=()
[[ $quick -eq 1 ]] && quick_flag=(--quick)

# ---- dry run: the plan, on any machine ----------------------------------------------------------------------------
if [[ $dry -eq 1 ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "${CXX:-c++}" -std=c++17 -O0 -o "$tmp/plan" "$cuda_dir"/calib_plan.cpp "$cuda_dir"/calib_record.cpp \
    "$cuda_dir"/calib_rehearsal.cpp "$cuda_dir"/rehearse/moesim_calib_rehearse.cpp ||
    { echo "calibrate.sh: cannot compile the planner with ${CXX:-c++}" >&2; exit 2; }
  echo "calibrate.sh --dry-run: nothing is built or run."
  echo
  echo "Output folder: $out (kernels.jsonl attention.jsonl host_costs.jsonl run.log build.log clocks.csv PROVENANCE.md)"
  echo
  echo "Build ($arch; one nvcc per file in parallel, then the link; cap ${cap_build} s):"
  for src in "${sources[@]}"; do echo "  $(compile_cmd "${src#"$root"/}")"; done
  echo "  $link_cmd"
  echo
  echo "Suites (record counts exact; times are estimates from made-up kernel times, the caps are enforced):"
  records=0
  if [[ -n "$cuda_suites" ]]; then
    plan="$("$tmp/plan" --plan --cc "${sm:0:-1}" --only "$cuda_suites" "${quick_flag[@]}")" || exit 2
    echo "$plan" | grep -v '^  total'
    records=$((records + $(echo "$plan" | awk '$1 == "total" {print $2}')))
  fi
  if [[ $run_attention -eq 1 ]]; then
    p="$("$python" "$cuda_dir/calib_attention.py" --plan "${quick_flag[@]}")" && echo "$p" && records=$((records + $(echo "$p" | awk '{print $2}')))
  fi
  if [[ $run_host -eq 1 ]]; then
    p="$("$python" "$cuda_dir/calib_host.py" --plan "${quick_flag[@]}")" && echo "$p" && records=$((records + $(echo "$p" | awk '{print $2}')))
  fi
  echo
  echo "Expected records: $records (each a time or a skip record with its error)"
  echo "cuBLAS: ${cublas_dir:-not found next to $nvcc nor in the pip package nvidia-cublas} (linked from that folder, rpath to it)"
  echo "Time budget: build ${cap_build} s + kernels ${cap_kernels} s + attention ${cap_attention} s + host ${cap_host} s + ${cap_overhead} s = ${cap_total} s at most (one device command: ${device_command_s} s; give it timeout_s $((cap_total + device_spare_s)))"
  echo "Before the first timed suite: 1.5 s of BF16 8192^3 GEMMs (global warm-up)."
  exit 0
fi

# ---- the run --------------------------------------------------------------------------------------------------------
command -v nvidia-smi >/dev/null || { echo "calibrate.sh: nvidia-smi not found: this needs a machine with an NVIDIA GPU" >&2; exit 2; }
gpu_name="$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1)"
[[ -n "$gpu_name" ]] || { echo "calibrate.sh: no GPU visible to nvidia-smi" >&2; exit 2; }
mkdir -p "$out" || exit 2
out="$(cd "$out" && pwd)"
if ls "$out"/*.jsonl >/dev/null 2>&1; then
  echo "calibrate.sh: $out already holds records; give an empty folder (runs are never mixed)" >&2
  exit 1
fi
export PYTHONUNBUFFERED=1  # the Python suites' output reaches run.log as it is printed
start=$SECONDS
# The run, with everything it prints copied to run.log as it goes (tee ends before this script does, so the
# log is complete when the folder is collected).
run_all() {
  log() { echo "[$(date -u +%H:%M:%S) +$((SECONDS - start))s] $*"; }
  log "calibrate.sh: $gpu_name, output $out, suites: ${only:-all}$([[ $quick -eq 1 ]] && echo ' (quick)')"

  # Clock, power and throttle-reason samples for the whole run (field names differ across drivers).
  sampler=""
  for fields in \
    "timestamp,clocks.sm,clocks.mem,clocks.max.sm,power.draw,power.limit,temperature.gpu,utilization.gpu,clocks_event_reasons.active,clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown,clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.hw_thermal_slowdown" \
    "timestamp,clocks.sm,clocks.mem,clocks.max.sm,power.draw,power.limit,temperature.gpu,utilization.gpu,clocks_throttle_reasons.active,clocks_throttle_reasons.sw_power_cap,clocks_throttle_reasons.hw_slowdown,clocks_throttle_reasons.sw_thermal_slowdown,clocks_throttle_reasons.hw_thermal_slowdown" \
    "timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu"; do
    if nvidia-smi --query-gpu="$fields" --format=csv,noheader -i 0 >/dev/null 2>&1; then
      TZ=UTC nvidia-smi --query-gpu="$fields" --format=csv -lms 250 -i 0 >"$out/clocks.csv" 2>/dev/null &
      sampler=$!
      log "clock sampler: pid $sampler, fields $fields"
      break
    fi
  done
  [[ -n "$sampler" ]] || log "clock sampler: nvidia-smi accepted none of the field sets; no clocks.csv"
  trap '[[ -n "$sampler" ]] && kill "$sampler" 2>/dev/null' EXIT

  if [[ -z "$commit" ]]; then
    if [[ -d "$root/.git" || -f "$root/.git" ]] && commit="$(git -C "$root" rev-parse HEAD 2>/dev/null)" && [[ -n "$commit" ]]; then
      git -C "$root" diff --quiet HEAD 2>/dev/null || commit="$commit (with local changes)"
    elif [[ $commit_missing -eq 1 ]]; then
      commit="unknown (--commit was given without a SHA and there is no git metadata here)"
    else
      commit="unknown (no git metadata here; pass --commit SHA)"
    fi
  fi
  log "project commit: $commit"
  py_versions="$("$python" -c 'import torch, triton; print("torch %s (CUDA %s), cuDNN %s, triton %s" % (torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), triton.__version__))' 2>&1 | tail -1)"
  cudnn_header="$(grep -hE '^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ' "$cuda_home"/include/cudnn_version.h 2>/dev/null | awk '{printf "%s%s", sep, $3; sep="."}')"
  cublas_lib=""
  [[ -n "$cublas_dir" ]] && cublas_lib="$(ls -1 "$cublas_dir"/libcublasLt.so.* 2>/dev/null | sort -V | tail -1)"
  {
    echo "# Provenance of the calibration records in this folder"
    echo
    echo "- GPU: $gpu_name ($(nvidia-smi --query-gpu=compute_cap,memory.total,power.limit,clocks.max.sm,clocks.max.memory,vbios_version --format=csv,noheader -i 0 2>/dev/null | head -1); compute capability, memory, power limit, max SM and memory clocks, VBIOS)"
    echo "- driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null | head -1)"
    echo "- CUDA (nvcc): $("$nvcc" --version 2>/dev/null | tail -2 | head -1)"
    echo "- cuBLAS: ${cublas_lib:+$cublas_lib (library file, linked with an rpath to its folder); }the version each GEMM record carries (software.cublas, cublasLtGetVersion)"
    echo "- cuDNN: ${cudnn_header:-no cudnn_version.h in $cuda_home/include}; PyTorch's: see the next line"
    echo "- Python stack: $py_versions"
    echo "- project commit: $commit"
    echo "- date (UTC): $(date -u +%Y-%m-%dT%H:%M:%SZ); host: $(hostname 2>/dev/null || cat /etc/hostname 2>/dev/null); $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //'))"
    echo "- command: bash tools/calibrate.sh $out${quick_flag[*]:+ ${quick_flag[*]}}${only:+ --only $only}"
    echo
    echo "## What was measured"
    echo
    echo "- kernels.jsonl (kernels-sim/cuda moesim_calib, built here with nvcc for $arch): dense GEMMs through cuBLASLt and"
    echo "  grouped GEMMs through cuBLAS in Transformer Engine's orientation (A = weight, B = input, leading dimensions k and n),"
    echo "  inputs filled with random values, after one global warm-up of 1.5 s of BF16 GEMMs; FP8 GEMMs with and without"
    echo "  fast accumulation (each record's fast_accum). Timing: CUDA events per call, an untimed 2 x L2 write and a 20 us"
    echo "  spin before each timed call."
    echo "- **The MoE memory-bound kernels (permute, unpermute, router_topk, rmsnorm, swiglu, quantize_fp8) are STAND-INS**"
    echo "  written in kernels-sim/cuda/moe_kernels.cu, not Transformer Engine's kernels; every one of their records says"
    echo "  so (stand_in: true, implementation). Their fits are lower bounds for tuned production kernels."
    echo "- attention.jsonl (calib_attention.py): torch.nn.functional.scaled_dot_product_attention, causal, forward and"
    echo "  backward; cuDNN backend = dtype bf16 (the family the simulator prices attention with), flash backend"
    echo "  (FlashAttention-2) = dtype bf16_fa2 (kept as data)."
    echo "- host_costs.jsonl (calib_host.py): PyTorch eager dispatch time per op kind on this machine's CPU with the GPU"
    echo "  idle, eager and from a CUDA graph."
    echo "- clocks.csv: nvidia-smi samples every 250 ms for the whole run, time stamps in UTC. Every record line's"
    echo "  written_at is the UTC time it was written (the configuration ran since the line before). Clocks were not locked."
    echo
    echo "## nvidia-smi at the start"
    echo
    echo '```'
    nvidia-smi -q -d CLOCK,POWER,PERFORMANCE -i 0 2>&1 | sed -n '1,80p'
    echo '```'
  } >"$out/PROVENANCE.md"
  log "provenance written"

  stage_status=() failed_stages=()
  stage() {  # name cap output command...: one stage under its time cap (output: a file, or - for the log)
    local name="$1" cap="$2" output="$3" t0=$SECONDS rc
    shift 3
    log "stage $name: start (cap ${cap} s)"
    if [[ "$output" == - ]]; then
      timeout --kill-after=5 "$cap" "$@"
    else
      timeout --kill-after=5 "$cap" "$@" >"$output" 2>&1
    fi
    rc=$?
    [[ $rc -eq 124 || $rc -eq 137 ]] && log "stage $name: STOPPED at its ${cap} s cap (records written so far are kept)"
    log "stage $name: exit $rc after $((SECONDS - t0)) s"
    stage_status+=("$name: exit $rc, $((SECONDS - t0)) s")
    [[ $rc -eq 0 ]] || failed_stages+=("$name")
    return $rc
  }

  if [[ -n "$cuda_suites" ]]; then
    if stage build "$cap_build" "$out/build.log" bash "$root/tools/calibrate.sh" "$bin_dir" --build-only --arch "$arch"; then
      # The libraries the program will load (a "not found" line here would exit 127 before any record).
      ldd "$bin_dir/moesim_calib" 2>&1 | grep -E 'cublas|not found' | sed 's/^[[:space:]]*/  ldd: /'
      if ldd "$bin_dir/moesim_calib" 2>/dev/null | grep -q 'not found' && [[ -n "$cublas_dir" ]]; then
        export LD_LIBRARY_PATH="$cublas_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        log "a library was not found by the loader; LD_LIBRARY_PATH=$LD_LIBRARY_PATH for the kernels stage"
      fi
      stage kernels "$cap_kernels" - "$bin_dir/moesim_calib" --out "$out/kernels.jsonl" --only "$cuda_suites" \
        --budget-s $((cap_kernels - 10)) "${quick_flag[@]}"
    else
      log "the CUDA program did not build (build.log); its suites are not run"
      tail -20 "$out/build.log"
    fi
  fi
  if [[ $run_attention -eq 1 ]]; then
    stage attention "$cap_attention" - "$python" "$cuda_dir/calib_attention.py" \
      --out "$out/attention.jsonl" --budget-s $((cap_attention - 30)) "${quick_flag[@]}"
  fi
  if [[ $run_host -eq 1 ]]; then
    stage host "$cap_host" - "$python" "$cuda_dir/calib_host.py" \
      --out "$out/host_costs.jsonl" --budget-s $((cap_host - 8)) "${quick_flag[@]}"
  fi

  [[ -n "$sampler" ]] && kill "$sampler" 2>/dev/null
  {
    echo
    echo "## Run summary"
    echo
    for s in "${stage_status[@]}"; do echo "- stage $s"; done
    for f in "$out"/*.jsonl; do
      [[ -f "$f" ]] || continue
      echo "- $(basename "$f"): $(grep -c . "$f") lines, $(grep -c '"skipped":' "$f") of them skip records"
    done
    if [[ -s "$out/clocks.csv" ]]; then
      echo "- clocks.csv: $(($(wc -l <"$out/clocks.csv") - 1)) samples; SM clock min/max over the run (MHz): $(awk -F', ' 'NR > 1 {gsub(/ MHz/, "", $2); v = $2 + 0; if (v > 0) {if (min == "" || v < min) min = v; if (v > max) max = v}} END {print min "/" max}' "$out/clocks.csv")"
    fi
    echo "- whole run: $((SECONDS - start)) s"
  } >>"$out/PROVENANCE.md"
  log "done in $((SECONDS - start)) s; next, on the CPU machine: moesim fit --data <this folder copied to kernels-sim/data/<gpu>>"
  ls -la "$out"
  if [[ ${#failed_stages[@]} -gt 0 ]]; then
    log "stages that failed or were stopped: ${failed_stages[*]} (their records so far are kept)"
    return 3
  fi
}
run_all 2>&1 | tee -a "$out/run.log"
exit "${PIPESTATUS[0]}"
