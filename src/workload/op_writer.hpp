#pragma once
// OpWriter: appends the step's ops to its OpGraph — compute blocks, collectives (their bytes bound to links by
// the network binding, their host launch by the host cost policy), zero-time joins and host syncs. It holds
// no schedule state: every op's rank, layer, micro-batch and dependencies are given by the caller.
#include <cstdint>
#include <vector>

#include "workload/host_cost_policy.hpp"
#include "workload/layer_costs.hpp"
#include "workload/network_binding.hpp"
#include "workload/op_graph_names.hpp"
#include "workload/step_context.hpp"
#include "workload/step_params.hpp"

namespace moesim::workload {

// The last op of a dependency chain (-1: none yet); the next op of the chain waits for it.
struct Chain {
  OpId last = -1;
};

class OpWriter {
 public:
  OpWriter(OpGraph& graph, const HostCostPolicy& host, const NetworkBinding& binding, const StepParams& params);

  // A compute block on the compute stream after `chain` (and `extra`); advances the chain. Nothing is emitted
  // for an empty block (the chain's last op is returned).
  OpId compute(int rank, const Block& b, const char* name, Chain& chain, int layer, int mb, Phase phase,
               std::uint32_t graph_scope = 0, opgraph::OpIds extra = {});
  // One member of a collective after `deps`; nothing for an empty demand (then the last dep is returned, or -1).
  OpId comm(int rank, const CommSpec& s, opgraph::OpIds deps, int layer, int mb, Phase phase);
  // A zero-time marker on the compute stream that waits for both `after` (if any) and `other`.
  OpId join(int rank, int layer, int mb, OpId after, OpId other);
  // The CPU waits for `after` (by default the dropless MoE token-count sync).
  OpId host_sync(int rank, int layer, int mb, OpId after, Phase phase, const char* name = "dropless_token_count_sync");
  // A full-iteration CUDA graph's launch on the rank's host thread.
  void graph_launch(int rank);
  // A zero-time marker on the compute stream with no dependency yet: a unit whose input another rank delivers
  // later in the walk waits on it, and add_dep makes it wait for that input once it exists.
  OpId input_marker(int rank, int mb);
  void add_dep(OpId op, OpId must_finish_first) { graph_.add_dep(op, must_finish_first); }
  // `d` as comm() turns it into flows: scaled by the what-if efficiency scales.
  LinkDemand scaled(LinkDemand d) const {
    d.nvlink_bytes /= params_.scale_up_efficiency_scale;
    d.nic_bytes /= params_.scale_out_efficiency_scale;
    return d;
  }

 private:
  Op label_op(int rank, int layer, int mb, Stream stream, OpKind kind, const char* name, const char* category);
  OpGraph& graph_;
  const HostCostPolicy& host_;
  const NetworkBinding& binding_;
  const StepParams& params_;
};

}  // namespace moesim::workload
