// "fsdp" (Layout::fsdp; PyTorch FSDP2). Units are keyed by layer index; the embedding is kEmbeddingUnit, the head
// kHeadUnit. A unit is gathered when it is used while sharded; FSDP2 reshards it after its forward when
// fsdp_reshard_after_forward is set, and after its backward only without PP: torch.distributed.pipelining's stages
// turn off reshard-after-backward and gradient sync on every backward but the step's last
// (PipelineStage.backward_maybe_with_nosync), so with PP the gradients are reduce-scattered per chunk after its
// last backward, like the distributed optimizer's.
#include <algorithm>
#include <map>

#include "workload/dp_strategy.hpp"

namespace moesim::workload {
namespace {
class Fsdp final : public DataParallelStrategy {
 public:
  Fsdp(const StepContext& ctx, OpWriter& out, int rank) : ctx_(ctx), out_(out), rank_(rank) {}

  // Makes `chain` wait for the unit's weights.
  void use(int key, Chain& chain, int mb, Phase phase) override {
    if (const OpId g = gather(key, {}, mb, phase); g >= 0) chain.last = out_.join(rank_, -1, -1, chain.last, g);
  }

  // After a unit's forward (`backward` false) or backward, whose last op is `after`: reshard it as FSDP2 would,
  // and without PP reduce-scatter its gradients.
  void release(int key, bool backward, OpId after, int mb) override {
    if (!backward) {
      if (ctx_.in.layout.fsdp_reshard_after_forward) unsharded_[key] = false;
      return;
    }
    if (!syncs_every_microbatch()) return;
    unsharded_[key] = false;
    const OpId r = dp_collectives(ctx_, out_, rank_, unit(key), grad_reduce_bytes(ctx_.in.layout),
                                  comm::Collective::reduce_scatter, "fsdp_grad_reduce_scatter",
                                  "fsdp_expert_grad_reduce_scatter", {after}, std::max(key, -1), mb, Phase::bwd_wgrad);
    if (r >= 0) last_reduce_ = r;
  }

  // Before layer k of a unit: the next layer's gather is issued now and may start once this layer can (FSDP2
  // keeps one gather in flight ahead of the running layer, and issues a backward layer's prefetch before the
  // running layer's reduce-scatter); this layer waits for its own.
  void before_layer(const std::vector<LayerRun>& layers, std::size_t k, bool forward, Chain& chain) override {
    const Phase phase = forward ? Phase::fwd : Phase::bwd_dgrad;
    const auto& r = layers[k];
    if (k == 0) gather(r.layer, {}, r.mb, phase);
    if (k + 1 < layers.size()) gather(layers[k + 1].layer, {chain.last}, r.mb, phase);
    use(r.layer, chain, r.mb, phase);
  }
  void after_layer(const std::vector<LayerRun>& layers, std::size_t k, bool forward, Chain& chain) override {
    release(layers[k].layer, !forward, chain.last, layers[k].mb);
  }

  std::vector<OpId> reduce_gradients(const std::vector<OpId>& last_backward) override {
    std::vector<OpId> reduces;
    if (last_reduce_ >= 0) reduces.push_back(last_reduce_);  // the DP stream runs them in order
    if (syncs_every_microbatch()) {
      reduces.insert(reduces.end(), last_backward.begin(), last_backward.end());
      return reduces;
    }
    reduce_scatter_chunks(ctx_, out_, rank_, last_backward, reduces);
    return reduces;
  }

  bool shards_optimizer_state() const override { return true; }

 private:
  bool syncs_every_microbatch() const { return ctx_.in.stages.pp == 1; }
  const memory::LayerShare& unit(int key) const {
    const auto& u = ctx_.fsdp_units;
    return key == kEmbeddingUnit ? u.embedding : key == kHeadUnit ? u.head : u.layers.at(static_cast<std::size_t>(key));
  }
  // Gathers the unit on the DP stream (dense side over DP x CP, routed experts over EDP) if it is sharded, after
  // the ops in `gate`, and returns the op its users wait for (the latest gather of the unit; -1 when none).
  OpId gather(int key, opgraph::OpIds gate, int mb, Phase phase) {
    if (unsharded_[key]) return gather_op_.count(key) ? gather_op_[key] : -1;
    unsharded_[key] = true;
    return gather_op_[key] = dp_collectives(
               ctx_, out_, rank_, unit(key), param_gather_bytes(ctx_.in.layout), comm::Collective::all_gather,
               "fsdp_param_allgather", "fsdp_expert_param_allgather", std::move(gate), std::max(key, -1), mb, phase);
  }

  const StepContext& ctx_;
  OpWriter& out_;
  const int rank_;
  std::map<int, bool> unsharded_;  // by unit key, this rank's current state
  std::map<int, OpId> gather_op_;  // by unit key, the latest gather
  OpId last_reduce_ = -1;
};
}  // namespace

std::unique_ptr<DataParallelStrategy> make_fsdp(const StepContext& ctx, OpWriter& out, int rank) {
  return std::make_unique<Fsdp>(ctx, out, rank);
}

}  // namespace moesim::workload
