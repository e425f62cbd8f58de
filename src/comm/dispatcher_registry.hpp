#pragma once
// The MoE token dispatchers by name. Built-in ones are registered explicitly in register_builtin_dispatchers()
// (dispatcher_registry.cpp, one line each); adding a dispatcher is one file in dispatchers/ and one line there
// (plus its factory's declaration in dispatchers/builtin.hpp).
#include <memory>
#include <string>
#include <vector>

#include "comm/expert_dispatcher.hpp"
#include "core/registry.hpp"

namespace moesim::comm {

using ExpertDispatcherRegistry = Registry<std::unique_ptr<ExpertDispatcher>()>;

// Adds alltoall, allgather, deepep and hybridep.
void register_builtin_dispatchers(ExpertDispatcherRegistry& registry);
// A registry holding the built-in dispatchers.
ExpertDispatcherRegistry dispatcher_registry();

// The built-in dispatcher named `name`, made once and shared (dispatchers hold no state). Unknown names are a
// ConfigError with a did-you-mean and the known names.
const ExpertDispatcher& expert_dispatcher(const std::string& name);
// The built-in names, sorted.
std::vector<std::string> dispatcher_names();

}  // namespace moesim::comm
