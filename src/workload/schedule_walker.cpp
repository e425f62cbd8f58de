#include "workload/schedule_walker.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"

namespace moesim::workload {

namespace {
// Megatron's device synchronisation after each batched pipeline exchange (layout batch_p2p_sync): the host waits for
// the exchange before it issues the next unit (torch.cuda.synchronize() waits for every stream; modelled as a wait
// on the exchange's own chain, which on 1F1B holds nearly all of it). Batched exchanges are the non-interleaved
// schedule's (layout.hpp); a captured full-iteration graph holds no host synchronisation.
bool syncs_after_exchange(const StepContext& ctx) {
  return ctx.in.layout.batch_p2p_sync && ctx.in.stages.vpp == 1 && !ctx.host.full_graph();
}
constexpr const char* kExchangeSync = "pp_p2p_sync";
}  // namespace

OpId StageInputs::take(const Key& key, OpWriter& out, int rank, int mb) {
  if (const auto it = ready_.find(key); it != ready_.end()) return it->second;
  const OpId marker = out.input_marker(rank, mb);
  waiting_[key].push_back(marker);
  return marker;
}

void StageInputs::deliver(const Key& key, OpId op, OpWriter& out) {
  ready_[key] = op;
  const auto it = waiting_.find(key);
  if (it == waiting_.end()) return;
  for (OpId marker : it->second) out.add_dep(marker, op);
  waiting_.erase(it);
}

void StageInputs::check_all_delivered() const {
  if (waiting_.empty()) return;
  const auto& [kind, stage, mb] = waiting_.begin()->first;
  throw InternalError(std::string("pipeline schedule: no unit delivers the input of ") +
                      (kind == UnitKind::F ? "forward" : "backward") + " of stage " + std::to_string(stage) +
                      ", micro-batch " + std::to_string(mb));
}

std::vector<OpId> ScheduleWalker::walk_rank(int rank, DataParallelStrategy& dp, StageInputs& inputs) {
  const auto& stages = ctx_.in.stages;
  const auto units = schedule_.units({stages.pp, stages.vpp, ctx_.in.layout.num_microbatches()}, rank);
  std::set<std::pair<int, int>> deferred;  // (chunk, micro-batch) with a W unit
  for (const auto& u : units)
    if (u.kind == UnitKind::W) deferred.insert({u.chunk, u.microbatch});
  backward_end_.clear();
  std::vector<OpId> last_bwd(static_cast<std::size_t>(stages.vpp), -1);
  if (ctx_.host.full_graph()) out_.graph_launch(rank);
  dp.begin();

  const bool moe = ctx_.in.model.is_moe();
  auto plan = [&](const ScheduleUnit& u) {
    return UnitPlan{u, {}, {}, u.kind == UnitKind::B && deferred.count({u.chunk, u.microbatch}) > 0};
  };
  std::size_t i = 0;
  while (i < units.size()) {
    const ScheduleUnit& u = units[i];
    if (u.kind == UnitKind::W) {
      weight_unit(rank, u, dp, last_bwd);
      ++i;
      continue;
    }
    const bool pair = moe && u.paired && i + 1 < units.size() && units[i + 1].kind == UnitKind::B;
    if (pair) {
      UnitPlan f = plan(u), b = plan(units[i + 1]);
      start_unit(rank, f, dp, inputs);
      start_unit(rank, b, dp, inputs);
      emit_pair(rank, f, b, dp);
      finish_unit(rank, f, dp, inputs, last_bwd);
      finish_unit(rank, b, dp, inputs, last_bwd);
      i += 2;
    } else {
      UnitPlan one = plan(u);
      start_unit(rank, one, dp, inputs);
      emit_single(one, dp);
      finish_unit(rank, one, dp, inputs, last_bwd);
      ++i;
    }
  }
  return last_bwd;
}

void ScheduleWalker::emit_pair(int /*rank*/, UnitPlan& f, UnitPlan& b, DataParallelStrategy& dp) {
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
}

void ScheduleWalker::emit_single(UnitPlan& u, DataParallelStrategy& dp) {
  const bool forward = u.unit.forward();
  for (std::size_t k = 0; k < u.layers.size(); ++k) {
    dp.before_layer(u.layers, k, forward, u.chain);
    forward ? layers_.forward(u.layers[k]) : layers_.backward(u.layers[k]);
    dp.after_layer(u.layers, k, forward, u.chain);
  }
}

// A W unit: the weight gradients its B left out, after that B — the heads' (loss, MTP), then each layer's in
// backward order, then the embedding's. Weight gradients need no weights, so no DP gather precedes them; FSDP's
// embedding use/release, which the B would have made around the embedding's wgrad, move here with it.
void ScheduleWalker::weight_unit(int rank, const ScheduleUnit& unit, DataParallelStrategy& dp,
                                 std::vector<OpId>& last_bwd) {
  const auto it = backward_end_.find({unit.chunk, unit.microbatch});
  if (it == backward_end_.end())
    throw InternalError("schedule \"" + std::string(schedule_.name()) + "\" issues W" + std::to_string(unit.chunk) +
                        "." + std::to_string(unit.microbatch) + " before its backward");
  Chain chain{it->second};
  const auto& ch = ctx_.in.stages.chunk(rank, unit.chunk);
  const int mb = unit.microbatch;
  const int layers = static_cast<int>(ctx_.in.model.num_layers);
  layers_.heads_wgrad(rank, mb, ch, chain);
  for (auto m = ch.mtp_layers.rbegin(); m != ch.mtp_layers.rend(); ++m)
    layers_.weight_gradients(layer_run(rank, layers + *m, mb, chain, true));
  for (auto l = ch.layers.rbegin(); l != ch.layers.rend(); ++l)
    layers_.weight_gradients(layer_run(rank, *l, mb, chain, true));
  if (ch.has_embedding) {
    dp.use(kEmbeddingUnit, chain, mb, Phase::bwd_wgrad);
    layers_.embedding_wgrad(rank, mb, chain);
    dp.release(kEmbeddingUnit, true, chain.last, mb);
  }
  last_bwd[static_cast<std::size_t>(unit.chunk)] = chain.last;
}

LayerRun ScheduleWalker::layer_run(int rank, int layer, int mb, Chain& chain, bool defer_wgrad) const {
  const auto& m = ctx_.in.model;
  const bool moe = layer >= m.num_layers ? m.mtp_layer_is_moe() : m.is_moe_layer(layer);
  return {rank, layer, mb, moe, &ctx_.cost_of(layer), &chain, defer_wgrad};
}

StageInputs::Key ScheduleWalker::key_of(UnitKind kind, int rank, int chunk, int mb) const {
  const auto& s = ctx_.in.stages;
  return {kind, layout::stage_across_copies(s.placement, s.pp, s.vpp, rank, chunk), mb};
}

std::optional<layout::StageSlot> ScheduleWalker::neighbour(int rank, int chunk, int step) const {
  const auto& s = ctx_.in.stages;
  return layout::neighbour_slot(s.placement, s.pp, s.vpp, rank, chunk, step);
}

void ScheduleWalker::start_unit(int rank, UnitPlan& u, DataParallelStrategy& dp, StageInputs& inputs) {
  const auto& ch = ctx_.in.stages.chunk(rank, u.unit.chunk);
  const int mb = u.unit.microbatch;
  const int layers = static_cast<int>(ctx_.in.model.num_layers);
  // Input from the neighbouring stage (sent when that stage finished this micro-batch).
  // The first stage's forward has no input (its embedding reads the data).
  const bool first_forward = u.unit.forward() && !neighbour(rank, u.unit.chunk, -1);
  if (!first_forward) {
    u.chain.last = inputs.take(key_of(u.unit.kind, rank, u.unit.chunk, mb), out_, rank, mb);
    // A received input (the last stage's backward takes its own forward's): the host waits for the exchange.
    const auto from = neighbour(rank, u.unit.chunk, u.unit.forward() ? -1 : +1);
    if (syncs_after_exchange(ctx_) && from && from->rank != rank)
      out_.host_sync(rank, -1, mb, u.chain.last, u.unit.forward() ? Phase::fwd : Phase::bwd_dgrad, kExchangeSync);
  }
  if (u.unit.forward()) {
    dp.before_forward_unit(u.unit.chunk, mb, u.chain);
    if (ch.has_embedding) {
      dp.use(kEmbeddingUnit, u.chain, mb, Phase::fwd);
      layers_.embedding_forward(rank, mb, u.chain);
      dp.release(kEmbeddingUnit, false, u.chain.last, mb);
    }
    for (int layer : ch.layers) u.layers.push_back(layer_run(rank, layer, mb, u.chain, false));
    for (int t : ch.mtp_layers) u.layers.push_back(layer_run(rank, layers + t, mb, u.chain, false));
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
  layers_.heads_backward(rank, mb, ch, u.chain, u.defer_wgrad);
  for (auto it = ch.mtp_layers.rbegin(); it != ch.mtp_layers.rend(); ++it)
    u.layers.push_back(layer_run(rank, layers + *it, mb, u.chain, u.defer_wgrad));
  if (head) dp.release(kHeadUnit, true, u.chain.last, mb);
  for (auto it = ch.layers.rbegin(); it != ch.layers.rend(); ++it)
    u.layers.push_back(layer_run(rank, *it, mb, u.chain, u.defer_wgrad));
}

void ScheduleWalker::finish_unit(int rank, UnitPlan& u, DataParallelStrategy& dp, StageInputs& inputs,
                                 std::vector<OpId>& last_bwd) {
  const int mb = u.unit.microbatch;
  const int chunk = u.unit.chunk;
  if (u.unit.forward()) {
    if (const auto next = neighbour(rank, chunk, +1)) {
      const layout::StageSlot at = *next;
      // A stage on another rank gets the activations by a send; the V's turn stays on this rank.
      const OpId out = at.rank != rank ? pp_send(rank, mb, Phase::fwd, u.chain.last) : u.chain.last;
      inputs.deliver(key_of(UnitKind::F, at.rank, at.chunk, mb), out, out_);
    } else {
      // The last stage's forward feeds its own backward directly.
      inputs.deliver(key_of(UnitKind::B, rank, chunk, mb), u.chain.last, out_);
    }
    return;
  }
  if (!u.defer_wgrad && ctx_.in.stages.chunk(rank, chunk).has_embedding) {
    dp.use(kEmbeddingUnit, u.chain, mb, Phase::bwd_wgrad);  // FSDP2's pre-backward gather
    layers_.embedding_wgrad(rank, mb, u.chain);
    dp.release(kEmbeddingUnit, true, u.chain.last, mb);
  }
  if (const auto prev = neighbour(rank, chunk, -1)) {
    const layout::StageSlot at = *prev;
    const OpId out = at.rank != rank ? pp_send(rank, mb, Phase::bwd_dgrad, u.chain.last) : u.chain.last;
    inputs.deliver(key_of(UnitKind::B, at.rank, at.chunk, mb), out, out_);
  }
  if (u.defer_wgrad)
    backward_end_[{chunk, mb}] = u.chain.last;
  else
    last_bwd[static_cast<std::size_t>(chunk)] = u.chain.last;
  dp.after_backward_unit(chunk, u.chain.last);
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
  return {Stream::pp_comm,
          "pp",
          phase == Phase::fwd ? "pp_send_activation" : "pp_send_gradient",
          ctx.comm_model.collective({comm::Collective::send_recv, comm::Algorithm::direct, pair, pp_send_bytes(ctx)}),
          {layout::Dim::pp, TrafficPattern::send_recv}};
}
OpId ScheduleWalker::pp_send(int rank, int mb, Phase phase, OpId after) {
  const OpId send = out_.comm(rank, pp_send_spec(ctx_, phase), {after}, -1, mb, phase);
  if (syncs_after_exchange(ctx_)) out_.host_sync(rank, -1, mb, send, phase, kExchangeSync);
  return send;
}

}  // namespace moesim::workload
