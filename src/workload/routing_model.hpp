#pragma once
// Per-run routing model: how a MoE layer's token copies spread over its experts, and what that costs the EP rank
// that receives the most (moe-modeling.md §6 "Dropless MoE load imbalance").
//
// Mechanism: the exchange completes when the slowest rank's receives complete, and that rank's grouped GEMM runs
// over the sum of its local experts' tokens, so a layer takes about t_dispatch(max) + t_experts(max) +
// t_combine(max) on every rank (moe-modeling.md §6 "Mechanics"; DeepEP issue #343 measured a 2x dispatch drop
// from intra-host imbalance alone). moesim simulates one rank per pipeline stage (docs/workload-model.md "Rank
// classes"); under a routing model other than `balanced` that rank is the most loaded EP rank of each MoE layer:
// its routed-expert blocks and its four EP exchanges are scaled by `pace` below.
//
// Models (the popularity p_e of each expert in one layer; loads are the expected copies given p, without the
// multinomial noise of a finite micro-batch — pure noise is 1.01 per rank at T = 4096 tokens, §6 "Typical
// magnitudes", so it is left out and `dirichlet:inf` is exactly balanced):
//   balanced        p_e = 1/E (Megatron's --moe-router-force-load-balancing; today's default, nothing changes)
//   dirichlet:A     p ~ Dirichlet(A, ..., A) per layer (imbalance_mc.py's popularity model; A -> inf: balanced)
//   zipf:S          p_e proportional to rank_e^-S, the ranks a seeded random permutation per layer (S = 0: balanced)
//   file:PATH       tokens per expert per layer measured from a router (CSV `layer,expert,tokens`, or JSON
//                   {"layers": {"3": [n_0, ..., n_{E-1}], ...}}); layers the file leaves out stay balanced
// Capacity (Megatron --moe-expert-capacity-factor CF, the layout's expert_capacity_factor): each expert keeps at
// most CF x its balanced share, the rest is dropped (moe_utils.get_capacity); with pad_expert_input_to_capacity
// every expert runs exactly its capacity, so every rank does the same work (pace 1) and only the drops remain.
// Node-limited routing (DeepSeek-V3: a token's experts on at most M nodes, arXiv 2412.19437 §2.1.2): the EP
// exchange's fan-out is computed with group-limited routing, M of the EP group's scale-up domains per token
// (comm::RoutingSpec groups); it changes the bytes that cross domains, not the loads.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace moesim::workload {

struct RoutingSpec {
  enum class Kind { balanced, dirichlet, zipf, file };
  Kind kind = Kind::balanced;
  double concentration = 0;  // Dirichlet alpha or Zipf exponent s
  std::uint64_t seed = 1;
  std::string file;                             // the file of Kind::file (for messages)
  std::map<int, std::vector<double>> measured;  // Kind::file: decoder layer index -> tokens per expert
  int max_nodes = 0;                            // node-limited routing: at most this many domains per token; 0 = off

  // Balanced loads and no node limit: the step is built exactly as without a routing model.
  bool is_balanced() const { return kind == Kind::balanced && max_nodes == 0; }
  std::string to_string() const;
};

// "balanced", "dirichlet:ALPHA", "zipf:S", "file:PATH" (the file is read and checked against `num_experts`).
// ConfigError naming the text and the accepted forms.
RoutingSpec parse_routing_spec(const std::string& text, int num_experts);

// The loads of one MoE layer on its EP group (per micro-batch; in units of token copies relative to a balanced
// rank: a balanced rank receives 1).
struct LayerLoad {
  int layer = 0;                // decoder layer index (MTP layers: num_layers + i)
  double max_over_mean = 1;     // most loaded EP rank / mean, before any drop
  double dropped_fraction = 0;  // share of the layer's token copies dropped by the capacity
  // The most loaded rank's expert work after the capacity, over what layer_costs charges a rank (the balanced
  // routed copies, already scaled by a capacity factor < 1): what its experts and exchanges are multiplied by.
  double pace = 1;
};

// Loads of `layer` under `spec` for E experts on `ep` ranks (experts e*E/ep .. placed contiguously, Megatron's
// local expert order). capacity_factor <= 0: dropless. `pad`: pad every expert to its capacity.
LayerLoad layer_load(const RoutingSpec& spec, int layer, int num_experts, int ep, double capacity_factor, bool pad);

// One routed MoE layer of a built step: its loads and the busy time its most loaded rank adds per micro-batch
// (its routed-expert blocks, forward, backward and recompute, and its EP exchanges at their links' rates, times
// pace - 1). The step-time change can be smaller (overlap) or larger (waits it causes on other ranks).
struct RoutedLayer {
  LayerLoad load;
  double lost_s_per_micro_batch = 0;
};

// The popularity behind layer_load (sums to 1), for tests and reports.
std::vector<double> expert_popularity(const RoutingSpec& spec, int layer, int num_experts);

}  // namespace moesim::workload
