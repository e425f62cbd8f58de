#pragma once
// StepContext: everything the parts of the step builder read, computed once per step from StepInputs and never
// changed after (passed as const&): the host cost policy, the layer costs by layer kind, comm/'s cost model,
// where each parallel dimension's groups sit, the EP exchange's demands and the parameter counts.
#include <cstdint>
#include <map>
#include <utility>

#include "comm/collectives.hpp"
#include "layout/rank_map.hpp"
#include "memory/memory_model.hpp"
#include "workload/comm_costs.hpp"
#include "workload/host_cost_policy.hpp"
#include "workload/layer_costs.hpp"
#include "workload/network_binding.hpp"
#include "workload/op_graph_names.hpp"
#include "workload/rank_placement.hpp"
#include "workload/step_builder.hpp"

namespace moesim::workload {

// Where a parallel dimension's groups sit: how many members share an NVLink domain, how many domains a group spans.
struct GroupPlacement {
  int size = 1;
  int domains = 1;
  layout::Dim dim = layout::Dim::tp;  // whose groups (the network binding routes their traffic by it)
  bool crosses() const { return domains > 1; }
};

// The four EP exchanges of a MoE layer. The forward dispatch moves the dispatch element size; the combine and
// both backward exchanges move BF16. Dispatch-shaped (tokens out to experts): the forward dispatch and the
// backward of the combine; combine-shaped: the forward combine and the backward of the dispatch.
struct EpDemands {
  LinkDemand dispatch, combine, combine_bwd, dispatch_bwd;
};

// The four exchanges of one MoE layer's EP problem with dispatcher `d`.
EpDemands ep_demands(const CommCostModel& comm, layout::Dispatcher d, comm::DispatchProblem p);
// The NVLink domain as the job uses it: its size and the GPUs placed in it (all of them unless the system says
// fewer, as NVL72 jobs use 64 of 72).
layout::ScaleUpDomain scale_up_domain(const topology::SystemSpec& system);
// comm/'s cost model for `system`'s GPUs, NVLink ports and NICs (the capacities the step's links get).
CommCostModel comm_cost_model(const topology::SystemSpec& system);

// One communication op: its stream, trace labels and what comm/ says it costs.
struct CommSpec {
  Stream stream;
  const char* category;
  const char* name;
  LinkDemand demand;  // effective bytes per link class, latency and SMs, from comm/
  Traffic traffic;    // whose group moves the bytes and how (the network binding routes scale-out bytes by it)
};

struct StepContext {
  explicit StepContext(const StepInputs& in);
  StepContext(const StepContext&) = delete;
  StepContext& operator=(const StepContext&) = delete;

  const StepInputs& in;
  kernels::DeviceRates device;
  HostCostPolicy host;
  CostContext cost_context;
  layout::RankMap rank_map;
  FabricSpec fabric_spec;   // the run's (StepInputs::fabric), or the per-gpu-ports, packed default
  RankPlacement placement;  // rank -> GPU (fabric_spec.ep_placement)
  CommCostModel comm_model;
  layout::ScaleUpDomain domain;
  std::map<layout::Dim, GroupPlacement> placements;  // every dimension's, computed once (costly at 8,192 GPUs)
  GroupPlacement dense_dp, expert_dp;  // the data-parallel groups of the dense side (DP x CP) and of the experts
  std::map<std::pair<bool, std::int64_t>, LayerCosts> costs_by_kind;  // by (MoE layer, attention window)
  EpDemands ep;                                                       // every MoE layer's under balanced routing
  // A routing model other than balanced (routing_model.hpp): the most loaded EP rank's costs and exchanges of each
  // MoE layer whose pace is not 1, by layer index (MTP layers num_layers + i), and every MoE layer's loads.
  std::map<int, LayerCosts> routed_costs;
  std::map<int, EpDemands> routed_ep;
  std::vector<RoutedLayer> routing;
  BlockCost embedding, output, mtp_extra;
  memory::MemoryEstimate memory_estimate;  // parameters per GPU per pipeline rank (only the counts are used)
  memory::UnitParams fsdp_units;           // FSDP unit sizes per GPU before sharding (empty without FSDP)

  GroupPlacement placement_of(layout::Dim d) const { return placements.at(d); }
  comm::GroupShape shape_of(const GroupPlacement& g) const { return group_shape(g.size, g.domains); }
  // The costs of decoder layer `layer`, or of an MTP layer (index >= num_layers).
  const LayerCosts& cost_of(int layer) const;
  // The pace of layer `layer`'s most loaded EP rank under the routing model (1: balanced, or not a MoE layer).
  double pace_of(int layer) const;
  // The EP exchanges of MoE layer `layer` (the routed ones' where a routing model paces them).
  const EpDemands& ep_of(int layer) const;
  // An all-gather or reduce-scatter over a group moving `wire_bytes` per GPU (the full size is n/(n-1) x
  // wire_bytes in NCCL's convention), with the algorithm NCCL would pick. `op` reduce_scatter keeps it on a ring
  // (comm/ does not model NVLS reduce-scatter); mixed AG + RS traffic (TP with SP) is priced as reduce-scatter.
  CommSpec gather_scatter(Stream stream, const char* category, const char* name, const GroupPlacement& g,
                          double wire_bytes, comm::Collective op) const;

 private:
  void apply_routing(const RoutingSpec& spec, const comm::GroupShape& ep_shape);
};

}  // namespace moesim::workload
