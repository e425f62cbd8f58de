#pragma once
// Internal: fills SimResult::ranks (busy, exposed, idle per rank and category) from the op timings.
#include "engine/sim_result.hpp"
#include "opgraph/op_graph.hpp"

namespace moesim::engine {

// O(n log n) in the number of ops. `result.ops` and `result.makespan` must be final.
void compute_breakdown(const opgraph::OpGraph& graph, SimResult& result);

}  // namespace moesim::engine
