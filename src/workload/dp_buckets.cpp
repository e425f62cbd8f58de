#include "workload/dp_buckets.hpp"

#include <cmath>

#include "core/error.hpp"

namespace moesim::workload {

BucketPlan::BucketPlan(const std::vector<std::pair<int, memory::LayerShare>>& units, double bucket) : bucket_(bucket) {
  if (!(bucket > 0)) throw InternalError("BucketPlan: bucket size must be positive");
  for (const auto& [key, share] : units) {
    auto& r = ranges_[key];
    const std::array<double, kSides> p{share.dense, share.expert};
    for (std::size_t s = 0; s < kSides; ++s) {
      r[s] = {totals_[s], totals_[s] + p[s]};
      totals_[s] += p[s];
    }
  }
  for (std::size_t s = 0; s < kSides; ++s) {
    const double full = std::floor(totals_[s] / bucket_);
    sizes_[s].assign(static_cast<std::size_t>(full), bucket_);
    if (const double rest = totals_[s] - full * bucket_; rest > 0) sizes_[s].push_back(rest);
  }
}

std::vector<int> BucketPlan::buckets_of(int key, int side) const {
  const auto it = ranges_.find(key);
  if (it == ranges_.end()) return {};
  const auto [begin, end] = it->second[static_cast<std::size_t>(side)];
  if (!(end > begin)) return {};
  const int last_bucket = static_cast<int>(sizes(side).size()) - 1;
  const int first = std::min(last_bucket, static_cast<int>(std::floor(begin / bucket_)));
  const int last = std::min(last_bucket, static_cast<int>(std::ceil(end / bucket_)) - 1);
  std::vector<int> out;
  for (int k = first; k <= last; ++k) out.push_back(k);
  return out;
}

double BucketPlan::end_of(int key, int side) const {
  const auto it = ranges_.find(key);
  return it == ranges_.end() ? 0 : it->second[static_cast<std::size_t>(side)].second;
}

}  // namespace moesim::workload
