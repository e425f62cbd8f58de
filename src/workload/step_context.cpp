#include "workload/step_context.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace moesim::workload {
namespace {
LinkDemand scaled(LinkDemand d, double f) {
  d.nvlink_bytes *= f;
  d.nic_bytes *= f;
  return d;
}

// The most loaded EP rank's share of a MoE layer (routing_model.hpp): its routed experts' GPU time (forward,
// backward, a recompute that reruns them) and its four exchanges' bytes times `pace`; latencies and host time stay.
LayerCosts paced_costs(LayerCosts c, double pace) {
  for (Block* b : {&c.experts.fwd, &c.experts.dgrad, &c.experts.wgrad}) b->seconds *= pace;
  if (c.recompute_redoes_experts) c.recompute_experts.seconds *= pace;
  c.etp_bytes *= pace;
  return c;
}

EpDemands paced_demands(const EpDemands& e, double pace) {
  return {scaled(e.dispatch, pace), scaled(e.combine, pace), scaled(e.combine_bwd, pace), scaled(e.dispatch_bwd, pace)};
}

// Busy time of one micro-batch of a MoE layer on its rank that scales with the routed load: the routed experts'
// blocks and the EP exchanges' transfer time on the GPU's links (the larger of NVLink and NIC per exchange).
double routed_busy_s(const LayerCosts& c, const EpDemands& e, double nvlink_Bps, double nic_Bps) {
  double s = c.experts.fwd.seconds + c.experts.dgrad.seconds + c.experts.wgrad.seconds;
  if (c.recompute_redoes_experts) s += c.recompute_experts.seconds;
  const auto xfer = [&](const LinkDemand& d) {
    return std::max(nvlink_Bps > 0 ? d.nvlink_bytes / nvlink_Bps : 0, nic_Bps > 0 ? d.nic_bytes / nic_Bps : 0);
  };
  const int exchanges = c.recompute_redoes_ep ? 2 : 1;  // a recompute that reruns the MoE forward exchanges again
  s += exchanges * (xfer(e.dispatch) + xfer(e.combine)) + xfer(e.combine_bwd) + xfer(e.dispatch_bwd);
  return s;
}
}  // namespace

EpDemands ep_demands(const CommCostModel& comm, layout::Dispatcher dispatcher, comm::DispatchProblem p) {
  const auto d = to_comm(dispatcher);
  EpDemands e;
  e.dispatch = comm.dispatch(d, p, comm::Phase::dispatch);
  // Only the forward dispatch (and a recompute's rerun of it) lays out a new exchange; the three others reuse its
  // handle (comm/expert_dispatcher.hpp forward_dispatch_host_s).
  e.dispatch.host_s = d.get().forward_dispatch_host_s(p.ep.ranks > 1 && !p.ep.single_domain());
  e.combine = comm.dispatch(d, p, comm::Phase::combine);
  p.dispatch_bytes_per_element = p.combine_bytes_per_element;
  e.combine_bwd = comm.dispatch(d, p, comm::Phase::dispatch);
  e.dispatch_bwd = comm.dispatch(d, p, comm::Phase::combine);
  return e;
}

layout::ScaleUpDomain scale_up_domain(const topology::SystemSpec& system) {
  const auto& up = system.scale_up;
  return {up.domain_size, up.gpus_used_per_domain > 0 ? up.gpus_used_per_domain : up.domain_size};
}

CommCostModel comm_cost_model(const topology::SystemSpec& system) {
  const auto arch = device_rates(system.gpu).arch;
  const double nvlink = system.gpu.nvlink_Bps_per_direction;
  const double nic = system.scale_out.nic.Bps_per_direction * system.scale_out.nics_per_gpu;
  // assumption: a scale-up domain of more than 8 GPUs is a multi-node NVLink rack (NVL72)
  const bool large_domain = system.scale_up.domain_size > 8;
  // Building the model fits the measured efficiency curves, which a search did once per candidate and per bound
  // (15 % of its bounding time): kept per thread (parallel_for's workers live for one call) and distinct inputs,
  // copied out.
  thread_local std::map<std::tuple<int, double, double, bool>, CommCostModel> built;
  const auto key = std::make_tuple(static_cast<int>(arch), nvlink, nic, large_domain);
  auto it = built.find(key);
  if (it == built.end()) it = built.emplace(key, CommCostModel(arch, nvlink, nic, large_domain)).first;
  return it->second;
}

StepContext::StepContext(const StepInputs& inputs)
    : in(inputs),
      device(device_rates(inputs.system.gpu)),
      host(inputs.system, inputs.layout, inputs.params),
      cost_context{inputs.kernels, device, host.eager()},
      rank_map(inputs.layout),
      fabric_spec(inputs.fabric ? *inputs.fabric : FabricSpec{}),
      placement(inputs.layout, fabric_spec.ep_placement),
      comm_model(inputs.layout.nccl_nvls ? comm_cost_model(inputs.system)
                                         : comm_cost_model(inputs.system).without_nvls()) {
  const auto& l = inputs.layout;
  const auto& m = inputs.model;
  domain = scale_up_domain(inputs.system);
  for (const auto d : layout::all_dims()) {
    const auto p = place_dim(rank_map, d, domain, placement);
    placements[d] = GroupPlacement{p.group_size, p.max_domains_per_group, d};
  }
  dense_dp = placement_of(layout::Dim::dp_cp);
  expert_dp = placement_of(layout::Dim::edp);
  const auto ep_shape = shape_of(placement_of(layout::Dim::ep));
  // One cost per distinct (MLP kind, attention window) among the layers; MTP layers use full attention.
  for (std::int64_t i = 0; i < m.num_layers; ++i) {
    const auto key = std::make_pair(m.is_moe_layer(static_cast<int>(i)), m.window_of_layer(i));
    if (!costs_by_kind.count(key))
      costs_by_kind[key] = layer_costs(m, key.first, l, cost_context, ep_shape, key.second);
  }
  const auto mtp_key = std::make_pair(m.mtp_layer_is_moe(), std::int64_t{0});
  if (!costs_by_kind.count(mtp_key))
    costs_by_kind[mtp_key] = layer_costs(m, mtp_key.first, l, cost_context, ep_shape, 0);
  // The EP exchange is the same for every MoE layer: cost its four directions once.
  for (const auto& [key, c] : costs_by_kind)
    if (key.first && l.ep > 1) ep = ep_demands(comm_model, l.dispatcher, c.ep_problem);  // EP 1: no exchange
  // A dispatcher's host figure (comm/dispatchers/) is used as measured on every CPU: most of it is the count
  // exchange's round trip over the GPUs, and the host model's own per-op figures make Grace no faster than x86
  // (Grace's measured torch op, 37.1 us, against x86's 13.5 us times x86_host_factor), so no CPU ratio applies.
  if (inputs.routing && !inputs.routing->is_balanced() && m.is_moe()) apply_routing(*inputs.routing, ep_shape);
  // FSDP units: each decoder and MTP layer, the input embedding, and the output head (with the final norm),
  // as TorchTitan and NeMo AutoModel wrap them.
  if (l.fsdp) fsdp_units = memory::unit_params_per_gpu(m, l);
  embedding = embedding_cost(m, l, cost_context);
  output = output_cost(m, l, cost_context);
  mtp_extra = mtp_extra_cost(m, l, cost_context);
  memory_estimate = inputs.memory ? *inputs.memory : memory::estimate_memory(m, l, inputs.stages, 1e30);
}

void StepContext::apply_routing(const RoutingSpec& spec, const comm::GroupShape& ep_shape) {
  const auto& l = in.layout;
  const auto& m = in.model;
  // Node-limited routing: a token's experts on at most max_nodes of the EP group's domains (comm/'s group-limited
  // fan-out). Only the exchange's bytes change, for every MoE layer alike.
  if (spec.max_nodes > 0 && l.ep > 1 && ep_shape.domains() > spec.max_nodes) {
    for (const auto& [key, c] : costs_by_kind) {
      if (!key.first) continue;
      auto p = c.ep_problem;
      p.routing.groups = ep_shape.domains();
      p.routing.groups_selected = spec.max_nodes;
      ep = ep_demands(comm_model, l.dispatcher, p);
    }
  }
  const int E = static_cast<int>(m.moe.num_experts);
  const double cf = l.expert_capacity_factor.value_or(0);
  const auto& fabric = comm_model.fabric();
  std::vector<int> moe_layers;
  for (int i = 0; i < m.num_layers; ++i)
    if (m.is_moe_layer(i)) moe_layers.push_back(i);
  if (m.mtp_layer_is_moe())
    for (int i = 0; i < l.mtp; ++i) moe_layers.push_back(m.num_layers + i);
  for (const int layer : moe_layers) {
    const LayerLoad load = layer_load(spec, layer, E, l.ep, cf, l.pad_expert_input_to_capacity);
    const LayerCosts& base = cost_of(layer);
    const double busy = routed_busy_s(base, ep, fabric.scale_up.bandwidth_Bps, fabric.scale_out.bandwidth_Bps);
    routing.push_back({load, (load.pace - 1) * busy});
    if (load.pace == 1) continue;
    routed_costs.emplace(layer, paced_costs(base, load.pace));
    routed_ep.emplace(layer, paced_demands(ep, load.pace));
  }
}

double StepContext::pace_of(int layer) const {
  for (const auto& r : routing)
    if (r.load.layer == layer) return r.load.pace;
  return 1;
}

const EpDemands& StepContext::ep_of(int layer) const {
  const auto it = routed_ep.find(layer);
  return it == routed_ep.end() ? ep : it->second;
}

const LayerCosts& StepContext::cost_of(int layer) const {
  if (!routed_costs.empty())
    if (const auto it = routed_costs.find(layer); it != routed_costs.end()) return it->second;
  const auto& m = in.model;
  if (layer >= m.num_layers) return costs_by_kind.at({m.mtp_layer_is_moe(), 0});
  return costs_by_kind.at({m.is_moe_layer(layer), m.window_of_layer(layer)});
}

CommSpec StepContext::gather_scatter(Stream stream, const char* category, const char* name, const GroupPlacement& g,
                                     double wire_bytes, comm::Collective op) const {
  const auto shape = shape_of(g);
  const double full = shape.ranks > 1 ? wire_bytes * shape.ranks / (shape.ranks - 1) : 0;
  return {stream, category, name, comm_model.nccl(op, shape, full), {g.dim, TrafficPattern::ring}};
}

}  // namespace moesim::workload
