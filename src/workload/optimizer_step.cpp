#include "workload/optimizer_step.hpp"

#include "workload/dp_strategy.hpp"

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

void emit_optimizer(const StepContext& ctx, OpWriter& out, int rank, std::vector<OpId> reduces, bool sharded) {
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
  // Adam on the local shard: read and write master weights, two moments, the gradient, write the weight.
  const auto& b = ctx.memory_estimate.ranks.at(rank);
  const double moment_b = l.optimizer_moment_dtype == layout::Dtype::bf16 ? 2.0 : 4.0;
  const double shard =
      b.dense_params / (sharded ? ctx.dense_dp.size : 1) + b.expert_params / (sharded ? ctx.expert_dp.size : 1);
  const double bytes = shard * (2 * (4 + 2 * moment_b) + grad_b + param_gather_bytes(l));
  Chain opt;
  kernels::MemoryBound k{bytes, "adam"};
  out.compute(rank, Block{ctx.in.kernels.seconds(k, ctx.device), 4}, "optimizer_step", opt, -1, -1, Phase::optimizer, 0,
              opgraph::OpIds(reduces.begin(), reduces.end()));
}

}  // namespace moesim::workload
