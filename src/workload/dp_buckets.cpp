#include "workload/dp_buckets.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace moesim::workload {

BucketPlan::BucketPlan(const Units& units, double bucket, const Units& tail) {
  if (!(bucket > 0)) throw InternalError("BucketPlan: bucket size must be positive");
  std::array<double, kSides> bucketed{};
  auto place = [&](const Units& list) {
    for (const auto& [key, share] : list) {
      auto& r = ranges_[key];
      const std::array<double, kSides> p{share.dense, share.expert};
      for (std::size_t s = 0; s < kSides; ++s) {
        r[s] = {totals_[s], totals_[s] + p[s]};
        totals_[s] += p[s];
      }
    }
  };
  place(units);
  bucketed = totals_;
  place(tail);
  for (std::size_t s = 0; s < kSides; ++s) {
    const double full = std::floor(bucketed[s] / bucket);
    sizes_[s].assign(static_cast<std::size_t>(full), bucket);
    if (const double rest = bucketed[s] - full * bucket; rest > 0) sizes_[s].push_back(rest);
    tail_[s].assign(sizes_[s].size(), 0.0);
    if (const double t = totals_[s] - bucketed[s]; t > 0) {
      if (sizes_[s].empty()) sizes_[s].push_back(0), tail_[s].push_back(0);
      sizes_[s].back() += t;
      tail_[s].back() += t;
    }
    double end = 0;
    for (const double size : sizes_[s]) ends_[s].push_back(end += size);
  }
}

std::vector<std::pair<int, double>> BucketPlan::shares_of(int key, int side) const {
  const auto it = ranges_.find(key);
  if (it == ranges_.end()) return {};
  const auto s = static_cast<std::size_t>(side);
  const auto [begin, end] = it->second[s];
  std::vector<std::pair<int, double>> out;
  double start = 0;
  for (std::size_t b = 0; b < ends_[s].size(); ++b) {
    const double overlap = std::min(end, ends_[s][b]) - std::max(begin, start);
    if (overlap > 0) out.emplace_back(static_cast<int>(b), overlap);
    start = ends_[s][b];
  }
  return out;
}

std::vector<int> BucketPlan::buckets_of(int key, int side) const {
  std::vector<int> out;
  for (const auto& [b, params] : shares_of(key, side)) out.push_back(b);
  return out;
}

}  // namespace moesim::workload
