#pragma once
// Factories of the built-in dispatchers, one per file of this folder; registered in ../dispatcher_registry.cpp.
#include <memory>

#include "comm/expert_dispatcher.hpp"

namespace moesim::comm::dispatchers {

std::unique_ptr<ExpertDispatcher> make_alltoall();
std::unique_ptr<ExpertDispatcher> make_allgather();
std::unique_ptr<ExpertDispatcher> make_deepep();
std::unique_ptr<ExpertDispatcher> make_hybridep();

}  // namespace moesim::comm::dispatchers
