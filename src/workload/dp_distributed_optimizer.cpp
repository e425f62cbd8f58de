// "distributed-optimizer": Megatron's distributed optimizer with --overlap-param-gather and --overlap-grad-reduce.
// Each chunk's parameters are all-gathered at the start of the step, overlapped with the first forwards (a chunk's
// first forward waits for its own gather only), and its gradients reduce-scattered once its last backward is done.
#include <map>

#include "workload/dp_strategy.hpp"

namespace moesim::workload {
namespace {
class DistributedOptimizer final : public DataParallelStrategy {
 public:
  DistributedOptimizer(const StepContext& ctx, OpWriter& out, int rank) : ctx_(ctx), out_(out), rank_(rank) {}

  void begin() override {
    const memory::LayerShare params = chunk_params(ctx_, rank_);
    for (int c = 0; c < ctx_.in.stages.vpp; ++c) {
      const OpId last =
          dp_collectives(ctx_, out_, rank_, params, param_gather_bytes(ctx_.in.layout), comm::Collective::all_gather,
                         "dp_param_allgather", "edp_param_allgather", {}, -1, -1, Phase::fwd);
      if (last >= 0) gathers_[c] = last;
    }
  }

  // The chunk's first forward (micro-batch 0 in Megatron's orders; DualPipe's second copy starts at m/2) waits for
  // its gather.
  void before_forward_unit(int chunk, int /*mb*/, Chain& chain) override {
    if (auto it = gathers_.find(chunk); it != gathers_.end()) {
      chain.last = out_.join(rank_, -1, -1, chain.last, it->second);
      gathers_.erase(it);
    }
  }

  std::vector<OpId> reduce_gradients(const std::vector<OpId>& last_backward) override {
    std::vector<OpId> reduces;
    reduce_scatter_chunks(ctx_, out_, rank_, last_backward, reduces);
    return reduces;
  }

  bool shards_optimizer_state() const override { return ctx_.in.layout.distributed_optimizer; }

 private:
  const StepContext& ctx_;
  OpWriter& out_;
  const int rank_;
  std::map<int, OpId> gathers_;  // by chunk, the last op of its parameter all-gather, until its first forward joins it
};
}  // namespace

std::unique_ptr<DataParallelStrategy> make_distributed_optimizer(const StepContext& ctx, OpWriter& out, int rank) {
  return std::make_unique<DistributedOptimizer>(ctx, out, rank);
}

}  // namespace moesim::workload
