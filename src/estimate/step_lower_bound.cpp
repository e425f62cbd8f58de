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

// The least time the compute stream of a MoE layer waits for its EP exchanges per micro-batch without A2A overlap
// (step_lower_bound.hpp): each exchange at its link classes' full capacity, less the compute the layer emitter runs
// beside it.
struct ExchangeWait {
  workload::EpDemands demands;
  double nvlink_Bps = 0, nic_Bps = 0;
  double seconds(const workload::LinkDemand& d) const {
    return std::max(nvlink_Bps > 0 ? d.nvlink_bytes / nvlink_Bps : 0, nic_Bps > 0 ? d.nic_bytes / nic_Bps : 0);
  }
  double of(const workload::LayerCosts& c) const {
    if (!c.moe) return 0;
    const auto& e = demands;
    double wait = seconds(e.combine) + std::max(0.0, seconds(e.dispatch) - c.shared.fwd.seconds);
    wait += seconds(e.combine_bwd) + std::max(0.0, seconds(e.dispatch_bwd) - c.experts.wgrad.seconds -
                                                       c.shared.dgrad.seconds - c.shared.wgrad.seconds);
    if (c.recompute_redoes_ep) wait += seconds(e.dispatch) + seconds(e.combine);
    return wait;
  }
};

struct Passes {
  const workload::HostCostPolicy& host;
  const ExchangeWait& exchange;
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
    p.exchange = exchange.of(c);
    return p;
  }
};

}  // namespace

PassCompute& PassCompute::operator+=(const PassCompute& o) {
  forward += o.forward;
  backward += o.backward;
  wgrad += o.wgrad;
  host += o.host;
  exchange += o.exchange;
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

ModelCompute model_compute(const model::ModelSpec& m, const layout::Layout& l, const topology::SystemSpec& system,
                           const kernels::KernelCostModel& kernels, const workload::StepParams& params) {
  const workload::HostCostPolicy host(system, l, params);
  const workload::CostContext ctx{kernels, workload::device_rates(system.gpu), host.eager()};
  // The EP group's placement shapes the exchange's bytes, not the kernels. It does not depend on pp (expert ranks
  // are numbered etp fastest, then ep: a group spans etp x ep consecutive ranks), so one stage stands in for any.
  layout::Layout one_stage = l;
  one_stage.pp = 1, one_stage.vpp = 1, one_stage.pp_layout.clear();
  const comm::GroupShape ep = workload::group_shape(
      l.ep, layout::placement(layout::RankMap(one_stage), layout::Dim::ep, workload::scale_up_domain(system))
                .max_domains_per_group);
  // One cost per distinct (MoE, attention window) among the layers, and the MTP layer's (full attention).
  std::map<std::pair<bool, std::int64_t>, workload::LayerCosts> costs;
  for (std::int64_t i = 0; i < m.num_layers; ++i) {
    const auto key = std::make_pair(m.is_moe_layer(static_cast<int>(i)), m.window_of_layer(i));
    if (!costs.count(key)) costs[key] = workload::layer_costs(m, key.first, l, ctx, ep, key.second);
  }
  const auto mtp_key = std::make_pair(m.mtp_layer_is_moe(), std::int64_t{0});
  if (l.mtp > 0 && !costs.count(mtp_key)) costs[mtp_key] = workload::layer_costs(m, mtp_key.first, l, ctx, ep, 0);
  ExchangeWait exchange{
      {},
      system.gpu.nvlink_Bps_per_direction * params.scale_up_efficiency_scale,
      system.scale_out.nic.Bps_per_direction * system.scale_out.nics_per_gpu * params.scale_out_efficiency_scale};
  // Every MoE layer exchanges the same tokens: any MoE layer's problem serves.
  for (const auto& [key, cost] : costs)
    if (key.first && l.ep > 1) {
      exchange.demands = workload::ep_demands(workload::comm_cost_model(system), l.dispatcher, cost.ep_problem);
      break;
    }
  const Passes passes{host, exchange};
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
  c.exchange_total = all.exchange;
  return c;
}

double compute_lower_bound(const layout::Layout& l, double model_compute_s) {
  // micro-batches / pp = gbs / (mbs dp pp) = gbs tp cp / (mbs gpus), in real numbers so that one value serves
  // every pp of a search context (equal to num_microbatches() / pp wherever the batch splits).
  return static_cast<double>(l.gbs) * l.tp * l.cp / (static_cast<double>(l.mbs) * l.gpus) * model_compute_s;
}

double context_lower_bound(const layout::Layout& l, const ModelCompute& c) {
  return compute_lower_bound(l, std::max(c.total + (l.a2a_overlap ? 0 : c.exchange_total), c.host_total));
}

double split_lower_bound(const model::ModelSpec& m, const layout::Layout& l, const layout::StageAssignment& stages,
                         const ModelCompute& compute) {
  double bound = context_lower_bound(l, compute);
  const auto kind = layout::resolve_schedule(l);
  if (kind != layout::Schedule::one_f_one_b && kind != layout::Schedule::interleaved) return bound;
  const double mb = l.num_microbatches();
  double fill = 0, drain = 0;  // micro-batch 0's forward and the last one's input gradient through ranks < q
  for (int q = 0; q < stages.pp; ++q) {
    PassCompute rank;
    for (int c = 0; c < stages.vpp; ++c) rank += compute.chunk(m, stages.chunk(q, c));
    const PassCompute first = compute.chunk(m, stages.chunk(q, 0));
    bound = std::max({bound, fill + mb * rank.serial(l.a2a_overlap) - first.wgrad + drain, mb * rank.host});
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
