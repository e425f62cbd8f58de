#include "estimate/step_lower_bound.hpp"

#include <algorithm>

#include "core/units.hpp"
#include "layout/schedule_counts.hpp"
#include "opgraph/op_graph.hpp"
#include "workload/host_cost_policy.hpp"
#include "workload/layer_costs.hpp"
#include "workload/step_context.hpp"

namespace moesim::estimate {
namespace {

// The least host time issuing a block can take (host_cost_policy.hpp): none inside a full-iteration graph, else
// its eager issue or, where per-module graphs may capture it, one graph launch, whichever is less (so that the
// bound needs no knowledge of which scope each block belongs to). An empty block is not issued (op_writer.cpp).
double least_issue_s(const workload::HostCostPolicy& host, const workload::Block& b) {
  if (b.kernels == 0 && b.seconds <= 0) return 0;
  opgraph::Op eager, captured;
  host.set_launch(eager, b.kernels, 0, b.host_s);
  host.set_launch(captured, b.kernels, ~0u, b.host_s);
  if (eager.graph_captured || captured.graph_captured) return 0;
  return ps_to_seconds(std::min(eager.launch_cost, captured.launch_cost));
}

// The least time one communication op lasts (op_writer.cpp): nothing when it moves no bytes, else its latency after
// its bytes at each link class's full capacity at the efficiency scale (flows share links max-min fairly; the
// rendezvous, SM sharing and contention only add).
struct LinkRates {
  double nvlink_Bps = 0, nic_Bps = 0;
  double seconds(const workload::LinkDemand& d) const {
    if (d.empty()) return 0;
    return d.latency_s +
           std::max(nvlink_Bps > 0 ? d.nvlink_bytes / nvlink_Bps : 0, nic_Bps > 0 ? d.nic_bytes / nic_Bps : 0);
  }
};

// The least time the compute stream of a layer waits for communication per micro-batch (step_lower_bound.hpp).
// Each term is a gap between two compute ops the layer emitter issues one after the other (workload/
// layer_emitter.cpp; a GPU stream runs its ops in issue order, engine/README.md) where the later one depends,
// through communication only, on the earlier one, less the compute the emitter issues between them. Collectives
// whose first dependency may be outside the layer (the first TP chunk or CP exchange before the attention, a
// recompute's TP collectives, a dense layer's TP collectives before its MLP backward without a recompute), that only
// a deferred weight gradient waits for (the CP exchange of the backward), or that end a layer's forward (a dense
// layer's second SP half) are left out: compute of another unit may run beside them. The expert-TP gathers and
// scatters are left out too: they are serial in the engine, but counting them put the split bound up to 0.4 % over
// the estimate on DeepSeek-V3 interleaved layouts with ETP 2-8 (where the estimate is 8 % under the engine), and
// the search needs the bound under both; they pruned nothing more on the spaces measured.
//
// `paired`: the layer may run as half of a merged forward/backward pair (LayerEmitter::forward_backward_pair: A2A
// overlap's combined 1F1B, DualPipe's F&B pairs), which issues the other micro-batch's blocks between its own. Only
// the gaps between two compute ops that stay adjacent there count: a MoE layer's attention SP collectives (after its
// forward attention, before its backward one), its expert-TP scatter and combine before the forward unpermute, a
// recompute's CP exchange (a dense layer's only when the rerun has a second part) and rerun EP traffic; a
// dense layer's SP halves after its forward attention and before its backward one. Each of these also counts in a
// unit run alone, so the paired waits are at most the unpaired ones and hold for any mix of the two.
struct LayerWaits {
  LinkRates link;
  workload::EpDemands ep;
  workload::CommCostModel comm;
  comm::GroupShape tp, cp;
  // An all-gather or reduce-scatter of `wire_bytes` per GPU over `g`, as StepContext::gather_scatter costs it.
  double collective(comm::Collective op, const comm::GroupShape& g, double wire_bytes) const {
    if (g.ranks <= 1 || wire_bytes <= 0) return 0;
    return link.seconds(comm.nccl(op, g, wire_bytes * g.ranks / (g.ranks - 1)));
  }
  double rs(const comm::GroupShape& g, double bytes) const {
    return collective(comm::Collective::reduce_scatter, g, bytes);
  }
  double ag(const comm::GroupShape& g, double bytes) const {
    return collective(comm::Collective::all_gather, g, bytes);
  }
  static bool runs(const workload::Block& b) { return b.kernels > 0 || b.seconds > 0; }
  // With tp_comm_overlap (`overlap`) an SP collective's first tp-th is serial, the rest hides behind the GEMMs.
  double sp(bool overlap, double bytes) const { return rs(tp, overlap ? bytes / tp.ranks : bytes); }
  double of(const workload::LayerCosts& c, bool overlap, bool paired) const {
    double wait = 0;
    // A recompute's CP exchange after the rerun attention, before the rest of the rerun or the backward (in a pair,
    // a dense layer's next compute op may be the other micro-batch's without a second rerun part).
    // In a pair a MoE layer's next compute op after it is the rerun experts or the unpermute's gradient, where they
    // run (DeepEP and HybridEP have no unpermute op: the other micro-batch's forward comes next).
    const bool next_waits = c.moe ? runs(c.recompute_experts) || runs(c.post_combine.dgrad) : runs(c.recompute_experts);
    if (runs(c.recompute) && (!paired || next_waits)) wait += rs(cp, c.recompute_cp_bytes);
    if (!c.moe) {
      // Forward: the attention's SP half after the attention (serial), or with overlap the MLP half's first chunk
      // after the MLP norm. Backward: the MLP half before the MLP's input gradient (after a recompute only), the
      // attention half before the attention's.
      if (!overlap) wait += rs(tp, c.tp_fwd_bytes / 2);
      if (paired) return wait + (runs(c.pre_dispatch.dgrad) ? sp(overlap, c.tp_bwd_bytes / 2) : 0);
      if (overlap && runs(c.pre_dispatch.fwd)) wait += sp(true, c.tp_fwd_bytes / 2);
      if (runs(c.recompute) || runs(c.recompute_experts)) wait += sp(overlap, c.tp_bwd_bytes / 2);
      if (runs(c.pre_dispatch.dgrad)) wait += sp(overlap, c.tp_bwd_bytes / 2);
      return wait;
    }
    const auto& ep_s = [&](const workload::LinkDemand& d) { return link.seconds(d); };
    // Forward. The attention's SP collectives after it (serial only without overlap). Experts to unpermute: the
    // combine.
    // In a pair only the unpermute waits for the combine (DeepEP and HybridEP have none: the other micro-batch's
    // attention backward comes next); alone the next layer or the heads do too, but a unit's last layer may end
    // with it (PassCompute::edge).
    if (!overlap) wait += rs(tp, c.tp_fwd_bytes);
    if (!paired || runs(c.post_combine.fwd)) wait += ep_s(ep.combine);
    // A recompute that reruns the MoE forward: its dispatch (before the rerun experts) and combine (before the
    // unpermute's gradient, in a pair only where that runs).
    if (c.recompute_redoes_ep)
      wait += ep_s(ep.dispatch) + (!paired || runs(c.post_combine.dgrad) ? ep_s(ep.combine) : 0);
    // Backward. Router to attention: the attention's SP collectives.
    if (runs(c.pre_dispatch.dgrad)) wait += sp(overlap, c.tp_bwd_bytes);
    if (paired) return wait;
    // Unpaired only. Forward router to experts: the dispatch, beside the shared expert with its SP gather and
    // scatter. Backward unpermute to experts: the combine's backward. Experts to router: the dispatch's backward
    // beside the expert weight gradients and the shared expert (after its SP collective).
    const double sh_f = ag(tp, c.shared_tp_fwd_bytes / 2) + rs(tp, c.shared_tp_fwd_bytes / 2);
    wait += std::max(ep_s(ep.dispatch) - c.shared.fwd.seconds, sh_f);
    wait += ep_s(ep.combine_bwd);
    const double beside = c.experts.wgrad.seconds + c.shared.dgrad.seconds + c.shared.wgrad.seconds;
    wait += std::max({0.0, ep_s(ep.dispatch_bwd) - beside, rs(tp, c.shared_tp_bwd_bytes) - c.experts.wgrad.seconds});
    return wait;
  }
  // PassCompute::edge of a layer.
  double edge(const workload::LayerCosts& c) const {
    if (!c.moe) return 0;
    return (runs(c.post_combine.fwd) ? 0 : link.seconds(ep.combine)) +
           (runs(c.post_combine.dgrad) ? 0 : link.seconds(ep.combine_bwd));
  }
};

struct Passes {
  const workload::HostCostPolicy& host;
  const LayerWaits& waits;
  PassCompute of(const workload::BlockCost& b) const {
    return {b.fwd.seconds, b.dgrad.seconds, b.wgrad.seconds,
            least_issue_s(host, b.fwd) + least_issue_s(host, b.dgrad) + least_issue_s(host, b.wgrad)};
  }
  // What the layer emitter runs on the compute stream for one layer and one micro-batch (layer_emitter.cpp).
  PassCompute of(const workload::LayerCosts& c) const {
    PassCompute p;
    for (const auto* b : {&c.attention, &c.pre_dispatch, &c.experts, &c.shared, &c.post_combine}) p += of(*b);
    p.backward += c.recompute.seconds + c.recompute_experts.seconds;
    p.host += least_issue_s(host, c.recompute) + least_issue_s(host, c.recompute_experts);
    for (bool paired : {false, true})
      for (bool overlap : {false, true}) p.wait[paired][overlap] = waits.of(c, overlap, paired);
    p.edge = waits.edge(c);
    return p;
  }
};

}  // namespace

PassCompute& PassCompute::operator+=(const PassCompute& o) {
  forward += o.forward;
  backward += o.backward;
  wgrad += o.wgrad;
  host += o.host;
  for (int p : {0, 1})
    for (int k : {0, 1}) wait[p][k] += o.wait[p][k];
  edge += o.edge;
  return *this;
}

PassCompute ModelCompute::chunk(const model::ModelSpec& m, const layout::ChunkAssignment& ch) const {
  PassCompute p;
  for (int l : ch.layers) p += layers.at({m.is_moe_layer(l), m.window_of_layer(l)});
  for (std::size_t k = 0; k < ch.mtp_layers.size(); ++k) p += mtp_layer;
  if (ch.has_embedding) p += embedding;
  if (ch.has_loss) p += output;
  return p;
}

double ModelCompute::chunk_edge(const model::ModelSpec& m, const layout::ChunkAssignment& ch) const {
  double e = ch.mtp_layers.empty() ? 0 : mtp_layer.edge;
  for (int l : ch.layers) e = std::max(e, layers.at({m.is_moe_layer(l), m.window_of_layer(l)}).edge);
  return e;
}

ModelCompute model_compute(const model::ModelSpec& m, const layout::Layout& l, const topology::SystemSpec& system,
                           const kernels::KernelCostModel& kernels, const workload::StepParams& params) {
  const workload::HostCostPolicy host(system, l, params);
  const workload::CostContext ctx{kernels, workload::device_rates(system.gpu), host.eager()};
  // The groups' placements shape the collectives' bytes, not the kernels. They do not depend on pp (ranks are
  // numbered tp fastest, then cp, and expert ranks etp fastest, then ep, pp slowest: each of these groups lies in a
  // block of consecutive ranks of one stage), so one stage stands in for any.
  layout::Layout one_stage = l;
  one_stage.pp = 1, one_stage.vpp = 1, one_stage.pp_layout.clear();
  const layout::RankMap map(one_stage);
  const auto domain = workload::scale_up_domain(system);
  const auto shape = [&](layout::Dim d, int size) {
    return workload::group_shape(size, layout::placement(map, d, domain).max_domains_per_group);
  };
  const comm::GroupShape ep = shape(layout::Dim::ep, l.ep);
  // One cost per distinct (MoE, attention window) among the layers, and the MTP layer's (full attention).
  std::map<std::pair<bool, std::int64_t>, workload::LayerCosts> costs;
  for (std::int64_t i = 0; i < m.num_layers; ++i) {
    const auto key = std::make_pair(m.is_moe_layer(static_cast<int>(i)), m.window_of_layer(i));
    if (!costs.count(key)) costs[key] = workload::layer_costs(m, key.first, l, ctx, ep, key.second);
  }
  const auto mtp_key = std::make_pair(m.mtp_layer_is_moe(), std::int64_t{0});
  if (l.mtp > 0 && !costs.count(mtp_key)) costs[mtp_key] = workload::layer_costs(m, mtp_key.first, l, ctx, ep, 0);
  LayerWaits waits{
      {system.gpu.nvlink_Bps_per_direction * params.scale_up_efficiency_scale,
       system.scale_out.nic.Bps_per_direction * system.scale_out.nics_per_gpu * params.scale_out_efficiency_scale},
      {},
      workload::comm_cost_model(system),
      shape(layout::Dim::tp, l.tp),
      shape(layout::Dim::cp, l.cp)};
  // Every MoE layer exchanges the same tokens: any MoE layer's problem serves.
  for (const auto& [key, cost] : costs)
    if (key.first && l.ep > 1) {
      waits.ep = workload::ep_demands(waits.comm, l.dispatcher, cost.ep_problem);
      break;
    }
  const Passes passes{host, waits};
  ModelCompute c;
  PassCompute all;
  for (std::int64_t i = 0; i < m.num_layers; ++i) {
    const auto key = std::make_pair(m.is_moe_layer(static_cast<int>(i)), m.window_of_layer(i));
    if (!c.layers.count(key)) c.layers[key] = passes.of(costs.at(key));
    all += c.layers[key];
  }
  if (l.mtp > 0) {
    c.mtp_layer = passes.of(costs.at(mtp_key));
    c.mtp_layer += passes.of(workload::mtp_extra_cost(m, l, ctx));
    for (int k = 0; k < l.mtp; ++k) all += c.mtp_layer;
  }
  auto embedding = workload::embedding_cost(m, l, ctx);
  embedding.dgrad = {};  // the embedding has no input gradient to compute (layer_emitter.cpp runs none)
  c.embedding = passes.of(embedding);
  c.output = passes.of(workload::output_cost(m, l, ctx));
  all += c.embedding;
  all += c.output;
  c.total = all.total();
  c.host_total = all.host;
  c.wait_total = all.wait;
  c.edge_total = all.edge;
  return c;
}

double compute_lower_bound(const layout::Layout& l, double model_compute_s) {
  // micro-batches / pp = gbs / (mbs dp pp) = gbs tp cp / (mbs gpus), in real numbers so that one value serves
  // every pp of a search context (equal to num_microbatches() / pp wherever the batch splits).
  return static_cast<double>(l.gbs) * l.tp * l.cp / (static_cast<double>(l.mbs) * l.gpus) * model_compute_s;
}

bool pairs_units(const layout::Layout& l) {
  return l.a2a_overlap || layout::overlaps_chunk_pairs(layout::resolve_schedule(l));
}

double context_lower_bound(const layout::Layout& l, const ModelCompute& c) {
  const bool paired = pairs_units(l);
  const auto& waits = c.wait_total[paired];
  // Unpaired, any split may have one layer per chunk: no edge wait counts.
  const double wait = std::min(waits[0], waits[1]) - (paired ? 0 : c.edge_total);
  return compute_lower_bound(l, std::max(c.total + wait, c.host_total));
}

double split_lower_bound(const model::ModelSpec& m, const layout::Layout& l, const layout::StageAssignment& stages,
                         const ModelCompute& compute) {
  const bool paired = pairs_units(l);
  const double wait = compute.wait_total[paired][l.tp_comm_overlap] - (paired ? 0 : compute.edge_total);
  double bound = compute_lower_bound(l, std::max(compute.total + wait, compute.host_total));
  const auto kind = layout::resolve_schedule(l);
  if (kind != layout::Schedule::one_f_one_b && kind != layout::Schedule::interleaved) return bound;
  const double mb = l.num_microbatches();
  double fill = 0, drain = 0;  // micro-batch 0's forward and the last one's input gradient through ranks < q
  for (int q = 0; q < stages.pp; ++q) {
    PassCompute rank;
    for (int c = 0; c < stages.vpp; ++c) rank += compute.chunk(m, stages.chunk(q, c));
    const PassCompute first = compute.chunk(m, stages.chunk(q, 0));
    double edges = 0;  // one layer's edge wait per unit (each micro-batch runs each chunk's forward and backward)
    if (!paired)
      for (int c = 0; c < stages.vpp; ++c) edges += compute.chunk_edge(m, stages.chunk(q, c));
    bound = std::max(
        {bound, fill + mb * (rank.serial(paired, l.tp_comm_overlap) - edges) - first.wgrad + drain, mb * rank.host});
    fill += first.forward;
    drain += first.backward;
  }
  return bound;
}

layout::Layout compute_shaping(layout::Layout l) {
  const layout::Layout defaults;
  l.pp = defaults.pp, l.vpp = defaults.vpp, l.pp_layout.clear(), l.schedule = defaults.schedule;
  l.fsdp = defaults.fsdp, l.a2a_overlap = defaults.a2a_overlap, l.tp_comm_overlap = defaults.tp_comm_overlap;
  return l;
}

}  // namespace moesim::estimate
