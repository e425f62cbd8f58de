#include "comm/expert_dispatcher.hpp"

#include <algorithm>

namespace moesim::comm {

DispatchCost ExpertDispatcher::cost(const DispatchProblem& p, Phase phase, const Fabric& fabric) const {
  DispatchCost c;
  c.volume = volume(p, phase);
  if (p.ep.ranks == 1) return c;
  link_times(p, phase, fabric, c);
  c.bandwidth_s = std::max(c.scale_up_s, c.scale_out_s);
  c.seconds = c.latency_s + c.bandwidth_s;
  return c;
}

}  // namespace moesim::comm
