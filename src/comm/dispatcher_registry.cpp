#include "comm/dispatcher_registry.hpp"

#include <map>
#include <memory>

#include "comm/dispatchers/builtin.hpp"

namespace moesim::comm {

void register_builtin_dispatchers(ExpertDispatcherRegistry& r) {
  r.add("alltoall", "Megatron's NCCL all-to-all: one copy per (token, expert) pair", dispatchers::make_alltoall);
  r.add("allgather", "Megatron's all-gather / reduce-scatter of the EP group's tokens", dispatchers::make_allgather);
  r.add("deepep", "DeepEP: hierarchical, deduplicated, FP8 dispatch with FP8 GEMMs", dispatchers::make_deepep);
  r.add("hybridep", "NVIDIA HybridEP: hierarchical, deduplicated, BF16 dispatch", dispatchers::make_hybridep);
}

ExpertDispatcherRegistry dispatcher_registry() {
  ExpertDispatcherRegistry registry("dispatcher");
  register_builtin_dispatchers(registry);
  return registry;
}

const ExpertDispatcher& expert_dispatcher(const std::string& name) {
  static const auto instances = [] {
    std::map<std::string, std::unique_ptr<ExpertDispatcher>> m;
    const auto registry = dispatcher_registry();
    for (const auto& n : registry.names()) m.emplace(n, registry.make(n));
    return m;
  }();
  const auto it = instances.find(name);
  if (it == instances.end()) {
    dispatcher_registry().make(name);  // throws the registry's ConfigError (did-you-mean, known names)
    throw InternalError("dispatcher \"" + name + "\" registered after first use");
  }
  return *it->second;
}

std::vector<std::string> dispatcher_names() { return dispatcher_registry().names(); }

}  // namespace moesim::comm
