#pragma once
// Network binding: how the step's simulated GPUs and their collectives become links and flows for the engine.
// comm/ prices a collective per link class (its effective bytes on the scale-up port and on the NIC, see
// comm_costs.hpp); a binding decides which links exist and which path each class's bytes take. One
// implementation per file, registered by name in network_binding.cpp:
//   per-gpu-ports   (binding_per_gpu_ports.cpp) each simulated GPU's own NVLink port and NIC; the default
//   cluster-fabric  (binding_cluster_fabric.cpp) the same two ports plus the leaf-spine fabric of topology's
//                   Cluster graph: placement on racks and rails, oversubscription, ECMP or adaptive routing
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "layout/rank_map.hpp"
#include "topology/system_spec.hpp"
#include "workload/fabric_spec.hpp"
#include "workload/op_graph_names.hpp"
#include "workload/rank_placement.hpp"

namespace moesim::workload {

// Where a binding that routes over the cluster graph finds the job: its ranks, where they run, its stages.
struct FabricSetup {
  const FabricSpec& spec;
  const layout::RankMap& rank_map;
  const RankPlacement& placement;
  int pp = 1;  // pipeline stages: simulated rank r stands for the ranks r*gpus/pp .. (r+1)*gpus/pp - 1
};

struct BindingInputs {
  const topology::SystemSpec& system;
  double scale_up_Bps = 0;              // one GPU's scale-up port, one direction (comm::Fabric's scale_up bandwidth)
  double scale_out_Bps = 0;             // one GPU's NIC(s) together, one direction (comm::Fabric's scale_out bandwidth)
  const FabricSetup* fabric = nullptr;  // required by cluster-fabric; per-gpu-ports needs none
};

// What a collective's bytes are, for a binding that routes them: the parallel dimension whose group moves them and
// the pattern of its scale-out transfers (which peers each member sends to).
enum class TrafficPattern {
  all_to_all,  // every member sends an equal share to each member in another domain (EP dispatch / combine)
  ring,        // NCCL's ring: each member sends its crossing share to the same-index member of the next domain
  send_recv,   // a pipeline send to the same rank of the next stage (the previous one from the last stage)
};
struct Traffic {
  layout::Dim dim = layout::Dim::tp;
  TrafficPattern pattern = TrafficPattern::ring;
};
std::string to_string(const Traffic& t);  // "ep all-to-all", "dp_cp ring", "pp send/recv"

class NetworkBinding {
 public:
  virtual ~NetworkBinding() = default;
  virtual std::string_view name() const = 0;
  // The links of a step whose simulated ranks are named `rank_names` (RankInfo::name, in rank order).
  virtual NetworkModel network(const std::vector<std::string>& rank_names) const = 0;
  // The flows of one member of a collective on `rank` moving these effective bytes per link class (0: none), and
  // those of implied copies that contend with it (op_graph.hpp's rank classes).
  virtual std::vector<Flow> flows(int rank, double scale_up_bytes, double scale_out_bytes,
                                  const Traffic& traffic) const = 0;
  // Lines for the step report on what the binding did with each traffic class it saw (none by default).
  virtual std::vector<std::string> summary() const { return {}; }
};

// The two ports of each simulated GPU (per-gpu-ports' links, which cluster-fabric keeps): rank r's NVLink port is
// link 2r, its NIC link 2r + 1; a member's bytes per link class are one flow on each.
NetworkModel gpu_port_links(const std::vector<std::string>& rank_names, double scale_up_Bps, double scale_out_Bps);
std::vector<Flow> gpu_port_flows(int rank, double scale_up_bytes, double scale_out_bytes);

// The registered binding of that name; InternalError listing the known names otherwise.
std::unique_ptr<NetworkBinding> make_network_binding(std::string_view name, const BindingInputs& inputs);
std::vector<std::string> network_binding_names();
bool is_network_binding(std::string_view name);
// The binding every step uses today.
inline constexpr std::string_view kDefaultNetworkBinding = "per-gpu-ports";

}  // namespace moesim::workload
