#pragma once
// Simulator: plays an OpGraph on a NetworkModel and returns when every op ran (SimResult).
//
// Semantics (see README.md for the full story and its limits):
// - Time is integer picoseconds; events are ordered by (time, sequence), so a run is bit-for-bit
//   deterministic. The step starts at t = 0 with every host idle.
// - Host: each rank's host thread walks the rank's ops in id (issue) order. A GPU-stream op costs its
//   launch_cost there (0 if graph_captured) and is "issued" when that launch ends; the host does not wait for
//   GPU work except at host ops (host_sync, or delay on the host stream), which run once their deps are done.
// - GPU streams run their ops in id order, one at a time: an op starts when it is issued, its deps are done
//   and the op ahead of it on the stream has ended.
// - compute ops progress at rate (SMs - held)/SMs, where `held` is the SMs of the communication kernels
//   running on the same GPU at that moment (at least one SM is left); re-timed whenever `held` changes. With
//   shares_sms = false they run at full rate. The SM model uses exact integer arithmetic (work in SM*ps).
// - A collective member starts when ready on its stream and holds its collective's sm_count SMs until the
//   collective ends. When all members are ready (rendezvous) the flows start; they share links max-min
//   fairly (FlowSolver); the collective ends `latency` after its last flow (at rendezvous + latency if it
//   has no flows), and so do all its member ops.
// - delay ops take their fixed duration; nothing slows them.
#include "engine/sim_result.hpp"
#include "opgraph/op_graph.hpp"

namespace moesim::engine {

struct SimOptions {
  bool check_invariants = true;  // run OpGraph::check_invariants first (O(n)); a graph known sound may skip it
  // Fill SimResult::ranks (busy, exposed and idle time per rank and category). A caller that reads only the op
  // timings (the estimate's probes, predict::step_breakdown) may skip it: it sorts every op's interval.
  bool rank_times = true;
};

class Simulator {
 public:
  explicit Simulator(SimOptions options = {}) : options_(options) {}
  // Throws InternalError if the graph breaks an invariant (see OpGraph::check_invariants) or, should that
  // check have been skipped, if the run deadlocks (the message lists the blocked stream heads).
  SimResult run(const opgraph::OpGraph& graph, const opgraph::NetworkModel& network) const;

 private:
  SimOptions options_;
};

}  // namespace moesim::engine
