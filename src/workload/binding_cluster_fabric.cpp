// "cluster-fabric": the per-gpu-ports model (each simulated GPU's NVLink port and NIC, shared max-min fairly by its
// concurrent collectives) plus the leaf-spine fabric of topology's Cluster graph, where the job's GPUs sit on
// racks, rails and leaves (FabricSetup's rank placement) and leaves reach each other through uplink cables whose
// count follows the oversubscription (Cluster::uplinks_per_leaf).
//
// Links: rank r's NVLink port 2r and NIC 2r + 1 (as per-gpu-ports), then its leaf's cables: with `ecmp` one link
// per uplink and per downlink cable (capacity Cluster::uplink_port_Bps each), with `adaptive` one uplink bundle
// and one downlink bundle (the cables together: traffic sprayed evenly over equal cables finishes when a bundle
// of their summed capacity would). The leaf of simulated rank r stands for its stage's busiest leaf of each
// traffic class (fabric_traffic.hpp).
//
// Flows of a collective on rank r: its NVLink and NIC flows (exactly per-gpu-ports'), and, when its class's
// transfers cross the spine, one flow per loaded cable of that leaf carrying every stage member's bytes through
// it (implied copies' flows, op_graph.hpp: the leaf's cables are shared by all of them). A flow's bytes move
// through its NIC and its spine cables concurrently (fluid pipelining), so a collective takes the longer of the
// two; a spine that is not a bottleneck changes nothing (with adaptive routing on a non-blocking fabric, a step
// takes exactly per-gpu-ports' time). Not modelled: a slow cable holding back its sender's NIC flow (the NIC
// flow does not slow down with it), congestion control, packet loss, and the receiving NIC as a link of its own
// (in a symmetric collective each NIC receives what it sends; a hot EP rank's extra receives are the routing
// model's pace).
#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "core/error.hpp"
#include "core/text.hpp"
#include "topology/cluster.hpp"
#include "workload/fabric_traffic.hpp"
#include "workload/network_binding.hpp"

namespace moesim::workload {
namespace {

class ClusterFabric final : public NetworkBinding {
 public:
  explicit ClusterFabric(const BindingInputs& in)
      : setup_(checked(in.fabric)),
        cluster_(topology::build_cluster(in.system, setup_.rank_map.world_size())),
        scale_up_Bps_(in.scale_up_Bps),
        scale_out_Bps_(in.scale_out_Bps),
        ecmp_(setup_.spec.routing == SpineRouting::ecmp),
        cables_(ecmp_ ? cluster_.uplinks_per_leaf() : 1),
        cable_Bps_(ecmp_ ? cluster_.uplink_port_Bps() : cluster_.uplinks_per_leaf() * cluster_.uplink_port_Bps()) {}
  std::string_view name() const override { return "cluster-fabric"; }

  NetworkModel network(const std::vector<std::string>& rank_names) const override {
    NetworkModel n = gpu_port_links(rank_names, scale_up_Bps_, scale_out_Bps_);
    if (static_cast<int>(rank_names.size()) != setup_.pp)
      throw InternalError("cluster-fabric: " + std::to_string(rank_names.size()) + " simulated ranks for " +
                          std::to_string(setup_.pp) + " pipeline stages");
    for (const auto& rank : rank_names)
      for (const char* dir : {".leaf_up", ".leaf_down"})
        for (int k = 0; k < cables_; ++k) {
          n.link_capacity_Bps.push_back(cable_Bps_);
          n.link_names.push_back(rank + dir + (ecmp_ ? std::to_string(k) : std::string()));
        }
    return n;
  }

  std::vector<Flow> flows(int rank, double scale_up_bytes, double scale_out_bytes,
                          const Traffic& traffic) const override {
    std::vector<Flow> out = gpu_port_flows(rank, scale_up_bytes, scale_out_bytes);
    if (scale_out_bytes <= 0) return out;
    const SpineLoads& l = loads(rank, traffic);
    for (std::size_t k = 0; k < l.up.size(); ++k)
      if (l.up[k] > 0) out.push_back({{cable(rank, 0, k)}, scale_out_bytes * l.up[k]});
    for (std::size_t k = 0; k < l.down.size(); ++k)
      if (l.down[k] > 0) out.push_back({{cable(l.down_stage, 1, k)}, scale_out_bytes * l.down[k]});
    return out;
  }

  std::vector<std::string> summary() const override {
    std::vector<std::string> lines;
    const auto& so = cluster_.system().scale_out;
    lines.push_back(setup_.spec.to_string() + "; " + std::to_string(cluster_.num_leaves()) + " leaves, " +
                    std::to_string(cluster_.uplinks_per_leaf()) + " uplinks per leaf at " +
                    fixed_decimals(cluster_.uplink_port_Bps() / 1e9, 0) + " GB/s (oversubscription " +
                    fixed_decimals(so.oversubscription, 2) + ")");
    for (const auto& [key, l] : loads_) {
      if (std::get<0>(key) != 0) continue;  // stage 0 stands for the others
      std::string line = to_string(Traffic{static_cast<layout::Dim>(std::get<1>(key)),
                                           static_cast<TrafficPattern>(std::get<2>(key))}) +
                         ": " + fixed_decimals(100 * l.crossing_share, 0) + " % of NIC bytes cross the spine";
      if (ecmp_ && !l.up.empty())
        line += "; busiest leaf: " + std::to_string(l.flows_on_busiest_leaf) + " flows hashed on " +
                std::to_string(l.up.size()) + " cables, its busiest cable carries " +
                fixed_decimals(*std::max_element(l.up.begin(), l.up.end()), 2) + " NICs' bytes (evenly spread: " +
                fixed_decimals(std::accumulate(l.up.begin(), l.up.end(), 0.0) / static_cast<double>(l.up.size()), 2) +
                ")";
      lines.push_back(line);
    }
    return lines;
  }

 private:
  static const FabricSetup& checked(const FabricSetup* f) {
    if (!f) throw InternalError("the cluster-fabric binding needs the job's FabricSetup");
    return *f;
  }
  LinkId cable(int rank, int direction, std::size_t k) const {
    return 2 * setup_.pp + (2 * rank + direction) * cables_ + static_cast<int>(k);
  }
  const SpineLoads& loads(int rank, const Traffic& t) const {
    const auto key = std::make_tuple(rank, static_cast<int>(t.dim), static_cast<int>(t.pattern));
    const auto it = loads_.find(key);
    if (it != loads_.end()) return it->second;
    const int per_stage = setup_.rank_map.world_size() / setup_.pp;
    SpineLoads l = spine_loads(cluster_, stage_transfers(setup_, cluster_, rank, t), per_stage, setup_.spec.routing,
                               setup_.spec.seed, setup_.spec.flows_per_peer);
    if (!ecmp_ && !l.up.empty()) {  // the cables' equal shares as one share of the bundle
      l.up = {l.up[0] * static_cast<double>(l.up.size())};
      l.down = {l.down[0] * static_cast<double>(l.down.size())};
    }
    return loads_.emplace(key, std::move(l)).first->second;
  }

  const FabricSetup& setup_;
  topology::Cluster cluster_;
  double scale_up_Bps_, scale_out_Bps_;
  bool ecmp_;
  int cables_;
  double cable_Bps_;
  mutable std::map<std::tuple<int, int, int>, SpineLoads> loads_;
};
}  // namespace

std::unique_ptr<NetworkBinding> make_cluster_fabric_binding(const BindingInputs& inputs) {
  return std::make_unique<ClusterFabric>(inputs);
}

}  // namespace moesim::workload
