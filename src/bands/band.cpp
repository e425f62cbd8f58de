#include "bands/band.hpp"

#include <algorithm>
#include <cmath>

#include "core/text.hpp"

namespace moesim::bands {

double Band::time_low(double t) const { return t * std::exp(-hi_log); }
double Band::time_high(double t) const { return t * std::exp(-lo_log); }
double Band::throughput_low(double x) const { return x * std::exp(lo_log); }
double Band::throughput_high(double x) const { return x * std::exp(hi_log); }

std::string Band::basis() const {
  return fixed_decimals(100 * coverage, 0) + " % band from " + std::to_string(rows) +
         " bundled rows sharing at least " + std::to_string(min_matches) + " of " +
         std::to_string(kFeatureNames.size()) + " features";
}

Band band_for(const Features& f, const std::vector<ErrorRow>& rows, const BandOptions& options,
              const std::string& exclude_source) {
  std::vector<std::pair<int, double>> scored;  // (features shared, time log error)
  for (const auto& r : rows)
    if ((exclude_source.empty() || r.source != exclude_source) && std::isfinite(r.time_log_error))
      scored.emplace_back(f.matches(r.features), r.time_log_error);
  Band b;
  b.coverage = options.coverage;
  if (scored.empty()) return b;
  std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& c) { return a.first > c.first; });
  const std::size_t want = std::min(scored.size(), static_cast<std::size_t>(std::max(1, options.neighbours)));
  const int threshold = scored[want - 1].first;
  std::vector<double> e;
  for (const auto& [m, err] : scored)
    if (m >= threshold) e.push_back(err);
  std::sort(e.begin(), e.end());
  const double n = static_cast<double>(e.size());
  const double alpha = 1 - options.coverage;
  const auto lo_rank = static_cast<long>(std::floor((n + 1) * alpha / 2));  // 1-based
  const auto hi_rank = static_cast<long>(std::ceil((n + 1) * (1 - alpha / 2)));
  b.rows = static_cast<int>(e.size());
  b.min_matches = threshold;
  if (lo_rank >= 1) b.lo_log = e[static_cast<std::size_t>(lo_rank - 1)];
  if (hi_rank <= static_cast<long>(e.size())) b.hi_log = e[static_cast<std::size_t>(hi_rank - 1)];
  return b;
}

}  // namespace moesim::bands
