#pragma once
// step_breakdown: one simulated rank's step time as disjoint shares — compute, optimizer, exposed communication
// by group (ep, tp, cp, pp, dp, in that order: time a group is busy while nothing before it runs), then idle
// time split into host (idle while a GPU op that was otherwise ready waited for its launch) and bubble (the
// rest: pipeline fill and drain, waits for other ranks). Used by run's report and by estimate's layer probes.
#include <map>
#include <string>

#include "engine/sim_result.hpp"
#include "opgraph/op_graph.hpp"

namespace moesim::predict {

// Shares of `makespan_s` on `rank`; the values add up to makespan_s.
std::map<std::string, double> step_breakdown(const opgraph::OpGraph& g, const engine::SimResult& result, int rank,
                                             double makespan_s);

}  // namespace moesim::predict
