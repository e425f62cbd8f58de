#include "comm/fabric.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace moesim::comm {

EfficiencyCurve::EfficiencyCurve(std::vector<EfficiencyPoint> points) : points_(std::move(points)) {
  if (points_.empty()) throw InternalError("efficiency curve without points");
  for (const auto& p : points_)
    if (!(p.message_bytes > 0 && p.efficiency > 0))
      throw InternalError("efficiency point must be positive: " + p.source);
  std::sort(points_.begin(), points_.end(),
            [](const EfficiencyPoint& a, const EfficiencyPoint& b) { return a.message_bytes < b.message_bytes; });
}

double EfficiencyCurve::at(double message_bytes) const {
  if (points_.empty()) return 1.0;
  if (message_bytes <= points_.front().message_bytes) return points_.front().efficiency;
  if (message_bytes >= points_.back().message_bytes) return points_.back().efficiency;
  auto hi = std::upper_bound(points_.begin(), points_.end(), message_bytes,
                             [](double b, const EfficiencyPoint& p) { return b < p.message_bytes; });
  auto lo = hi - 1;
  const double t = (std::log(message_bytes) - std::log(lo->message_bytes)) /
                   (std::log(hi->message_bytes) - std::log(lo->message_bytes));
  return lo->efficiency + t * (hi->efficiency - lo->efficiency);
}

const DispatcherLinkEfficiency& CommEfficiency::dispatcher(const std::string& name) const {
  static const DispatcherLinkEfficiency ideal;
  const auto it = dispatchers.find(name);
  return it == dispatchers.end() ? ideal : it->second;
}

int GroupShape::domains() const { return ranks_per_domain >= ranks ? 1 : ranks / ranks_per_domain; }

void check_group_shape(const GroupShape& g) {
  if (g.ranks < 1 || g.ranks_per_domain < 1)
    throw InternalError("group shape needs ranks >= 1 and ranks_per_domain >= 1");
  if (g.ranks_per_domain < g.ranks && g.ranks % g.ranks_per_domain != 0)
    throw InternalError("group of " + std::to_string(g.ranks) + " ranks does not split into domains of " +
                        std::to_string(g.ranks_per_domain));
}

}  // namespace moesim::comm
