#include "workload/network_binding.hpp"

#include "core/did_you_mean.hpp"
#include "core/error.hpp"

namespace moesim::workload {

// The bindings, one file each; adding one is its file and one line in each list below.
std::unique_ptr<NetworkBinding> make_per_gpu_ports_binding(const BindingInputs& inputs);  // binding_per_gpu_ports.cpp

namespace {
struct Entry {
  const char* name;
  std::unique_ptr<NetworkBinding> (*make)(const BindingInputs&);
};
const std::vector<Entry>& registry() {
  static const std::vector<Entry> all = {
      {"per-gpu-ports", make_per_gpu_ports_binding},
  };
  return all;
}
}  // namespace

std::vector<std::string> network_binding_names() {
  std::vector<std::string> out;
  for (const auto& e : registry()) out.emplace_back(e.name);
  return out;
}

std::unique_ptr<NetworkBinding> make_network_binding(std::string_view name, const BindingInputs& inputs) {
  for (const auto& e : registry())
    if (name == e.name) return e.make(inputs);
  throw InternalError("unknown network binding \"" + std::string(name) + "\"" +
                      did_you_mean(name, network_binding_names()) + "; known: " + join_names(network_binding_names()));
}

}  // namespace moesim::workload
