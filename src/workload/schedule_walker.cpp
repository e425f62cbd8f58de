#include "workload/schedule_walker.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace moesim::workload {

std::vector<OpId> ScheduleWalker::walk_rank(int rank, DataParallelStrategy& dp, StageInputs& inputs) {
  const auto& stages = ctx_.in.stages;
  const auto units = schedule_.units({stages.pp, stages.vpp, ctx_.in.layout.num_microbatches()}, rank);
  for (const auto& u : units)
    if (u.kind == UnitKind::W)
      throw InternalError("schedule \"" + std::string(schedule_.name()) +
                          "\" issues a separate weight-gradient (W) unit, which the walker does not emit yet");
  std::vector<OpId> last_bwd(static_cast<std::size_t>(stages.vpp), -1);
  if (ctx_.host.full_graph()) out_.graph_launch(rank);
  dp.begin();

  const bool merges = schedule_.merges_forward_backward_pairs() && ctx_.in.model.is_moe();
  std::size_t i = 0;
  while (i < units.size()) {
    const bool pair =
        merges && i + 1 < units.size() && units[i].kind == UnitKind::F && units[i + 1].kind == UnitKind::B;
    if (pair) {
      UnitPlan f{units[i], {}, {}}, b{units[i + 1], {}, {}};
      start_unit(rank, f, dp, inputs);
      start_unit(rank, b, dp, inputs);
      const std::size_t n = std::max(f.layers.size(), b.layers.size());
      for (std::size_t k = 0; k < n; ++k) {
        if (k < f.layers.size()) dp.before_layer(f.layers, k, true, f.chain);
        if (k < b.layers.size()) dp.before_layer(b.layers, k, false, b.chain);
        if (k < f.layers.size() && k < b.layers.size())
          layers_.forward_backward_pair(f.layers[k], b.layers[k]);
        else if (k < f.layers.size())
          layers_.forward(f.layers[k]);
        else
          layers_.backward(b.layers[k]);
        if (k < f.layers.size()) dp.after_layer(f.layers, k, true, f.chain);
        if (k < b.layers.size()) dp.after_layer(b.layers, k, false, b.chain);
      }
      finish_unit(rank, f, dp, inputs, last_bwd);
      finish_unit(rank, b, dp, inputs, last_bwd);
      i += 2;
    } else {
      UnitPlan u{units[i], {}, {}};
      const bool forward = u.unit.forward();
      start_unit(rank, u, dp, inputs);
      for (std::size_t k = 0; k < u.layers.size(); ++k) {
        dp.before_layer(u.layers, k, forward, u.chain);
        forward ? layers_.forward(u.layers[k]) : layers_.backward(u.layers[k]);
        dp.after_layer(u.layers, k, forward, u.chain);
      }
      finish_unit(rank, u, dp, inputs, last_bwd);
      ++i;
    }
  }
  return last_bwd;
}

void ScheduleWalker::deliver(StageInputs& inputs, const StageInputs::Key& key, OpId op) {
  inputs.delivered[key] = op;
  if (auto it = inputs.awaited.find(key); it != inputs.awaited.end()) out_.add_dep(it->second, op);
}

LayerRun ScheduleWalker::layer_run(int rank, int layer, int mb, Chain& chain) const {
  const auto& m = ctx_.in.model;
  const bool moe = layer >= m.num_layers ? m.mtp_layer_is_moe() : m.is_moe_layer(layer);
  return {rank, layer, mb, moe, &ctx_.cost_of(layer), &chain};
}

void ScheduleWalker::start_unit(int rank, UnitPlan& u, DataParallelStrategy& dp, StageInputs& inputs) {
  const auto& ch = ctx_.in.stages.chunk(rank, u.unit.chunk);
  const int mb = u.unit.microbatch;
  const int layers = static_cast<int>(ctx_.in.model.num_layers);
  // Input from the neighbouring virtual stage (sent when that stage finished this micro-batch).
  const int vs = ctx_.virtual_stage(rank, u.unit.chunk);
  const auto key = std::make_tuple(u.unit.kind, vs, mb);
  if (auto it = inputs.delivered.find(key); it != inputs.delivered.end()) {
    u.chain.last = it->second;
  } else if (u.unit.forward() ? vs > 0 : vs + 1 < ctx_.virtual_stages()) {
    // Its sender is on a rank not walked yet: wait on a placeholder that deliver() connects.
    u.chain.last = inputs.awaited[key] = out_.placeholder(rank, mb, u.chain.last);
  }
  if (u.unit.forward()) {
    dp.before_forward_unit(u.unit.chunk, mb, u.chain);
    if (ch.has_embedding) {
      dp.use(kEmbeddingUnit, u.chain, mb, Phase::fwd);
      layers_.embedding_forward(rank, mb, u.chain);
      dp.release(kEmbeddingUnit, false, u.chain.last, mb);
    }
    for (int layer : ch.layers) u.layers.push_back(layer_run(rank, layer, mb, u.chain));
    for (int t : ch.mtp_layers) u.layers.push_back(layer_run(rank, layers + t, mb, u.chain));
    return;
  }
  // FSDP: the head's forward and backward are the unit's two uses (a reshard after the forward means a second
  // gather); the MTP heads share its weights, so it is released after them.
  const bool head = ch.has_loss || !ch.mtp_layers.empty();
  if (head) dp.use(kHeadUnit, u.chain, mb, Phase::fwd);
  layers_.heads_forward(rank, mb, ch, u.chain);
  if (head) {
    dp.release(kHeadUnit, false, u.chain.last, mb);
    dp.use(kHeadUnit, u.chain, mb, Phase::bwd_dgrad);
  }
  layers_.heads_backward(rank, mb, ch, u.chain);
  for (auto it = ch.mtp_layers.rbegin(); it != ch.mtp_layers.rend(); ++it)
    u.layers.push_back(layer_run(rank, layers + *it, mb, u.chain));
  if (head) dp.release(kHeadUnit, true, u.chain.last, mb);
  for (auto it = ch.layers.rbegin(); it != ch.layers.rend(); ++it)
    u.layers.push_back(layer_run(rank, *it, mb, u.chain));
}

void ScheduleWalker::finish_unit(int rank, UnitPlan& u, DataParallelStrategy& dp, StageInputs& inputs,
                                 std::vector<OpId>& last_bwd) {
  const int mb = u.unit.microbatch;
  const int vs = ctx_.virtual_stage(rank, u.unit.chunk);
  if (u.unit.forward()) {
    if (vs + 1 < ctx_.virtual_stages()) {
      deliver(inputs, std::make_tuple(UnitKind::F, vs + 1, mb), pp_send(rank, mb, Phase::fwd, u.chain.last));
    } else {
      // The last stage's forward feeds its own backward directly.
      deliver(inputs, std::make_tuple(UnitKind::B, vs, mb), u.chain.last);
    }
    return;
  }
  if (ctx_.in.stages.chunk(rank, u.unit.chunk).has_embedding) {
    dp.use(kEmbeddingUnit, u.chain, mb, Phase::bwd_wgrad);  // FSDP2's pre-backward gather
    layers_.embedding_wgrad(rank, mb, u.chain);
    dp.release(kEmbeddingUnit, true, u.chain.last, mb);
  }
  if (vs > 0)
    deliver(inputs, std::make_tuple(UnitKind::B, vs - 1, mb), pp_send(rank, mb, Phase::bwd_dgrad, u.chain.last));
  last_bwd[static_cast<std::size_t>(u.unit.chunk)] = u.chain.last;
}

namespace {
// Activations (forward) or their gradients (backward) of one micro-batch between neighbouring stages.
double pp_send_bytes(const StepContext& ctx) {
  const auto& l = ctx.in.layout;
  return 2.0 * ctx.in.model.hidden_size * l.mbs * l.seq / l.cp / (l.uses_sequence_parallel() ? l.tp : 1);
}
// Whether consecutive pipeline ranks sit in different NVLink domains.
bool pp_crosses_domains(const StepContext& ctx) {
  const int pp = ctx.in.stages.pp;
  if (pp <= 1) return false;
  const int stride = ctx.in.layout.gpus / pp;
  return layout::domain_of(0, ctx.domain) != layout::domain_of(stride, ctx.domain) ||
         layout::domain_of(stride - 1, ctx.domain) != layout::domain_of(2 * stride - 1, ctx.domain);
}
}  // namespace

CommSpec pp_send_spec(const StepContext& ctx, Phase phase) {
  const comm::GroupShape pair{2, pp_crosses_domains(ctx) ? 1 : 2};
  return {Stream::pp_comm, "pp", phase == Phase::fwd ? "pp_send_activation" : "pp_send_gradient",
          ctx.comm_model.collective({comm::Collective::send_recv, comm::Algorithm::direct, pair, pp_send_bytes(ctx)})};
}
OpId ScheduleWalker::pp_send(int rank, int mb, Phase phase, OpId after) {
  return out_.comm(rank, pp_send_spec(ctx_, phase), {after}, -1, mb, phase);
}

}  // namespace moesim::workload
