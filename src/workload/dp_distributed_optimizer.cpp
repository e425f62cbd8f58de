// "distributed-optimizer": Megatron's distributed optimizer with --overlap-param-gather and --overlap-grad-reduce.
// With align_param_gather (prefetches_param_gather) each chunk's parameters are all-gathered from the start of the
// step, overlapped with the first forwards (a chunk's first forward waits for its own gather only); without it the
// chunk's forward pre-hook issues the gather when the chunk's first forward is ready to run (on a later pipeline
// rank: when micro-batch 0 has arrived) and the forward waits for it. Either way the gathered MXFP8 weights are
// then copied out of the gradient buffer on the compute stream (emit_param_copy), and each chunk's gradients are
// reduce-scattered once its last backward is done.
//
// Where Megatron splits a chunk into buckets (buckets_first_chunk: pipeline rank 0's first chunk,
// docs/workload-model.md "Parameter all-gather"), without the prefetch the forward waits for the first bucket's
// gather only, each bucket's wait dispatching the next one (param_and_grad_buffer.py:470-505, finish_param_sync);
// and under the non-interleaved schedule the backward hooks launch each bucket's reduce-scatter as soon as the
// last micro-batch's backward has produced its gradients, so only what is left after the backward stays exposed.
//
// Where the weights are refreshed outside the timed step (gathers_params_in_step off) no gather and no MXFP8 copy
// is emitted; the reduce-scatters stay as above.
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "workload/dp_buckets.hpp"
#include "workload/dp_strategy.hpp"

namespace moesim::workload {
namespace {

// The units of pipeline rank `rank`'s first chunk in the order the backward finishes them, with their parameters
// per GPU scaled so that each side adds up to the chunk's (chunk_params, the figure every other DP op uses). With
// an FP8 parameter buffer the embedding and the output layer (BF16 weights outside Transformer Engine's modules)
// are the plan's tail, merged into the last bucket (dp_buckets.hpp); the layers' norm weights, BF16 too, stay
// with their layers (a few thousand parameters each).
BucketPlan first_chunk_plan(const StepContext& ctx, int rank) {
  const auto& ch = ctx.in.stages.chunk(rank, 0);
  const auto units = memory::unit_params_per_gpu(ctx.in.model, ctx.in.layout);
  const int layers = static_cast<int>(ctx.in.model.num_layers);
  const bool split = fp8_param_buffer(ctx.in.layout);
  BucketPlan::Units order, tail;
  auto& outer = split ? tail : order;  // the embedding and the head
  if (ch.has_loss) outer.emplace_back(kHeadUnit, units.head);
  for (auto t = ch.mtp_layers.rbegin(); t != ch.mtp_layers.rend(); ++t)
    order.emplace_back(layers + *t, units.layers.at(static_cast<std::size_t>(layers + *t)));
  for (auto l = ch.layers.rbegin(); l != ch.layers.rend(); ++l)
    order.emplace_back(*l, units.layers.at(static_cast<std::size_t>(*l)));
  if (ch.has_embedding) outer.emplace_back(kEmbeddingUnit, units.embedding);
  memory::LayerShare sum;
  for (const auto* list : {&order, &tail})
    for (const auto& [key, s] : *list) {
      sum.dense += s.dense;
      sum.expert += s.expert;
    }
  const memory::LayerShare want = chunk_params(ctx, rank);
  for (auto* list : {&order, &tail})
    for (auto& [key, s] : *list) {
      s.dense *= sum.dense > 0 ? want.dense / sum.dense : 0;
      s.expert *= sum.expert > 0 ? want.expert / sum.expert : 0;
    }
  return BucketPlan(order, ddp_bucket_params(ctx.in.layout), tail);
}

memory::LayerShare side_share(int side, double params) {
  return side == 0 ? memory::LayerShare{params, 0} : memory::LayerShare{0, params};
}

class DistributedOptimizer final : public DataParallelStrategy {
 public:
  DistributedOptimizer(const StepContext& ctx, OpWriter& out, int rank)
      : ctx_(ctx),
        out_(out),
        rank_(rank),
        prefetch_(prefetches_param_gather(ctx.in.layout)),
        in_step_(gathers_params_in_step(ctx.in.layout)) {
    if (buckets_first_chunk(ctx.in.layout, rank)) {
      plan_.emplace(first_chunk_plan(ctx, rank));
      hooks_reduce_ = reduces_buckets_from_hooks(ctx.in.layout);
      // Gathered in forward order: the last bucket (the embedding's end of the chunk) first.
      for (int s = 0; s < BucketPlan::kSides; ++s) gathers_by_bucket_[s].assign(plan_->sizes(s).size(), kNotGathered);
    }
  }

  // The schedule walker's rank starts. The buckets act only in a walk: the estimate's probes drive the per-layer
  // hooks of a fresh strategy without one, for a chunk's steady-state time, which the buckets are not part of.
  void begin() override {
    walking_ = true;
    if (!prefetch_ || !in_step_) return;
    for (int c = 0; c < ctx_.in.stages.vpp; ++c) {
      const OpId last = gather(c, {});
      if (last >= 0) gathers_[c] = last;
    }
  }

  // The chunk's first forward (micro-batch 0 in Megatron's orders; DualPipe's second copy starts at m/2) waits for
  // its gather; without the prefetch the gather starts there, after what the forward waited for (its input). A
  // bucketed chunk waits for the buckets its first units use (before_layer does the rest).
  void before_forward_unit(int chunk, int /*mb*/, Chain& chain) override {
    if (!first_uses_.insert(chunk).second || !in_step_) return;
    if (chunk == 0 && gathers_buckets()) {
      wait_for(kEmbeddingUnit, chain);
      emit_param_copy(ctx_, out_, rank_, chunk_params(ctx_, rank_), chain);
      return;
    }
    if (!prefetch_) {
      const OpId last = gather(chunk, chain.last >= 0 ? opgraph::OpIds{chain.last} : opgraph::OpIds{});
      if (last >= 0) chain.last = last;
    } else if (auto it = gathers_.find(chunk); it != gathers_.end()) {
      chain.last = out_.join(rank_, -1, -1, chain.last, it->second);
      gathers_.erase(it);
    }
    emit_param_copy(ctx_, out_, rank_, chunk_params(ctx_, rank_), chain);
  }

  void before_layer(const std::vector<LayerRun>& layers, std::size_t k, bool forward, Chain& chain) override {
    if (forward && gathers_buckets() && layers[k].mb == 0) wait_for(layers[k].layer, chain);
  }
  // The head's forward (loss and MTP heads) comes last in the chunk's forward.
  void use(int key, Chain& chain, int mb, Phase phase) override {
    if (key == kHeadUnit && phase == Phase::fwd && gathers_buckets() && mb == 0) wait_for(key, chain);
  }

  // The last micro-batch's backward of a bucketed chunk: the gradients of this unit are final; every bucket they
  // complete is reduce-scattered now.
  void after_layer(const std::vector<LayerRun>& layers, std::size_t k, bool forward, Chain& chain) override {
    if (!forward && !layers[k].defer_wgrad) unit_done(layers[k].layer, layers[k].mb, chain.last);
  }
  void release(int key, bool backward, OpId after, int mb) override {
    if (backward) unit_done(key, mb, after);
  }

  void after_backward_unit(int chunk, OpId last) override { backward_ends_.emplace_back(chunk, last); }

  // Each chunk's reduce-scatter also waits for the backward step grad_reduce_delay_steps after the chunk's last
  // one, or for the rank's last op when fewer steps remain (Megatron launches the rest after its loop). Without
  // overlap_grad_reduce every chunk's waits for the rank's last backward (finish_grad_sync after the schedule).
  std::vector<OpId> reduce_gradients(const std::vector<OpId>& last_backward) override {
    if (hooks_reduce_ && walking_) return reduce_rest_of_buckets(last_backward);
    const int delay = grad_reduce_delay_steps(ctx_.in.layout, rank_);
    std::vector<OpId> launch_after(last_backward.size(), -1);
    OpId rank_last = backward_ends_.empty() ? -1 : backward_ends_.back().second;
    for (const OpId id : last_backward) rank_last = std::max(rank_last, id);
    if (!ctx_.in.layout.overlap_grad_reduce) {
      std::fill(launch_after.begin(), launch_after.end(), rank_last);
    } else if (delay > 0 && !backward_ends_.empty()) {
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
  bool gathers_buckets() const { return plan_ && walking_ && !prefetch_ && in_step_; }

  // Chunk `chunk`'s parameter all-gather (the dense side, then the experts), after `deps`.
  OpId gather(int chunk, opgraph::OpIds deps) {
    return dp_collectives(ctx_, out_, rank_, chunk_params(ctx_, rank_), param_gather_bytes(ctx_.in.layout),
                          comm::Collective::all_gather, "dp_param_allgather", "edp_param_allgather", std::move(deps),
                          -1, -1, Phase::fwd, wide_params(ctx_, rank_, chunk));
  }

  // Bucket `b` of `side`; its gather moves the tail's parameters (BF16 next to FP8 weights) at their width.
  OpId bucket_collective(int side, int b, comm::Collective op, opgraph::OpIds deps, Phase phase) {
    const auto bi = static_cast<std::size_t>(b);
    const bool gathers = op == comm::Collective::all_gather;
    const auto& l = ctx_.in.layout;
    return dp_collectives(ctx_, out_, rank_, side_share(side, plan_->sizes(side)[bi]),
                          gathers ? param_gather_bytes(l) : grad_reduce_bytes(l), op,
                          gathers ? "dp_param_allgather" : "dp_grad_reduce_scatter",
                          gathers ? "edp_param_allgather" : "edp_grad_reduce_scatter", std::move(deps), -1, -1, phase,
                          gathers && side == 0 ? plan_->tail_params(side)[bi] : 0);
  }

  // Unit `key`'s forward waits for its buckets, highest index (first gathered) first; each bucket's wait
  // dispatches the next one's gather (finish_param_sync), the first bucket of a side is gathered on first use.
  void wait_for(int key, Chain& chain) {
    for (int s = 0; s < BucketPlan::kSides; ++s) {
      auto needed = plan_->buckets_of(key, s);
      std::reverse(needed.begin(), needed.end());
      for (const int b : needed) {
        auto& ops = gathers_by_bucket_[s];
        const auto bi = static_cast<std::size_t>(b);
        if (ops[bi] == kNotGathered)
          ops[bi] = bucket_collective(s, b, comm::Collective::all_gather,
                                      chain.last >= 0 ? opgraph::OpIds{chain.last} : opgraph::OpIds{}, Phase::fwd);
        if (ops[bi] >= 0) chain.last = out_.join(rank_, -1, -1, chain.last, ops[bi]);
        if (b > 0 && ops[bi - 1] == kNotGathered)
          ops[bi - 1] = bucket_collective(s, b - 1, comm::Collective::all_gather,
                                          ops[bi] >= 0 ? opgraph::OpIds{ops[bi]} : opgraph::OpIds{}, Phase::fwd);
      }
    }
  }

  // A unit of the bucketed chunk finished its backward of micro-batch `mb`: on the last micro-batch its gradients
  // are final, and every bucket that now has all of its gradients is reduce-scattered after `after`, lowest index
  // first (register_grad_ready, param_and_grad_buffer.py:469-478: a bucket group's reduce-scatter is issued when
  // its last parameter's gradient is ready, whatever the order).
  void unit_done(int key, int mb, OpId after) {
    if (!hooks_reduce_ || !walking_ || mb != ctx_.in.layout.num_microbatches() - 1) return;
    for (int s = 0; s < BucketPlan::kSides; ++s) {
      auto& left = pending_[static_cast<std::size_t>(s)];
      if (left.empty()) left = plan_->sizes(s);
      const auto shares = plan_->shares_of(key, s);
      for (const auto& [b, params] : shares) left[static_cast<std::size_t>(b)] -= params;
      for (std::size_t b = 0; b < left.size(); ++b) {
        const double size = plan_->sizes(s)[b];
        if (reduced_[s].count(b) || left[b] > size * 1e-9) continue;
        reduce_bucket(s, b, after);
      }
    }
  }

  void reduce_bucket(int side, std::size_t b, OpId after) {
    const OpId r =
        bucket_collective(side, static_cast<int>(b), comm::Collective::reduce_scatter, {after}, Phase::bwd_wgrad);
    if (r >= 0) last_reduce_ = r;
    reduced_[static_cast<std::size_t>(side)].insert(b);
  }

  // After the backward: the buckets no unit completed (rounding, W units) go after the chunk's last backward.
  std::vector<OpId> reduce_rest_of_buckets(const std::vector<OpId>& last_backward) {
    const OpId after = last_backward.empty() ? -1 : last_backward[0];
    for (int s = 0; s < BucketPlan::kSides; ++s)
      for (std::size_t b = 0; b < plan_->sizes(s).size(); ++b)
        if (!reduced_[static_cast<std::size_t>(s)].count(b)) reduce_bucket(s, b, after);
    return {last_reduce_ >= 0 ? last_reduce_ : after};
  }

  const StepContext& ctx_;
  OpWriter& out_;
  const int rank_;
  const bool prefetch_;
  const bool in_step_;           // gathers_params_in_step: the gathers and copies are part of the step
  std::map<int, OpId> gathers_;  // by chunk, the last op of its parameter all-gather, until its first forward joins it
  std::vector<std::pair<int, OpId>> backward_ends_;  // (chunk, last op) of each backward unit, in schedule order
  std::set<int> first_uses_;  // the chunks whose first forward has been emitted (it gathers without the prefetch)
  // The bucketed first chunk (buckets_first_chunk), per side: each bucket's gather op, the
  // parameters whose final gradients are done and how many buckets are reduce-scattered.
  std::optional<BucketPlan> plan_;
  bool hooks_reduce_ = false;  // reduces_buckets_from_hooks: the plan's reduce-scatters start in the backward
  bool walking_ = false;       // begin() was called: the schedule walker drives this strategy
  static constexpr OpId kNotGathered = -2;  // a bucket whose gather is not issued yet (-1: issued, moved nothing)
  std::array<std::vector<OpId>, BucketPlan::kSides> gathers_by_bucket_;
  std::array<std::vector<double>, BucketPlan::kSides> pending_;    // gradients each bucket still waits for
  std::array<std::set<std::size_t>, BucketPlan::kSides> reduced_;  // the buckets reduce-scattered so far
  OpId last_reduce_ = -1;
};
}  // namespace

std::unique_ptr<DataParallelStrategy> make_distributed_optimizer(const StepContext& ctx, OpWriter& out, int rank) {
  return std::make_unique<DistributedOptimizer>(ctx, out, rank);
}

}  // namespace moesim::workload
