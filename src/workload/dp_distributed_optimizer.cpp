// "distributed-optimizer": Megatron's distributed optimizer with --overlap-param-gather and --overlap-grad-reduce.
// With align_param_gather (prefetches_param_gather) each chunk's parameters are all-gathered from the start of the
// step, overlapped with the first forwards (a chunk's first forward waits for its own gather only); without it the
// chunk's forward pre-hook issues the gather when the chunk's first forward is ready to run (on a later pipeline
// rank: when micro-batch 0 has arrived) and the forward waits for it. Either way the gathered MXFP8 weights are
// then copied out of the gradient buffer on the compute stream (emit_param_copy), and each chunk's gradients are
// reduce-scattered once its last backward is done.
#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "workload/dp_strategy.hpp"

namespace moesim::workload {
namespace {
class DistributedOptimizer final : public DataParallelStrategy {
 public:
  DistributedOptimizer(const StepContext& ctx, OpWriter& out, int rank)
      : ctx_(ctx), out_(out), rank_(rank), prefetch_(prefetches_param_gather(ctx.in.layout)) {}

  void begin() override {
    if (!prefetch_) return;
    for (int c = 0; c < ctx_.in.stages.vpp; ++c) {
      const OpId last = gather({});
      if (last >= 0) gathers_[c] = last;
    }
  }

  // The chunk's first forward (micro-batch 0 in Megatron's orders; DualPipe's second copy starts at m/2) waits for
  // its gather; without the prefetch the gather starts there, after what the forward waited for (its input).
  void before_forward_unit(int chunk, int /*mb*/, Chain& chain) override {
    if (!first_uses_.insert(chunk).second) return;
    if (!prefetch_) {
      const OpId last = gather(chain.last >= 0 ? opgraph::OpIds{chain.last} : opgraph::OpIds{});
      if (last >= 0) chain.last = last;
    } else if (auto it = gathers_.find(chunk); it != gathers_.end()) {
      chain.last = out_.join(rank_, -1, -1, chain.last, it->second);
      gathers_.erase(it);
    }
    emit_param_copy(ctx_, out_, rank_, chunk_params(ctx_, rank_), chain);
  }

  void after_backward_unit(int chunk, OpId last) override { backward_ends_.emplace_back(chunk, last); }

  // Each chunk's reduce-scatter also waits for the backward step grad_reduce_delay_steps after the chunk's last
  // one, or for the rank's last op when fewer steps remain (Megatron launches the rest after its loop).
  std::vector<OpId> reduce_gradients(const std::vector<OpId>& last_backward) override {
    const int delay = grad_reduce_delay_steps(ctx_.in.layout, rank_);
    std::vector<OpId> launch_after(last_backward.size(), -1);
    if (delay > 0 && !backward_ends_.empty()) {
      OpId rank_last = backward_ends_.back().second;
      for (const OpId id : last_backward) rank_last = std::max(rank_last, id);
      for (std::size_t c = 0; c < last_backward.size(); ++c) {
        std::size_t last_step = backward_ends_.size();
        for (std::size_t i = 0; i < backward_ends_.size(); ++i)
          if (backward_ends_[i].first == static_cast<int>(c)) last_step = i;
        if (last_step == backward_ends_.size()) continue;
        const std::size_t launch = last_step + static_cast<std::size_t>(delay);
        launch_after[c] = launch < backward_ends_.size() ? backward_ends_[launch].second : rank_last;
      }
    }
    std::vector<OpId> reduces;
    reduce_scatter_chunks(ctx_, out_, rank_, last_backward, reduces, launch_after);
    return reduces;
  }

  bool shards_optimizer_state() const override { return ctx_.in.layout.distributed_optimizer; }

 private:
  // One chunk's parameter all-gather (the dense side, then the experts), after `deps`.
  OpId gather(opgraph::OpIds deps) {
    return dp_collectives(ctx_, out_, rank_, chunk_params(ctx_, rank_), param_gather_bytes(ctx_.in.layout),
                          comm::Collective::all_gather, "dp_param_allgather", "edp_param_allgather", std::move(deps),
                          -1, -1, Phase::fwd);
  }

  const StepContext& ctx_;
  OpWriter& out_;
  const int rank_;
  const bool prefetch_;
  std::map<int, OpId> gathers_;  // by chunk, the last op of its parameter all-gather, until its first forward joins it
  std::vector<std::pair<int, OpId>> backward_ends_;  // (chunk, last op) of each backward unit, in schedule order
  std::set<int> first_uses_;  // the chunks whose first forward has been emitted (it gathers without the prefetch)
};
}  // namespace

std::unique_ptr<DataParallelStrategy> make_distributed_optimizer(const StepContext& ctx, OpWriter& out, int rank) {
  return std::make_unique<DistributedOptimizer>(ctx, out, rank);
}

}  // namespace moesim::workload
