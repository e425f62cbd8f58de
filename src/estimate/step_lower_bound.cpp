#include "estimate/step_lower_bound.hpp"

#include <map>
#include <utility>

#include "workload/host_cost_policy.hpp"
#include "workload/layer_costs.hpp"

namespace moesim::estimate {
namespace {

double seconds(const workload::BlockCost& b) { return b.fwd.seconds + b.dgrad.seconds + b.wgrad.seconds; }

// What the layer emitter runs on the compute stream for one layer and one micro-batch (layer_emitter.cpp).
double layer_seconds(const workload::LayerCosts& c) {
  return seconds(c.attention) + seconds(c.pre_dispatch) + seconds(c.experts) + seconds(c.shared) +
         seconds(c.post_combine) + c.recompute.seconds + c.recompute_experts.seconds;
}

}  // namespace

double model_compute_seconds(const model::ModelSpec& m, const layout::Layout& l, const topology::SystemSpec& system,
                             const kernels::KernelCostModel& kernels, const workload::StepParams& params) {
  const workload::HostCostPolicy host(system, l, params);
  const workload::CostContext ctx{kernels, workload::device_rates(system.gpu), host.eager()};
  // The EP group's placement only shapes the exchange's bytes, not the kernels: any valid shape will do.
  const comm::GroupShape ep{l.ep, l.ep};
  std::map<std::pair<bool, std::int64_t>, double> by_kind;
  auto layer = [&](bool moe, std::int64_t window) {
    const auto key = std::make_pair(moe, window);
    auto it = by_kind.find(key);
    if (it == by_kind.end())
      it = by_kind.emplace(key, layer_seconds(workload::layer_costs(m, moe, l, ctx, ep, window))).first;
    return it->second;
  };
  double s = 0;
  for (std::int64_t i = 0; i < m.num_layers; ++i) s += layer(m.is_moe_layer(static_cast<int>(i)), m.window_of_layer(i));
  if (l.mtp > 0) s += l.mtp * (layer(m.mtp_layer_is_moe(), 0) + seconds(workload::mtp_extra_cost(m, l, ctx)));
  const auto embedding = workload::embedding_cost(m, l, ctx);
  s += embedding.fwd.seconds + embedding.wgrad.seconds + seconds(workload::output_cost(m, l, ctx));
  return s;
}

double compute_lower_bound(const layout::Layout& l, double model_compute_s) {
  return l.num_microbatches() * model_compute_s / l.pp;
}

layout::Layout compute_shaping(layout::Layout l) {
  const layout::Layout defaults;
  l.pp = defaults.pp, l.vpp = defaults.vpp, l.pp_layout.clear(), l.schedule = defaults.schedule;
  l.fsdp = defaults.fsdp, l.a2a_overlap = defaults.a2a_overlap, l.tp_comm_overlap = defaults.tp_comm_overlap;
  if (l.grouped_gemm != layout::GroupedGemm::auto_) l.cuda_graph = defaults.cuda_graph;
  l.cuda_graph_scopes = defaults.cuda_graph_scopes;
  return l;
}

}  // namespace moesim::estimate
