#pragma once
// The scale options of `run` and `estimate`: the routing model (workload/routing_model.hpp), the capacity factor,
// node-limited routing and stragglers (predict/stragglers.hpp). The search ranks balanced routing.
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/opt_case.hpp"

namespace moesim::cli {

struct RoutingFlags {
  std::string routing = "balanced";
  std::uint64_t seed = 1;
  std::optional<double> capacity_factor;
  int max_nodes = 0;
  std::string stragglers = "none";
  int straggler_ranks = 0;
};

void add_routing_flags(CLI::App& sub, RoutingFlags& flags);

// Parses the flags against the prepared case (the model's expert count; a routing file is read here) and sets
// the options and, for --capacity-factor, the layout's expert_capacity_factor. ConfigError (exit 2) on bad input.
void apply_routing_flags(const RoutingFlags& flags, PreparedFlags& p);

}  // namespace moesim::cli
