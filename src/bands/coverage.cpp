#include "bands/coverage.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/text.hpp"
#include "validate/validation.hpp"

namespace moesim::bands {
namespace {

struct Accumulator {
  int rows = 0, inside = 0;
  std::vector<double> low, high;
  void add(bool in, const Band& b) {
    ++rows;
    inside += in;
    low.push_back(100 * (std::exp(-b.hi_log) - 1));
    high.push_back(100 * (std::exp(-b.lo_log) - 1));
  }
  CoverageCell cell(const std::string& group) const {
    return {group, rows, inside, validate::percentile(low, 0.5), validate::percentile(high, 0.5)};
  }
};

std::size_t feature_index(std::string_view name) {
  return static_cast<std::size_t>(std::find(kFeatureNames.begin(), kFeatureNames.end(), name) - kFeatureNames.begin());
}

}  // namespace

CoverageReport leave_one_source_out(const std::vector<ErrorRow>& rows, const BandOptions& options) {
  CoverageReport r;
  r.nominal = options.coverage;
  Accumulator all;
  std::map<std::string, Accumulator> table, regime;
  for (const auto& row : rows) {
    if (!std::isfinite(row.time_log_error)) continue;
    const Band b = band_for(row.features, rows, options, row.source);
    if (!b.valid()) continue;
    const bool in = b.contains_time_log_error(row.time_log_error);
    all.add(in, b);
    table[row.table].add(in, b);
    for (const char* f : {"generation", "kind", "row_kind"})
      regime[std::string(f) + " = " + row.features.values[feature_index(f)]].add(in, b);
  }
  r.overall = all.cell("all rows");
  for (const auto& [k, a] : table) r.by_table.push_back(a.cell(k));
  for (const auto& [k, a] : regime) r.by_regime.push_back(a.cell(k));
  return r;
}

std::string to_markdown(const CoverageReport& r) {
  std::ostringstream o;
  o << "| rows | predicted | inside the " << fixed_decimals(100 * r.nominal, 0)
    << " % band | coverage | median band (measured vs predicted time) |\n|---|---|---|---|---|\n";
  auto line = [&](const CoverageCell& c) {
    o << "| " << c.group << " | " << c.rows << " | " << c.inside << " | " << fixed_decimals(100 * c.share(), 0)
      << " % | " << fixed_decimals(c.median_low_pct, 0) << " % .. +" << fixed_decimals(c.median_high_pct, 0)
      << " % |\n";
  };
  line(r.overall);
  for (const auto& c : r.by_table) line(c);
  for (const auto& c : r.by_regime) line(c);
  return o.str();
}

}  // namespace moesim::bands
