#include "workload/optimizer_step.hpp"

#include "workload/dp_strategy.hpp"
#include "workload/fp8_param_quantize.hpp"
#include "workload/megatron_optimizer.hpp"

namespace moesim::workload {

EmbeddingLossRanks embedding_loss_ranks(const layout::StageAssignment& stages) {
  EmbeddingLossRanks at{0, stages.pp - 1};
  for (int r = 0; r < stages.pp; ++r)
    for (const auto& c : stages.ranks[static_cast<std::size_t>(r)]) {
      if (c.copy == 0 && c.has_embedding) at.embedding = r;
      if (c.copy == 0 && c.has_loss) at.loss = r;
    }
  return at;
}

namespace {
// One of the optimizer step's memory-bound kernels. On Blackwell and Blackwell Ultra they run at their own rate
// (step parameter optimizer_hbm_fraction_blackwell, its source in data/params/step_params.json): long contiguous
// sweeps over the gradient buffer and the shard, not the layers' small norms and casts whose fitted fraction the
// kernel model applies to every other memory-bound kernel there.
Block memory_bound(const StepContext& ctx, double bytes, const char* name, int kernels) {
  if (bytes <= 0) return {};
  const auto arch = ctx.device.arch;
  if (arch == kernels::Arch::blackwell || arch == kernels::Arch::blackwell_ultra)
    return Block{bytes / (ctx.device.hbm_Bps * ctx.in.params.optimizer_hbm_fraction_blackwell), kernels};
  return Block{ctx.in.kernels.seconds(kernels::MemoryBound{bytes, name}, ctx.device), kernels};
}
}  // namespace

std::optional<OpId> emit_optimizer(const StepContext& ctx, OpWriter& out, int rank, std::vector<OpId> reduces,
                                   bool sharded) {
  const auto& l = ctx.in.layout;
  const auto& m = ctx.in.model;
  const double grad_b = grad_reduce_bytes(l);
  // In a V the embedding and the loss share a rank, which then has nothing to exchange.
  const auto [embedding_rank, loss_rank] = embedding_loss_ranks(ctx.in.stages);
  const bool shares_embedding =
      embedding_rank != loss_rank && (m.tie_embeddings || l.mtp > 0) && (rank == embedding_rank || rank == loss_rank);
  if (shares_embedding) {
    const double bytes = static_cast<double>(m.vocab_size) * m.hidden_size / l.tp * grad_b;
    // First and last stage: a two-member all-reduce, across domains when the pipeline's ends are.
    const bool ends_cross = layout::domain_of(0, ctx.domain) != layout::domain_of(l.gpus - 1, ctx.domain);
    const comm::GroupShape ends{2, ends_cross ? 1 : 2};
    const CommSpec s{Stream::dp_comm,
                     "dp",
                     "embedding_grad_allreduce",
                     ctx.comm_model.nccl(comm::Collective::all_reduce, ends, bytes),
                     // routed as a send to the next stage: the fabric binding has no first-to-last pattern
                     {layout::Dim::pp, TrafficPattern::send_recv}};
    reduces.push_back(out.comm(rank, s, {reduces.empty() ? -1 : reduces.back()}, -1, -1, Phase::bwd_wgrad));
  }
  const auto& b = ctx.memory_estimate.ranks.at(rank);
  const double shard =
      b.dense_params / (sharded ? ctx.dense_dp.size : 1) + b.expert_params / (sharded ? ctx.expert_dp.size : 1);
  Chain opt;
  const opgraph::OpIds after_reduces(reduces.begin(), reduces.end());
  if (l.fsdp) {
    // FSDP2 with torch's Adam on the local shard: read and write master weights, two moments, the gradient,
    // write the weight.
    const double moment_b = l.optimizer_moment_dtype == layout::Dtype::bf16 ? 2.0 : 4.0;
    const double bytes = shard * (2 * (4 + 2 * moment_b) + grad_b + param_gather_bytes(l));
    out.compute(rank, memory_bound(ctx, bytes, "adam", 4), "optimizer_step", opt, -1, -1, Phase::optimizer, 0,
                after_reduces);
    return std::nullopt;
  }
  // Megatron's step after the gradient reduction, each kernel's bytes from megatron_optimizer.hpp. The gradient
  // scaling (1/(DP x CP), or only the experts' EDP/(DP x CP) with average_in_collective) runs before the
  // reduce-scatter in Megatron; it is emitted here, after it, which on one compute
  // stream costs the same time (only an overlapped reduce-scatter would start a little earlier). The zeroing of
  // the gradient buffer opens the next step in Megatron; at the end of this one it takes the same time.
  const auto k = megatron_optimizer_bytes(
      l, b.dense_params + b.expert_params, shard,
      gradient_scaled_params(l, b.dense_params, b.expert_params, ctx.dense_dp.size, ctx.expert_dp.size));
  auto kernel = [&](double bytes, const char* name, int kernels) {
    out.compute(rank, memory_bound(ctx, bytes, name, kernels), name, opt, -1, -1, Phase::optimizer, 0,
                opt.last < 0 ? after_reduces : opgraph::OpIds{});
  };
  if (l.check_for_nan_in_grad) {
    // Megatron DDP's NaN check, bucket by bucket before its reduction (megatron_optimizer.hpp nan_check_buckets):
    // the norm of the bucket's local gradients (all of them, not the shard), then torch.isnan and torch.isinf of
    // it, each read on the host (rerun_state_machine.py validate_result, `if result_rejected`), so the host waits
    // twice per bucket. Megatron runs it as each bucket's reduction starts; emitted here after the reductions,
    // the same time on the compute stream.
    const int n = nan_check_buckets(l, rank, b.dense_params, b.expert_params);
    const double bytes = (b.dense_params + b.expert_params) * grad_b / n;
    for (int i = 0; i < n; ++i) {
      kernel(bytes, "grad_nan_check_norm", 1);
      for (const char* test : {"grad_nan_check_isnan", "grad_nan_check_isinf"}) {
        kernel(8.0, test, 1);  // a one-element test: its launch and floor
        out.host_sync(rank, -1, -1, opt.last, Phase::optimizer, "grad_nan_check_sync");
      }
    }
  }
  kernel(k.grad_scale, "grad_scale", 1);
  kernel(k.grad_to_main, "grad_to_main", 1);
  kernel(k.grad_norm, "grad_norm", 1);
  // The norm's one-float all-reduce over every rank (clip_grads.py:130-131) is not emitted: it is latency alone
  // (tens of microseconds), and the engine's flows resolve bytes to about one byte. The host waits for the norm
  // (`.item()`, clip_grads.py:133) before it issues the optimizer's kernels.
  std::optional<OpId> norm_wait;
  if (opt.last >= 0) norm_wait = out.host_sync(rank, -1, -1, opt.last, Phase::optimizer, "grad_norm_item_sync");
  kernel(k.grad_clip, "grad_clip", 1);
  kernel(k.adam, "optimizer_step", 4);
  kernel(k.copy_to_model, "copy_main_to_model_params", 1);
  if (l.fp8_param_gather && l.precision == layout::Precision::fp8_tensorwise && sharded) {
    // TE's FP8 primary-weight refresh around that cast (fp8_param_quantize.hpp): its per-weight host loop.
    const int weights = fp8_weights_on_rank(m, l, ctx.in.stages, rank);
    const double amax_s = memory_bound(ctx, 4.0 * shard, "fp8_param_amax", 1).seconds;
    out.compute(rank, fp8_param_quantize_cost(ctx.host.eager(), weights, ctx.dense_dp.size, amax_s),
                "fp8_param_quantize", opt, -1, -1, Phase::optimizer, 0);
  }
  kernel(k.zero_grad, "zero_grad_buffer", 1);
  return norm_wait;
}

}  // namespace moesim::workload
