#include "estimate/pipeline_formulas.hpp"

#include <algorithm>

#include "layout/schedule_counts.hpp"

namespace moesim::estimate {

double steady_unit(const PipelineShape& shape, const RankUnits& u) {
  if (shape.merged && u.pair > 0) return u.pair;
  return u.steady > 0 ? u.steady : u.fwd + u.bwd;
}

PipelineTimes pipeline_times(const PipelineShape& s, const std::vector<RankUnits>& ranks) {
  double slowest = 0, sum = 0, busiest = 0;
  const double m = s.microbatches, pp = s.pp, v = s.vpp;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const auto& u = ranks[r];
    slowest = std::max(slowest, steady_unit(s, u));
    sum += u.fwd + u.bwd;
    if (s.merged && u.pair > 0) {
      const double units = m * v;
      const double w = std::min<double>(units, layout::warmup_forwards(s.pp, s.vpp, static_cast<int>(r), true));
      const double unmerged = u.steady > 0 ? u.steady : u.fwd + u.bwd;
      busiest = std::max(busiest, (w * unmerged + (units - w) * u.pair) / v);
    } else {
      busiest = std::max(busiest, m * steady_unit(s, u));
    }
  }
  const double hops = 2 * (pp - 1) * s.p2p_s;
  PipelineTimes t;
  if (s.merged)
    t.makespan = busiest + (pp - 1) / v * (sum / pp) + hops;
  else
    t.makespan = s.vpp <= 1 ? sum + hops + (m - 1) * slowest : m * slowest + (pp - 1) / v * (sum / pp) + hops;
  double drain = 0;
  for (const auto& u : ranks) {
    t.last_backward_end.push_back(t.makespan - drain);
    drain += u.bwd / v + s.p2p_s;
  }
  return t;
}

}  // namespace moesim::estimate
