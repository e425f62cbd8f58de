#include "workload/network_binding.hpp"

#include "core/registry.hpp"

namespace moesim::workload {

// The bindings, one file each; adding one is its file, its declaration here and
// one add() line in the register_builtin_ function below.
std::unique_ptr<NetworkBinding> make_per_gpu_ports_binding(const BindingInputs& inputs);  // binding_per_gpu_ports.cpp

namespace {
// The step builder picks the name (kDefaultNetworkBinding), so an unknown one is moesim's bug.
using NetworkBindingRegistry = Registry<std::unique_ptr<NetworkBinding>(const BindingInputs&)>;

void register_builtin_network_bindings(NetworkBindingRegistry& r) {
  r.add("per-gpu-ports", "each GPU's NVLink port and NIC port(s), shared by its concurrent collectives",
        make_per_gpu_ports_binding);
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

std::vector<std::string> network_binding_names() { return registry().names(); }

std::unique_ptr<NetworkBinding> make_network_binding(std::string_view name, const BindingInputs& inputs) {
  return registry().make(name, inputs);
}

}  // namespace moesim::workload
