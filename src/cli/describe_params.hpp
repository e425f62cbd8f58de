#pragma once
// moesim describe --params: every general parameter with its value, unit, source and whether it was fitted --
// the step parameters (data/params/step_params.json), the roofline kernel constants
// (kernels-sim/data/efficiency/builtin.json) and, with --system, that system's and its GPU's calibration figures
// (topologies/). Text or JSON.
#include <string>

#include "cli/context.hpp"

namespace moesim::cli {

void print_params(Context& ctx, bool json, const std::string& system);

}  // namespace moesim::cli
