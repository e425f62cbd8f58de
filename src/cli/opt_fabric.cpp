#include "cli/opt_fabric.hpp"

#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "workload/network_binding.hpp"

namespace moesim::cli {

void add_fabric_flags(CLI::App& sub, FabricFlags& flags) {
  sub.add_option("--fabric", flags.fabric,
                 "Network the step's traffic runs on: ports (default: each GPU's NVLink port and NIC) or cluster "
                 "(the same plus the leaf-spine fabric of the system's cluster graph)");
  sub.add_option("--fabric-routing", flags.routing,
                 "With --fabric cluster: adaptive (default; per-packet spraying, Spectrum-X / Quantum AR) or ecmp "
                 "(a seeded per-flow hash onto a leaf's uplink cables)");
  sub.add_option("--fabric-seed", flags.seed, "Seed of the ECMP hash (default 1): which flows collide");
  sub.add_option("--fabric-flows-per-peer", flags.flows_per_peer,
                 "Flows (queue pairs) per sender and peer for ECMP (default 1, NCCL's IB_QPS_PER_CONNECTION)");
  sub.add_option("--ep-placement", flags.ep_placement,
                 "packed (default: Megatron's rank order, EP groups inside an NVL72 rack / HGX node when they fit) "
                 "or across-domains (alias across-racks: each EP group spread over its stage's domains)");
  sub.add_option("--fabric-oversubscription", flags.oversubscription,
                 "Leaf down:up bandwidth ratio of the system's scale-out fabric (default: the system file's, 1 = "
                 "non-blocking)");
}

void apply_fabric_flags(const FabricFlags& flags, PreparedFlags& p) {
  auto& f = p.options.fabric;
  if (flags.fabric == "ports")
    f.binding = "per-gpu-ports";
  else if (flags.fabric == "cluster")
    f.binding = "cluster-fabric";
  else if (workload::is_network_binding(flags.fabric))
    f.binding = flags.fabric;
  else
    throw ConfigError(
        {{"<flags>", "--fabric",
          "\"" + flags.fabric + "\": expected ports or cluster" + did_you_mean(flags.fabric, {"ports", "cluster"})}});
  f.routing = workload::parse_spine_routing(flags.routing);
  f.seed = flags.seed;
  if (flags.flows_per_peer < 1)
    throw ConfigError({{"<flags>", "--fabric-flows-per-peer", "expected a whole number >= 1"}});
  f.flows_per_peer = flags.flows_per_peer;
  f.ep_placement = workload::parse_ep_placement(flags.ep_placement);
  const bool cluster = f.binding != "per-gpu-ports";
  if (!cluster && (flags.routing != "adaptive" || flags.seed != 1 || flags.flows_per_peer != 1))
    throw ConfigError({{"<flags>", "--fabric-routing", "spine routing needs --fabric cluster"}});
  if (flags.oversubscription) {
    if (!(*flags.oversubscription >= 1))
      throw ConfigError({{"<flags>", "--fabric-oversubscription", "expected a number >= 1"}});
    if (!cluster) throw ConfigError({{"<flags>", "--fabric-oversubscription", "needs --fabric cluster"}});
    p.c.system.scale_out.oversubscription = *flags.oversubscription;
  }
}

}  // namespace moesim::cli
