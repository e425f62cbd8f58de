#include "bands/resolution.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/text.hpp"

namespace moesim::bands {
namespace {

// ln of the predicted and of the measured time of a row (a throughput's inverse).
struct LogTimes {
  double predicted = 0, measured = 0;
};

std::map<std::string, std::vector<LogTimes>> sweep_groups(const std::vector<ErrorRow>& rows) {
  std::map<std::string, std::vector<LogTimes>> g;
  for (const auto& r : rows) {
    const auto sense = metric_sense(r.metric);
    if (r.group.empty() || sense == MetricSense::none || r.predicted <= 0 || r.measured <= 0) continue;
    const double s = sense == MetricSense::time ? 1.0 : -1.0;
    g[sweep_job(r)].push_back({s * std::log(r.predicted), s * std::log(r.measured)});
  }
  return g;
}

}  // namespace

std::vector<double> sweep_pair_differences(const std::vector<ErrorRow>& rows) {
  std::vector<double> d;
  for (const auto& [g, t] : sweep_groups(rows))
    for (std::size_t i = 0; i < t.size(); ++i)
      for (std::size_t j = 0; j < t.size(); ++j)
        if (i != j) d.push_back((t[i].predicted - t[i].measured) - (t[j].predicted - t[j].measured));
  std::sort(d.begin(), d.end());
  return d;
}

double chance_truly_faster(const std::vector<double>& sorted_differences, double log_gap) {
  if (sorted_differences.empty()) return 0.5;
  const auto& d = sorted_differences;
  const auto above = d.end() - std::upper_bound(d.begin(), d.end(), log_gap);
  const auto ties = std::upper_bound(d.begin(), d.end(), log_gap) - std::lower_bound(d.begin(), d.end(), log_gap);
  return (static_cast<double>(above) + 0.5 * static_cast<double>(ties)) / static_cast<double>(d.size());
}

double chance_truly_faster(const std::vector<ErrorRow>& rows, double log_gap) {
  return chance_truly_faster(sweep_pair_differences(rows), log_gap);
}

std::vector<OrderBucket> order_by_gap(const std::vector<ErrorRow>& rows) {
  std::vector<OrderBucket> b{{0, 2}, {2, 5}, {5, 10}, {10, 20}, {20, 1e9}};
  const auto differences = sweep_pair_differences(rows);
  for (const auto& [g, t] : sweep_groups(rows))
    for (std::size_t i = 0; i < t.size(); ++i)
      for (std::size_t j = i + 1; j < t.size(); ++j) {
        const double gap = t[i].predicted - t[j].predicted;  // > 0: i predicted slower
        if (gap == 0) continue;
        const double pct = 100 * (std::exp(std::abs(gap)) - 1);
        for (auto& k : b)
          if (pct >= k.gap_lo_pct && pct < k.gap_hi_pct) {
            ++k.pairs;
            k.right += (gap > 0) == (t[i].measured > t[j].measured);
            k.expected_right += 1 - chance_truly_faster(differences, std::abs(gap));
          }
      }
  return b;
}

std::string to_markdown(const std::vector<OrderBucket>& buckets) {
  std::ostringstream o;
  o << "| predicted gap (time) | pairs | ordered right | expected by the model |\n|---|---|---|---|\n";
  for (const auto& b : buckets) {
    o << "| " << fixed_decimals(b.gap_lo_pct, 0)
      << (b.gap_hi_pct > 1e8 ? std::string(" % and more") : "-" + fixed_decimals(b.gap_hi_pct, 0) + " %") << " | "
      << b.pairs << " | " << (b.pairs ? fixed_decimals(100.0 * b.right / b.pairs, 0) + " %" : std::string("-")) << " | "
      << (b.pairs ? fixed_decimals(100.0 * b.expected_right / b.pairs, 0) + " %" : std::string("-")) << " |\n";
  }
  return o.str();
}

}  // namespace moesim::bands
