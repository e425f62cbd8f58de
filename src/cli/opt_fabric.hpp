#pragma once
// The fabric options of `run` (workload/fabric_spec.hpp): which network binding plays the step's traffic, how
// spine paths are chosen, and where EP groups sit. The defaults build the step exactly as without them.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/opt_case.hpp"

namespace moesim::cli {

struct FabricFlags {
  std::string fabric = "ports";  // ports (per-gpu-ports) | cluster (cluster-fabric) | a binding's registered name
  std::string routing = "adaptive";
  std::uint64_t seed = 1;
  int flows_per_peer = 1;
  std::string ep_placement = "packed";
  std::optional<double> oversubscription;
};

void add_fabric_flags(CLI::App& sub, FabricFlags& flags);

// Sets the prediction's FabricSpec (and, for --fabric-oversubscription, the system's); ConfigError (exit 2) naming
// the flag on bad input.
void apply_fabric_flags(const FabricFlags& flags, PreparedFlags& p);

}  // namespace moesim::cli
