#include "cli/opt_routing.hpp"

#include "core/error.hpp"

namespace moesim::cli {

void add_routing_flags(CLI::App& sub, RoutingFlags& flags) {
  sub.add_option("--routing", flags.routing,
                 "Routing model: balanced (default, forced balance), dirichlet:ALPHA, zipf:S or file:PATH (CSV "
                 "layer,expert,tokens or JSON {\"layers\": {\"L\": [...]}}); the most loaded EP rank paces each MoE "
                 "layer");
  sub.add_option("--routing-seed", flags.seed, "Seed of dirichlet / zipf popularity (default 1)");
  sub.add_option("--capacity-factor", flags.capacity_factor,
                 "Expert capacity factor (Megatron --moe-expert-capacity-factor): tokens above it are dropped");
  sub.add_option("--routing-max-nodes", flags.max_nodes,
                 "Node-limited routing: a token's experts on at most this many NVLink domains (DeepSeek-V3: 4)");
  sub.add_option("--stragglers", flags.stragglers,
                 "Rank jitter: none (default), gaussian:CV or lognormal:CV; the step waits for the slowest rank");
  sub.add_option("--straggler-ranks", flags.straggler_ranks, "Ranks that wait for each other (default: all GPUs)");
}

void apply_routing_flags(const RoutingFlags& flags, PreparedFlags& p) {
  if (flags.capacity_factor) {
    if (!(*flags.capacity_factor > 0)) throw ConfigError({{"<flags>", "--capacity-factor", "expected a number > 0"}});
    p.c.layout.expert_capacity_factor = *flags.capacity_factor;
  }
  if (flags.max_nodes < 0) throw ConfigError({{"<flags>", "--routing-max-nodes", "expected a number >= 0"}});
  if (flags.straggler_ranks < 0) throw ConfigError({{"<flags>", "--straggler-ranks", "expected a number >= 0"}});
  const int experts = static_cast<int>(p.c.model.moe.num_experts);
  if (flags.routing != "balanced" && experts == 0)
    throw ConfigError({{"<flags>", "--routing", "model " + p.c.model.name + " has no experts to route to"}});
  p.options.routing = workload::parse_routing_spec(flags.routing, experts);
  p.options.routing.seed = flags.seed;
  p.options.routing.max_nodes = flags.max_nodes;
  p.options.stragglers = predict::parse_straggler_spec(flags.stragglers);
  p.options.stragglers.ranks = flags.straggler_ranks;
}

}  // namespace moesim::cli
