// The layout names a dispatcher with its own enum; comm/ holds the dispatchers by name. Every name a layout
// accepts must resolve in comm/'s registry (workload::to_comm), to the dispatcher of that name.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "comm/dispatcher_registry.hpp"
#include "layout/layout.hpp"
#include "workload/layer_costs.hpp"

using namespace moesim;

TEST_CASE("every dispatcher a layout can name is a registered comm/ dispatcher") {
  const auto registered = comm::dispatcher_names();
  for (const auto d : {layout::Dispatcher::alltoall, layout::Dispatcher::allgather, layout::Dispatcher::deepep,
                       layout::Dispatcher::hybridep}) {
    const std::string name(layout::to_string(d));
    CAPTURE(name);
    CHECK(std::find(registered.begin(), registered.end(), name) != registered.end());
    CHECK(workload::to_comm(layout::parse_dispatcher(name)).get().name() == name);
  }
}
