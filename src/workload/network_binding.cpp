#include "workload/network_binding.hpp"

#include "core/registry.hpp"

namespace moesim::workload {

// The bindings, one file each; adding one is its file, its declaration here and
// one add() line in the register_builtin_ function below.
std::unique_ptr<NetworkBinding> make_per_gpu_ports_binding(const BindingInputs& inputs);   // binding_per_gpu_ports.cpp
std::unique_ptr<NetworkBinding> make_cluster_fabric_binding(const BindingInputs& inputs);  // binding_cluster_fabric.cpp

namespace {
// The step builder picks the name (kDefaultNetworkBinding), so an unknown one is moesim's bug.
using NetworkBindingRegistry = Registry<std::unique_ptr<NetworkBinding>(const BindingInputs&)>;

void register_builtin_network_bindings(NetworkBindingRegistry& r) {
  r.add("per-gpu-ports", "each GPU's NVLink port and NIC port(s), shared by its concurrent collectives",
        make_per_gpu_ports_binding);
  r.add("cluster-fabric",
        "the GPU ports plus the cluster graph's leaf-spine fabric: rack and rail placement, oversubscription, "
        "ECMP or adaptive spine routing",
        make_cluster_fabric_binding);
}

const NetworkBindingRegistry& registry() {
  static const NetworkBindingRegistry all = [] {
    NetworkBindingRegistry r("network binding", UnknownName::internal_error);
    register_builtin_network_bindings(r);
    return r;
  }();
  return all;
}
}  // namespace

NetworkModel gpu_port_links(const std::vector<std::string>& rank_names, double scale_up_Bps, double scale_out_Bps) {
  NetworkModel n;
  for (const auto& rank : rank_names) {
    n.link_capacity_Bps.push_back(scale_up_Bps);
    n.link_names.push_back(rank + ".nvlink");
    n.link_capacity_Bps.push_back(scale_out_Bps);
    n.link_names.push_back(rank + ".nic");
  }
  return n;
}

std::vector<Flow> gpu_port_flows(int rank, double scale_up_bytes, double scale_out_bytes) {
  std::vector<Flow> out;
  if (scale_up_bytes > 0) out.push_back({{2 * rank}, scale_up_bytes});
  if (scale_out_bytes > 0) out.push_back({{2 * rank + 1}, scale_out_bytes});
  return out;
}

std::vector<std::string> network_binding_names() { return registry().names(); }
bool is_network_binding(std::string_view name) { return registry().contains(name); }

std::string to_string(const Traffic& t) {
  const char* pattern = t.pattern == TrafficPattern::all_to_all ? " all-to-all"
                        : t.pattern == TrafficPattern::ring     ? " ring"
                                                                : " send/recv";
  return std::string(layout::to_string(t.dim)) + pattern;
}

std::unique_ptr<NetworkBinding> make_network_binding(std::string_view name, const BindingInputs& inputs) {
  return registry().make(name, inputs);
}

}  // namespace moesim::workload
