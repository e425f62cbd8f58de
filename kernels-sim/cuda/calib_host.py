"""Host overhead of PyTorch's eager dispatch on the GPU machine's CPU: per op kind, the host time to issue one
small op or small GEMM while the GPU is idle (tensors so small that the GPU never holds the host back), eagerly
and replayed from a CUDA graph. Writes host-cost records (kernels-sim/data/README.md, "Host-cost records").

  python3 calib_host.py --out FILE [--quick] [--budget-s S]   measure, append records to FILE
  python3 calib_host.py --plan [--quick]                      the ops and a time estimate (no torch)
  python3 calib_host.py --rehearse [--quick]                  FAKE records on stdout (no torch)

Each repeat issues OPS ops back to back: issue_us_per_op is the host time until the last one is enqueued,
wall_us_per_op the time until the GPU has finished them, both divided by OPS; median, p10, p90 over the repeats.
With a CUDA graph the OPS ops are captured once and one replay is timed the same way."""

import sys
import time

import calib_jsonl

SOURCE = "kernels-sim/cuda calib_host.py"
# op name -> what it is; the callables are built in make_ops() once torch is imported.
OPS = {
    "view": "tensor.view (no kernel: Python and dispatcher floor)",
    "add": "torch.add(a, b, out=c), 4096 BF16",
    "mul_scalar": "a * 2.0 (allocates), 4096 BF16",
    "silu": "torch.nn.functional.silu, 4096 BF16",
    "rms_norm": "torch.nn.functional.rms_norm over 64 x 64 BF16",
    "softmax": "torch.softmax over 64 x 64 FP32",
    "topk": "torch.topk(k=8) over 64 x 64 FP32",
    "index_select": "index_select of 64 rows of 64 x 64 BF16",
    "cat": "torch.cat of two 4096 BF16",
    "mm": "torch.mm 64 x 64 x 64 BF16",
    "linear": "torch.nn.functional.linear 64 -> 64 with bias, 64 tokens, BF16",
}
MODES = ("eager", "cuda_graph")


def sizes(quick):
    return (200, 8) if quick else (500, 20)  # ops per repeat, repeats


def plan(quick):
    return [(op, mode) for op in OPS for mode in MODES if not (op == "view" and mode == "cuda_graph")]


def print_plan(quick):
    n, r = sizes(quick)
    cases = plan(quick)
    seconds = sum((r + 2) * n * 15e-6 + 0.05 for _ in cases) + 8  # + torch import and CUDA start
    print("  {:<13} {:4d} records  {} x {} ops each   ~{:5.1f} s  {}".format(
        "host", len(cases), r, n, seconds, "PyTorch eager dispatch per op kind, eager and CUDA graph (host-cost records)"))


def record(op, mode, n, r, issue, wall, cpu, gpu, software, date, source):
    rec = {"record": "host_cost", "op": op, "mode": mode, "what": OPS[op], "ops_per_repeat": n}
    if issue is not None:
        rec["issue_us_per_op"] = issue
        rec["wall_us_per_op"] = wall
        rec["repeats"] = r
    rec.update({"cpu": cpu, "gpu": gpu, "software": software, "date": date, "source": source})
    return rec


def rehearse(quick):
    gpu, software, date = calib_jsonl.rehearsal_device()
    cpu = {"model": "REHEARSAL", "logical_cpus": 16}
    n, r = sizes(quick)
    out = calib_jsonl.Output(None, written_at=lambda: calib_jsonl.REHEARSAL_WRITTEN_AT)
    source = calib_jsonl.REHEARSAL_SOURCE.format("calib_host.py --rehearse")
    for i, (op, mode) in enumerate(plan(quick)):
        t = (1.5 if mode == "cuda_graph" else 9.0) + 0.5 * i
        stats = {"median": round(t, 4), "p10": round(0.97 * t, 4), "p90": round(1.05 * t, 4)}
        wall = {k: round(v + (2.0 if mode == "cuda_graph" else 0.5), 4) for k, v in stats.items()}
        out.put(record(op, mode, n, r, stats, wall, cpu, gpu, software, date, source))


def make_ops(torch):
    F = torch.nn.functional
    bf, f32 = torch.bfloat16, torch.float32
    a, b, c = (torch.randn(4096, device="cuda", dtype=bf) for _ in range(3))
    x = torch.randn(64, 64, device="cuda", dtype=bf)
    s = torch.randn(64, 64, device="cuda", dtype=f32)
    w = torch.randn(64, 64, device="cuda", dtype=bf)
    bias = torch.randn(64, device="cuda", dtype=bf)
    norm_w = torch.ones(64, device="cuda", dtype=bf)
    idx = torch.randint(0, 64, (64,), device="cuda")
    rms = (lambda: F.rms_norm(x, (64,), norm_w)) if hasattr(F, "rms_norm") else (lambda: F.layer_norm(x, (64,)))
    return {
        "view": lambda: a.view(64, 64),
        "add": lambda: torch.add(a, b, out=c),
        "mul_scalar": lambda: a * 2.0,
        "silu": lambda: F.silu(a),
        "rms_norm": rms,
        "softmax": lambda: torch.softmax(s, -1),
        "topk": lambda: torch.topk(s, 8, dim=-1),
        "index_select": lambda: x.index_select(0, idx),
        "cat": lambda: torch.cat([a, b]),
        "mm": lambda: torch.mm(x, w),
        "linear": lambda: F.linear(x, w, bias),
    }


def run(path, quick, budget_s):
    import torch

    gpu, software, date, _ = calib_jsonl.device(torch)
    cpu = calib_jsonl.cpu_description()
    out = calib_jsonl.Output(path)
    budget = calib_jsonl.Budget(budget_s)
    n, r = sizes(quick)
    ops = make_ops(torch)
    print("calib_host: {} on {} ({} logical CPUs), torch {}".format(gpu["name"], cpu["model"], cpu["logical_cpus"],
                                                                   software["torch"]), flush=True)

    def measure(issue_fn):
        issue, wall = [], []
        for i in range(r + 2):  # the first two are warm-up
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            issue_fn()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            if i >= 2:
                issue.append(1e6 * (t1 - t0) / n)
                wall.append(1e6 * (t2 - t0) / n)
        return calib_jsonl.stats_us(issue), calib_jsonl.stats_us(wall)

    for op, mode in plan(quick):
        fn = ops[op]
        try:
            if budget.spent():
                raise TimeoutError("not run: the time budget of {:.0f} s was spent".format(budget.seconds))
            if mode == "eager":
                def issue_fn():
                    for _ in range(n):
                        fn()
            else:
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):  # warm-up on a side stream before capture, as PyTorch advises
                    for _ in range(3):
                        fn()
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    for _ in range(n):
                        fn()
                issue_fn = graph.replay
            issue, wall = measure(issue_fn)
            rec = record(op, mode, n, r, issue, wall, cpu, gpu, software, date, SOURCE)
            status = "issue {:7.2f} us/op, wall {:7.2f} us/op".format(issue["median"], wall["median"])
        except Exception as e:  # written as a skip record; the run goes on
            rec = record(op, mode, n, r, None, None, cpu, gpu, software, date, SOURCE)
            rec["skipped"] = calib_jsonl.error_text(e)
            status = "SKIPPED: " + rec["skipped"]
        out.put(rec)
        print("  {:<13} {:<10} {}".format(op, mode, status), flush=True)
    print("calib_host: {} records, {} skipped -> {}".format(out.written, out.skipped, path), flush=True)


if __name__ == "__main__":
    sys.exit(calib_jsonl.main(__doc__, print_plan, rehearse, run))
