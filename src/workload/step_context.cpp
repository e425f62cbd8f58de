#include "workload/step_context.hpp"

namespace moesim::workload {
namespace {
EpDemands ep_demands(const CommCostModel& comm, layout::Dispatcher dispatcher, comm::DispatchProblem p) {
  const auto d = to_comm(dispatcher);
  EpDemands e;
  e.dispatch = comm.dispatch(d, p, comm::Phase::dispatch);
  e.combine = comm.dispatch(d, p, comm::Phase::combine);
  p.dispatch_bytes_per_element = p.combine_bytes_per_element;
  e.combine_bwd = comm.dispatch(d, p, comm::Phase::dispatch);
  e.dispatch_bwd = comm.dispatch(d, p, comm::Phase::combine);
  return e;
}
}  // namespace

StepContext::StepContext(const StepInputs& inputs)
    : in(inputs),
      device(device_rates(inputs.system.gpu)),
      host(inputs.system, inputs.layout, inputs.params),
      cost_context{inputs.kernels, device, host.eager()},
      rank_map(inputs.layout),
      comm_model(device.arch, inputs.system.gpu.nvlink_Bps_per_direction,
                 inputs.system.scale_out.nic.Bps_per_direction * inputs.system.scale_out.nics_per_gpu,
                 // assumption: a scale-up domain of more than 8 GPUs is a multi-node NVLink rack (NVL72)
                 inputs.system.scale_up.domain_size > 8) {
  const auto& l = inputs.layout;
  const auto& m = inputs.model;
  const auto& up = inputs.system.scale_up;
  domain = {up.domain_size, up.gpus_used_per_domain > 0 ? up.gpus_used_per_domain : up.domain_size};
  for (const auto d : layout::all_dims()) {
    const auto p = layout::placement(rank_map, d, domain);
    placements[d] = GroupPlacement{p.group_size, p.max_domains_per_group};
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
  // FSDP units: each decoder and MTP layer, the input embedding, and the output head (with the final norm),
  // as TorchTitan and NeMo AutoModel wrap them.
  if (l.fsdp) fsdp_units = memory::unit_params_per_gpu(m, l);
  embedding = embedding_cost(m, l, cost_context);
  output = output_cost(m, l, cost_context);
  mtp_extra = mtp_extra_cost(m, l, cost_context);
  memory_estimate = inputs.memory ? *inputs.memory : memory::estimate_memory(m, l, inputs.stages, 1e30);
}

const LayerCosts& StepContext::cost_of(int layer) const {
  const auto& m = in.model;
  if (layer >= m.num_layers) return costs_by_kind.at({m.mtp_layer_is_moe(), 0});
  return costs_by_kind.at({m.is_moe_layer(layer), m.window_of_layer(layer)});
}

CommSpec StepContext::gather_scatter(Stream stream, const char* category, const char* name, const GroupPlacement& g,
                                     double wire_bytes, comm::Collective op) const {
  const auto shape = shape_of(g);
  const double full = shape.ranks > 1 ? wire_bytes * shape.ranks / (shape.ranks - 1) : 0;
  return {stream, category, name, comm_model.nccl(op, shape, full)};
}

}  // namespace moesim::workload
