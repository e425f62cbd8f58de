#pragma once
// Network binding: how the step's simulated GPUs and their collectives become links and flows for the engine.
// comm/ prices a collective per link class (its effective bytes on the scale-up port and on the NIC, see
// comm_costs.hpp); a binding decides which links exist and which path each class's bytes take. One
// implementation per file, registered by name in network_binding.cpp.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "topology/system_spec.hpp"
#include "workload/op_graph_names.hpp"

namespace moesim::workload {

struct BindingInputs {
  const topology::SystemSpec& system;
  double scale_up_Bps = 0;   // one GPU's scale-up port, one direction (comm::Fabric's scale_up bandwidth)
  double scale_out_Bps = 0;  // one GPU's NIC(s) together, one direction (comm::Fabric's scale_out bandwidth)
};

class NetworkBinding {
 public:
  virtual ~NetworkBinding() = default;
  virtual std::string_view name() const = 0;
  // The links of a step whose simulated ranks are named `rank_names` (RankInfo::name, in rank order).
  virtual NetworkModel network(const std::vector<std::string>& rank_names) const = 0;
  // The flows of one member of a collective on `rank` moving these effective bytes per link class (0: none).
  virtual std::vector<Flow> flows(int rank, double scale_up_bytes, double scale_out_bytes) const = 0;
};

// The registered binding of that name; InternalError listing the known names otherwise.
std::unique_ptr<NetworkBinding> make_network_binding(std::string_view name, const BindingInputs& inputs);
std::vector<std::string> network_binding_names();
// The binding every step uses today.
inline constexpr std::string_view kDefaultNetworkBinding = "per-gpu-ports";

}  // namespace moesim::workload
