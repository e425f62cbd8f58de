#include "estimate/step_lower_bound.hpp"

#include <algorithm>

#include "layout/schedule_counts.hpp"
#include "workload/host_cost_policy.hpp"
#include "workload/layer_costs.hpp"

namespace moesim::estimate {
namespace {

PassCompute pass(const workload::BlockCost& b) { return {b.fwd.seconds, b.dgrad.seconds, b.wgrad.seconds}; }

// What the layer emitter runs on the compute stream for one layer and one micro-batch (layer_emitter.cpp).
PassCompute layer_pass(const workload::LayerCosts& c) {
  PassCompute p;
  for (const auto* b : {&c.attention, &c.pre_dispatch, &c.experts, &c.shared, &c.post_combine}) p += pass(*b);
  p.backward += c.recompute.seconds + c.recompute_experts.seconds;
  return p;
}

}  // namespace

PassCompute& PassCompute::operator+=(const PassCompute& o) {
  forward += o.forward;
  backward += o.backward;
  wgrad += o.wgrad;
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
  // The EP group's placement only shapes the exchange's bytes, not the kernels: any valid shape will do.
  const comm::GroupShape ep{l.ep, l.ep};
  ModelCompute c;
  for (std::int64_t i = 0; i < m.num_layers; ++i) {
    const auto key = std::make_pair(m.is_moe_layer(static_cast<int>(i)), m.window_of_layer(i));
    if (!c.layers.count(key)) c.layers[key] = layer_pass(workload::layer_costs(m, key.first, l, ctx, ep, key.second));
    c.total += c.layers[key].total();
  }
  if (l.mtp > 0) {
    c.mtp_layer = layer_pass(workload::layer_costs(m, m.mtp_layer_is_moe(), l, ctx, ep, 0));
    c.mtp_layer += pass(workload::mtp_extra_cost(m, l, ctx));
    c.total += l.mtp * c.mtp_layer.total();
  }
  const auto embedding = workload::embedding_cost(m, l, ctx);
  c.embedding = {embedding.fwd.seconds, 0, embedding.wgrad.seconds};  // no input gradient to compute
  c.output = pass(workload::output_cost(m, l, ctx));
  c.total += c.embedding.total() + c.output.total();
  return c;
}

double compute_lower_bound(const layout::Layout& l, double model_compute_s) {
  // micro-batches / pp = gbs / (mbs dp pp) = gbs tp cp / (mbs gpus), in real numbers so that one value serves
  // every pp of a search context (equal to num_microbatches() / pp wherever the batch splits).
  return static_cast<double>(l.gbs) * l.tp * l.cp / (static_cast<double>(l.mbs) * l.gpus) * model_compute_s;
}

double split_lower_bound(const model::ModelSpec& m, const layout::Layout& l, const layout::StageAssignment& stages,
                         const ModelCompute& compute) {
  double bound = compute_lower_bound(l, compute.total);
  const auto kind = layout::resolve_schedule(l);
  if (kind != layout::Schedule::one_f_one_b && kind != layout::Schedule::interleaved) return bound;
  const double mb = l.num_microbatches();
  double fill = 0, drain = 0;  // micro-batch 0's forward and the last one's input gradient through ranks < q
  for (int q = 0; q < stages.pp; ++q) {
    PassCompute rank;
    for (int c = 0; c < stages.vpp; ++c) rank += compute.chunk(m, stages.chunk(q, c));
    const PassCompute first = compute.chunk(m, stages.chunk(q, 0));
    bound = std::max(bound, fill + mb * rank.total() - first.wgrad + drain);
    fill += first.forward;
    drain += first.backward;
  }
  return bound;
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
