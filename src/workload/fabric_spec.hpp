#pragma once
// FabricSpec: how a run puts its traffic on the network — which network binding (network_binding.hpp), and for the
// cluster-fabric binding how spine paths are chosen and where each EP group sits. The defaults are the
// per-gpu-ports binding with Megatron's packed rank placement: the step is built exactly as before this existed.
#include <cstdint>
#include <string>

namespace moesim::workload {

// How flows that cross the spine pick one of their leaf's uplink cables.
enum class SpineRouting {
  adaptive,  // per-packet spraying / adaptive routing (Spectrum-X, Quantum AR): every cable carries an equal share
  ecmp,      // a static per-flow hash (Ethernet ECMP over the flow's 5-tuple): cables can collide
};

// Where the members of each EP group sit on the scale-up domains (NVL72 racks, HGX nodes).
enum class EpPlacement {
  packed,          // Megatron's rank order, ranks filling domains in order: EP groups stay inside a domain if they fit
  across_domains,  // EP groups spread over the pipeline stage's domains, one member per domain where there are
                   // enough; expert-data-parallel groups are packed instead (rank_placement.hpp)
};

struct FabricSpec {
  std::string binding = "per-gpu-ports";  // a registered network binding (network_binding_names())
  SpineRouting routing = SpineRouting::adaptive;
  std::uint64_t seed = 1;  // the ECMP hash's seed: which flows collide
  int flows_per_peer = 1;  // flows (queue pairs) each sender opens to each peer: NCCL's IB_QPS_PER_CONNECTION
                           // default, 1 (NCCL src/transport/net_ib.cc, NCCL_PARAM(IbQpsPerConn, ..., 1))
  EpPlacement ep_placement = EpPlacement::packed;

  // Nothing differs from the per-gpu-ports, packed default.
  bool is_default() const { return binding == "per-gpu-ports" && ep_placement == EpPlacement::packed; }
  // "cluster-fabric, ecmp seed 3, 1 flow per peer, EP across domains" (one line for the report).
  std::string to_string() const;
};

// "adaptive" | "ecmp"; "packed" | "across-domains" (also "in-rack" / "across-racks"). ConfigError naming the flag,
// the text and the accepted values.
SpineRouting parse_spine_routing(const std::string& text);
EpPlacement parse_ep_placement(const std::string& text);
std::string to_string(SpineRouting r);
std::string to_string(EpPlacement p);

}  // namespace moesim::workload
