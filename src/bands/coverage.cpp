#include "bands/coverage.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "bands/regime_band.hpp"
#include "core/text.hpp"
#include "validate/validation.hpp"

namespace moesim::bands {
namespace {

struct Accumulator {
  int rows = 0, inside = 0;
  std::vector<double> low, high, width;
  void add(bool in, const Band& b) {
    ++rows;
    inside += in;
    low.push_back(100 * (std::exp(-b.hi_log) - 1));
    high.push_back(100 * (std::exp(-b.lo_log) - 1));
    width.push_back(high.back() - low.back());
  }
  CoverageCell cell(const std::string& group) const {
    return {group,
            rows,
            inside,
            validate::percentile(low, 0.5),
            validate::percentile(high, 0.5),
            validate::percentile(width, 0.5)};
  }
};

// A band with both ends finite: one from too few rows (a regime whose leaving out leaves a handful) holds
// everything and says nothing, so it is not counted as holding.
bool finite(const Band& b) { return b.valid() && std::isfinite(b.lo_log) && std::isfinite(b.hi_log); }

std::string regime_name(std::size_t d, std::string_view value) {
  return std::string(kRegimeNames[d]) + " = " + std::string(value);
}

struct Tally {
  Accumulator all;
  std::map<std::string, Accumulator> table, regime;
  CoverageReport report(std::string scheme, const BandOptions& o, double term) const {
    CoverageReport r;
    r.scheme = std::move(scheme);
    r.nominal = o.coverage;
    r.regime_term = term;
    r.overall = all.cell("all rows");
    for (const auto& [k, a] : table) r.by_table.push_back(a.cell(k));
    for (const auto& [k, a] : regime) r.by_regime.push_back(a.cell(k));
    return r;
  }
};

}  // namespace

const CoverageCell* CoverageReport::regime(const std::string& group) const {
  for (const auto& c : by_regime)
    if (c.group == group) return &c;
  return nullptr;
}

CoverageReport leave_one_source_out(const std::vector<ErrorRow>& rows, const BandOptions& options,
                                    const RegimeRules& rules) {
  std::set<std::string> sources;
  for (const auto& r : rows) sources.insert(r.source);
  Tally t;
  for (const auto& s : sources) {
    const RowFilter others = [&s](const ErrorRow& r) { return r.source != s; };
    const double term = regime_term(regime_needs(rows, options, rules, others), rules);
    for (const auto& row : rows) {
      if (row.source != s || !std::isfinite(row.time_log_error)) continue;
      const Band b = regime_band(row, rows, options, rules, term, others);
      if (!finite(b)) continue;
      const bool in = b.contains_time_log_error(row.time_log_error);
      t.all.add(in, b);
      t.table[row.table].add(in, b);
      const Regime g = regime_of(row);
      for (std::size_t d = 0; d < g.size(); ++d) t.regime[regime_name(d, g[d])].add(in, b);
    }
  }
  return t.report("leave one source out", options, regime_term(regime_needs(rows, options, rules), rules));
}

CoverageReport leave_one_regime_out(const std::vector<ErrorRow>& rows, const BandOptions& options,
                                    const RegimeRules& rules) {
  const auto needs = regime_needs(rows, options, rules);
  Tally t;
  for (std::size_t d = 0; d < kRegimeNames.size(); ++d) {
    std::set<std::string> values;
    for (const auto& r : rows) values.insert(std::string(regime_of(r)[d]));
    for (const auto& v : values) {
      const RowFilter others = [d, &v](const ErrorRow& r) { return regime_of(r)[d] != v; };
      const double term = regime_term(needs, rules, std::make_pair(d, v));
      for (const auto& row : rows) {
        if (regime_of(row)[d] != v || !std::isfinite(row.time_log_error)) continue;
        const Band b = regime_band(row, rows, options, rules, term, others);
        if (!finite(b)) continue;
        const bool in = b.contains_time_log_error(row.time_log_error);
        t.all.add(in, b);
        t.table[row.table].add(in, b);
        t.regime[regime_name(d, v)].add(in, b);
      }
    }
  }
  return t.report("leave one regime out", options, regime_term(needs, rules));
}

std::string to_markdown(const CoverageReport& r) {
  std::ostringstream o;
  o << "| " << r.scheme << " | predicted | inside the " << fixed_decimals(100 * r.nominal, 0)
    << " % band | coverage | median band (measured vs predicted time) | median width |\n|---|---|---|---|---|---|\n";
  auto line = [&](const CoverageCell& c) {
    o << "| " << c.group << " | " << c.rows << " | " << c.inside << " | " << fixed_decimals(100 * c.share(), 0)
      << " % | " << fixed_decimals(c.median_low_pct, 0) << " % .. +" << fixed_decimals(c.median_high_pct, 0) << " % | "
      << fixed_decimals(c.median_width_pct, 0) << " % |\n";
  };
  line(r.overall);
  for (const auto& c : r.by_table) line(c);
  for (const auto& c : r.by_regime) line(c);
  o << "\nRegime term (calibrated on every row): " << fixed_decimals(100 * r.regime_term, 1)
    << " % of the time at each end per thin regime dimension.\n";
  return o.str();
}

}  // namespace moesim::bands
