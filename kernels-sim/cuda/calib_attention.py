"""Attention timings from a real fused kernel: torch.nn.functional.scaled_dot_product_attention with its cuDNN and
flash backends, forward and backward, causal, at the head dimensions of moesim's catalog (64/64 GPT-OSS,
128/128 Llama / Qwen3 / Mixtral, 192/128 DeepSeek-V3 / Kimi-K2 MLA). Writes the CUDA program's record format
(kernels-sim/data/README.md). Run by tools/calibrate.sh on the GPU machine.

  python3 calib_attention.py --out FILE [--quick] [--budget-s S]   time on GPU 0, append records to FILE
  python3 calib_attention.py --plan [--quick]                      configurations and time estimate (no torch)
  python3 calib_attention.py --rehearse [--quick]                  FAKE-timed records on stdout (no torch)

Family names (kernel/dtype): the cuDNN backend is "attention_fwd/bf16" and "attention_bwd/bf16", the family
moesim's fitted model prices attention with (Transformer Engine runs cuDNN fused attention on Hopper); PyTorch's
flash backend (FlashAttention-2) is dtype "bf16_fa2", kept as data and never used by the simulator. The flash
backend needs one head dimension for q, k and v, so 192/128 (MLA) is planned for cuDNN only: a case PyTorch
refuses before running anything is left out of the plan rather than written as a skip record.
Each new cuDNN shape builds a cuDNN graph on its first call (seconds); the time estimate counts GRAPH_BUILD_S per
cuDNN configuration, and tools/calibrate.sh gives the stage room for it.
Timing: per call an untimed write of twice the L2 size, a short GPU spin (so host launch time is not counted),
then CUDA events around the call; 3 warm-up calls. Backward is torch.autograd.grad of the output on a retained
graph: the backward kernel(s) alone. A configuration a backend refuses is a skip record with the error."""

import sys

import calib_jsonl

SOURCE = "kernels-sim/cuda calib_attention.py"
BACKENDS = [  # (name in the records, dtype, SDPBackend member, implementation)
    ("cudnn", "bf16", "CUDNN_ATTENTION",
     "torch.nn.functional.scaled_dot_product_attention, cuDNN backend (SDPBackend.CUDNN_ATTENTION)"),
    ("flash", "bf16_fa2", "FLASH_ATTENTION",
     "torch.nn.functional.scaled_dot_product_attention, flash backend (SDPBackend.FLASH_ATTENTION, FlashAttention-2)"),
]
HEAD_DIMS = [(64, 64), (128, 128), (192, 128)]
GRAPH_BUILD_S = 2.0  # assumed cuDNN graph build per new shape (fwd or bwd): the estimate's, not a measurement
TOKENS_PER_CALL = 16384  # batch x seq; heads fixed, so FLOPs grow with seq and bytes do not
HEADS = 32
WARMUP = 3


def runs_on(backend, dqk, dv):
    """Whether PyTorch's SDPA backend takes these head dimensions: flash wants q, k and v of one head dimension, a
    multiple of 8 up to 256 (sdp_utils check_head_dim_size_flash); cuDNN is given every catalog shape."""
    if backend == "flash":
        return dqk == dv and dqk % 8 == 0 and dqk <= 256
    return True


def plan(quick):
    seqs = [1024, 4096, 8192] if quick else [1024, 2048, 4096, 8192]
    cases = []
    for backend, dtype, member, impl in BACKENDS:
        for kernel in ("attention_fwd", "attention_bwd"):
            for dqk, dv in HEAD_DIMS:
                if not runs_on(backend, dqk, dv):
                    continue
                for seq in seqs:
                    cases.append({
                        "kernel": kernel, "dtype": dtype, "variant": "causal", "implementation": impl,
                        "shape": {"batch": max(1, TOKENS_PER_CALL // seq), "heads": HEADS, "seq_q": seq,
                                  "seq_kv": seq, "head_dim_qk": dqk, "head_dim_v": dv, "causal": 1},
                        "_backend": member})
    return cases


def repeats(quick):
    return 8 if quick else 20


def fake_time_us(case):
    """A made-up time (H200 datasheet peaks at assumed fractions): the rehearsal's and the estimate's only."""
    s = case["shape"]
    bh = s["batch"] * s["heads"]
    flops = 2 * bh * s["seq_q"] * s["seq_kv"] * (s["head_dim_qk"] + s["head_dim_v"]) * 0.5
    io = bh * (s["seq_q"] + s["seq_kv"]) * (s["head_dim_qk"] + s["head_dim_v"]) * 2
    if case["kernel"] == "attention_bwd":
        flops, io = 2.5 * flops, 2 * io
    return 8 + 1e6 * (flops / (0.5 * 989e12) + io / (0.8 * 4.8e12))


def public(case):
    return {k: v for k, v in case.items() if not k.startswith("_")}


def print_plan(quick):
    cases = plan(quick)
    seconds = sum((WARMUP + repeats(quick)) * (fake_time_us(c) + 100) * 1e-6 + 0.05 +
                  (GRAPH_BUILD_S if c["_backend"] == "CUDNN_ATTENTION" else 0) for c in cases)
    print("  {:<13} {:4d} records  {}+{:<2d} calls each  ~{:5.1f} s  {}".format(
        "attention", len(cases), WARMUP, repeats(quick), seconds,
        "fused attention (PyTorch SDPA, cuDNN and flash backends), fwd and bwd, causal, head dims 64/128/192 "
        "(192 cuDNN only)"))


def rehearse(quick):
    gpu, software, date = calib_jsonl.rehearsal_device()
    out = calib_jsonl.Output(None, written_at=lambda: calib_jsonl.REHEARSAL_WRITTEN_AT)
    for i, case in enumerate(plan(quick), 1):
        record = public(case)
        if i % 17 == 0:
            record["skipped"] = "REHEARSAL: a skipped configuration, to sample the format"
        else:
            t = fake_time_us(case)
            record["time_us"] = {"median": round(t, 4), "p10": round(0.99 * t, 4), "p90": round(1.02 * t, 4)}
            record["repeats"] = repeats(quick)
        record.update({"gpu": gpu, "software": software, "date": date,
                       "source": calib_jsonl.REHEARSAL_SOURCE.format("calib_attention.py --rehearse")})
        out.put(record)


def run(path, quick, budget_s):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    gpu, software, date, l2 = calib_jsonl.device(torch)
    out = calib_jsonl.Output(path)
    budget = calib_jsonl.Budget(budget_s)
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    spin = getattr(torch.cuda, "_sleep", None)
    n = repeats(quick)
    print("calib_attention: {} (torch {}, cuDNN {})".format(gpu["name"], software["torch"], software.get("cudnn")),
          flush=True)

    def timed(fn):
        for _ in range(WARMUP):
            fn()
        torch.cuda.synchronize()
        events = []
        for i in range(n):
            flush.fill_(i & 0xFF)
            if spin:
                spin(40000)  # about 20 us at 2 GHz: the host enqueues the call before the GPU reaches the start
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            events.append((start, stop))
        torch.cuda.synchronize()
        return [1e3 * a.elapsed_time(b) for a, b in events]

    for case in plan(quick):
        record = public(case)
        s = case["shape"]
        try:
            if budget.spent():
                raise TimeoutError("not run: the time budget of {:.0f} s was spent".format(budget.seconds))
            g = torch.Generator(device="cuda").manual_seed(1)
            shape_qk = (s["batch"], s["heads"], s["seq_q"], s["head_dim_qk"])
            shape_v = (s["batch"], s["heads"], s["seq_kv"], s["head_dim_v"])
            mk = lambda shp: torch.randn(shp, generator=g, device="cuda", dtype=torch.bfloat16).requires_grad_(True)
            q, k, v = mk(shape_qk), mk((s["batch"], s["heads"], s["seq_kv"], s["head_dim_qk"])), mk(shape_v)
            with sdpa_kernel([getattr(SDPBackend, case["_backend"])]):
                if case["kernel"] == "attention_fwd":
                    samples = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
                else:
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    do = torch.randn(o.shape, generator=g, device="cuda", dtype=torch.bfloat16)
                    samples = timed(lambda: torch.autograd.grad(o, (q, k, v), do, retain_graph=True))
            record["time_us"] = calib_jsonl.stats_us(samples)
            record["repeats"] = n
            status = "median {:10.2f} us".format(record["time_us"]["median"])
        except Exception as e:  # a refused configuration is data: written as a skip record
            record["skipped"] = calib_jsonl.error_text(e)
            status = "SKIPPED: " + record["skipped"]
            try:
                torch.cuda.synchronize()
            except Exception:
                pass
        record.update({"gpu": gpu, "software": software, "date": date, "source": SOURCE})
        out.put(record)
        print("  {} {} {} d={}/{} seq={} batch={} {}".format(record["kernel"], record["dtype"], case["_backend"],
                                                            s["head_dim_qk"], s["head_dim_v"], s["seq_q"],
                                                            s["batch"], status), flush=True)
    print("calib_attention: {} records, {} skipped -> {}".format(out.written, out.skipped, path), flush=True)


if __name__ == "__main__":
    sys.exit(calib_jsonl.main(__doc__, print_plan, rehearse, run))
