#pragma once
// Chrome trace / Perfetto JSON of a simulated step: one process per simulated GPU, one thread per stream,
// every op a complete ("X") event with its layer, micro-batch and phase in args.
#include <iosfwd>

#include "engine/sim_result.hpp"
#include "opgraph/op_graph.hpp"

namespace moesim::report {

void write_chrome_trace(std::ostream& out, const opgraph::OpGraph& graph, const engine::SimResult& result);

}  // namespace moesim::report
