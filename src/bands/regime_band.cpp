#include "bands/regime_band.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace moesim::bands {
namespace {

// "deepseek (20 of 24)": the commonest value of one column among `idx`.
std::string commonest(const std::vector<std::size_t>& idx, const std::vector<ErrorRow>& rows,
                      const std::function<std::string(const ErrorRow&)>& column) {
  std::map<std::string, int> n;
  for (auto i : idx) ++n[column(rows[i])];
  const auto best =
      std::max_element(n.begin(), n.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return best->first + (best->second == static_cast<int>(idx.size())
                            ? std::string()
                            : " (" + std::to_string(best->second) + " of " + std::to_string(idx.size()) + ")");
}

// What the nearest rows are like, dimension by dimension: the regime dimensions, then the other features.
std::string describe_nearest(const std::vector<std::size_t>& idx, const std::vector<ErrorRow>& rows) {
  std::string s = std::to_string(idx.size()) + " rows";
  for (std::size_t d = 0; d < kRegimeNames.size(); ++d)
    s += ", " + std::string(kRegimeNames[d]) + " " +
         commonest(idx, rows, [d](const ErrorRow& r) { return std::string(regime_of(r)[d]); });
  for (std::size_t k = 0; k < kFeatureNames.size(); ++k)
    if (std::find(kRegimeNames.begin(), kRegimeNames.end(), kFeatureNames[k]) == kRegimeNames.end())
      s += ", " + std::string(kFeatureNames[k]) + " " +
           commonest(idx, rows, [k](const ErrorRow& r) { return r.features.values[k]; });
  return s;
}

}  // namespace

Band regime_band(const ErrorRow& c, const std::vector<ErrorRow>& rows, const BandOptions& options,
                 const RegimeRules& rules, double regime_term, const RowFilter& keep) {
  int threshold = 0;
  const auto near = nearest_rows(c.features, rows, options.neighbours, keep, &threshold);
  std::vector<double> e;
  for (auto i : near) e.push_back(rows[i].time_log_error);
  Band b = conformal_band(std::move(e), options.coverage);
  b.min_matches = threshold;
  if (!b.valid()) return b;
  // The case's thin regime dimensions among the rows used.
  const Regime mine = regime_of(c);
  std::array<int, kRegimeNames.size()> alike{};
  std::vector<double> all;
  for (const auto& r : rows) {
    if ((keep && !keep(r)) || !std::isfinite(r.time_log_error)) continue;
    all.push_back(r.time_log_error);
    const Regime g = regime_of(r);
    for (std::size_t d = 0; d < g.size(); ++d) alike[d] += !mine[d].empty() && g[d] == mine[d];
  }
  for (std::size_t d = 0; d < mine.size(); ++d)
    if (!mine[d].empty() && alike[d] < rules.thin_rows)
      b.outside.push_back(std::string(kRegimeNames[d]) + " = " + std::string(mine[d]) + " (" +
                          std::to_string(alike[d]) + " bundled row" + (alike[d] == 1 ? "" : "s") + ")");
  if (b.outside.empty()) return b;
  const Band pooled = conformal_band(std::move(all), options.coverage);
  b.regime_widening = regime_term * static_cast<double>(b.outside.size());
  b.lo_log = std::min(b.lo_log, pooled.lo_log) - b.regime_widening;
  b.hi_log = std::max(b.hi_log, pooled.hi_log) + b.regime_widening;
  b.nearest = describe_nearest(near, rows);
  return b;
}

std::vector<RegimeNeed> regime_needs(const std::vector<ErrorRow>& rows, const BandOptions& options,
                                     const RegimeRules& rules, const RowFilter& keep) {
  auto kept = [&](const ErrorRow& r) { return (!keep || keep(r)) && std::isfinite(r.time_log_error); };
  std::vector<RegimeNeed> out;
  for (std::size_t d = 0; d < kRegimeNames.size(); ++d) {
    std::map<std::string, int> counts;
    for (const auto& r : rows)
      if (kept(r)) ++counts[std::string(regime_of(r)[d])];
    for (const auto& [value, n] : counts) {
      if (n < rules.thin_rows || value.empty()) continue;
      const RowFilter others = [&, d, v = value](const ErrorRow& r) { return kept(r) && regime_of(r)[d] != v; };
      // Per row, the widening per thin dimension that brings it inside (0 when inside; none can when the case
      // is thin on no dimension, which leaving its regime out rules out unless the band has no row at all).
      std::vector<double> x;
      for (const auto& r : rows) {
        if (!kept(r) || regime_of(r)[d] != value) continue;
        const Band b = regime_band(r, rows, options, rules, 0, others);
        if (!b.valid()) continue;
        const double miss = std::max({0.0, b.lo_log - r.time_log_error, r.time_log_error - b.hi_log});
        x.push_back(miss == 0           ? 0
                    : b.outside.empty() ? std::numeric_limits<double>::infinity()
                                        : miss / static_cast<double>(b.outside.size()));
      }
      if (x.empty()) continue;
      std::sort(x.begin(), x.end());
      const auto k = static_cast<std::size_t>(std::ceil(options.coverage * static_cast<double>(x.size())));
      out.push_back({d, value, n, x[std::clamp<std::size_t>(k, 1, x.size()) - 1]});
    }
  }
  return out;
}

double regime_term(const std::vector<RegimeNeed>& needs, const RegimeRules& rules,
                   std::optional<std::pair<std::size_t, std::string>> leave_out) {
  std::vector<double> v;
  for (const auto& n : needs)
    if (!leave_out || n.dimension != leave_out->first || n.value != leave_out->second)
      if (std::isfinite(n.need)) v.push_back(n.need);
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(std::ceil((static_cast<double>(v.size()) + 1) * rules.regime_quantile));
  return v[std::clamp<std::size_t>(k, 1, v.size()) - 1];
}

}  // namespace moesim::bands
