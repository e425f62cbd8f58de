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
  std::string s = fixed_decimals(100 * coverage, 0) + " % band from " + std::to_string(rows) +
                  " bundled rows sharing at least " + std::to_string(min_matches) + " of " +
                  std::to_string(kFeatureNames.size()) + " features";
  if (!outside.empty())
    s += ", widened to the pooled band of every row and by " + fixed_decimals(100 * regime_widening, 1) +
         " % of the time at each end for " + std::to_string(outside.size()) + " thin regime" +
         (outside.size() == 1 ? "" : "s");
  return s;
}

std::string Band::outside_line() const {
  if (outside.empty()) return "";
  std::string s = "outside the validated regime: ";
  for (std::size_t i = 0; i < outside.size(); ++i) s += (i ? "; " : "") + outside[i];
  return s + (nearest.empty() ? "" : "; its nearest rows: " + nearest);
}

std::vector<std::size_t> nearest_rows(const Features& f, const std::vector<ErrorRow>& rows, int neighbours,
                                      const RowFilter& keep, int* min_matches) {
  std::vector<std::pair<int, std::size_t>> scored;  // (features shared, row)
  for (std::size_t i = 0; i < rows.size(); ++i)
    if ((!keep || keep(rows[i])) && std::isfinite(rows[i].time_log_error))
      scored.emplace_back(f.matches(rows[i].features), i);
  if (scored.empty()) return {};
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& c) { return a.first > c.first; });
  const std::size_t want = std::min(scored.size(), static_cast<std::size_t>(std::max(1, neighbours)));
  const int threshold = scored[want - 1].first;
  if (min_matches) *min_matches = threshold;
  std::vector<std::size_t> out;
  for (const auto& [m, i] : scored)
    if (m >= threshold) out.push_back(i);
  return out;
}

Band conformal_band(std::vector<double> e, double coverage) {
  Band b;
  b.coverage = coverage;
  if (e.empty()) return b;
  std::sort(e.begin(), e.end());
  const double n = static_cast<double>(e.size());
  const double alpha = 1 - coverage;
  const auto lo_rank = static_cast<long>(std::floor((n + 1) * alpha / 2));  // 1-based
  const auto hi_rank = static_cast<long>(std::ceil((n + 1) * (1 - alpha / 2)));
  b.rows = static_cast<int>(e.size());
  if (lo_rank >= 1) b.lo_log = e[static_cast<std::size_t>(lo_rank - 1)];
  if (hi_rank <= static_cast<long>(e.size())) b.hi_log = e[static_cast<std::size_t>(hi_rank - 1)];
  return b;
}

Band band_for(const Features& f, const std::vector<ErrorRow>& rows, const BandOptions& options, const RowFilter& keep) {
  int threshold = 0;
  std::vector<double> e;
  for (auto i : nearest_rows(f, rows, options.neighbours, keep, &threshold)) e.push_back(rows[i].time_log_error);
  Band b = conformal_band(std::move(e), options.coverage);
  b.min_matches = threshold;
  return b;
}

Band band_for(const Features& f, const std::vector<ErrorRow>& rows, const BandOptions& options,
              const std::string& exclude_source) {
  if (exclude_source.empty()) return band_for(f, rows, options, RowFilter{});
  return band_for(f, rows, options, [&](const ErrorRow& r) { return r.source != exclude_source; });
}

}  // namespace moesim::bands
