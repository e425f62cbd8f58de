#include "bands/anchor.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "core/text.hpp"
#include "validate/validation.hpp"

namespace moesim::bands {
namespace {

// Rows grouped by job within a sweep group (error_table.hpp sweep_job; rows without a group are not part of
// any), of one table or of all (""): per job, its sweep group and its rows' errors.
struct Job {
  std::string group;
  std::vector<double> errors;
};
std::map<std::string, Job> groups_of(const std::vector<ErrorRow>& rows, const std::string& table = "") {
  std::map<std::string, Job> g;
  for (const auto& r : rows)
    if (!r.group.empty() && std::isfinite(r.time_log_error) && (table.empty() || r.group_table == table)) {
      auto& j = g[sweep_job(r)];
      j.group = r.group;
      j.errors.push_back(r.time_log_error);
    }
  return g;
}

}  // namespace

double Anchor::time_factor() const { return std::exp(-mean_log_error); }

Anchor make_anchor(const std::vector<double>& time_log_errors, std::string file) {
  if (time_log_errors.empty()) {
    Diagnostics d;
    d.add(file, "",
          "no row to anchor on: expected rows in the schema of data/measurements/groundtruth.csv with a "
          "step time or throughput that moesim predicts");
    d.throw_if_any();
  }
  Anchor a;
  a.file = std::move(file);
  a.rows = static_cast<int>(time_log_errors.size());
  for (double e : time_log_errors) a.mean_log_error += e / a.rows;
  return a;
}

Band anchored_band(const std::vector<ErrorRow>& rows, const BandOptions& options, const std::string& exclude_group) {
  // The pairs' differences as rows of one regime, so that band_for's conformal ranks apply unchanged.
  std::vector<ErrorRow> pairs;
  for (const auto& [key, job] : groups_of(rows)) {
    if (job.group == exclude_group) continue;  // the whole sweep group: its jobs share a model and a system
    const auto& e = job.errors;
    for (std::size_t i = 0; i < e.size(); ++i)
      for (std::size_t j = 0; j < e.size(); ++j)
        if (i != j) {
          ErrorRow p;
          p.time_log_error = e[j] - e[i];
          pairs.push_back(p);
        }
  }
  BandOptions o = options;
  o.neighbours = static_cast<int>(pairs.size());  // every pair: the features say nothing within a job
  return band_for(Features{}, pairs, o);
}

AnchorStudy anchor_study(const std::vector<ErrorRow>& rows, const BandOptions& options, const std::string& table) {
  AnchorStudy s;
  s.table = table;
  std::vector<double> plain, anchored;
  for (const auto& [key, job] : groups_of(rows, table)) {
    const auto& e = job.errors;
    if (e.size() < 2) continue;
    ++s.groups;
    const Band b = anchored_band(rows, options, job.group);
    for (std::size_t j = 0; j < e.size(); ++j) {
      ++s.rows;
      plain.push_back(100 * std::abs(std::exp(e[j]) - 1));
      for (std::size_t i = 0; i < e.size(); ++i) {
        if (i == j) continue;
        ++s.pairs;
        anchored.push_back(100 * std::abs(std::exp(e[j] - e[i]) - 1));
        s.pairs_inside += b.valid() && b.contains_time_log_error(e[j] - e[i]);
      }
    }
  }
  s.median_abs_pct = validate::percentile(plain, 0.5);
  s.p90_abs_pct = validate::percentile(plain, 0.9);
  s.anchored_median_abs_pct = validate::percentile(anchored, 0.5);
  s.anchored_p90_abs_pct = validate::percentile(anchored, 0.9);
  return s;
}

std::string to_markdown(const AnchorStudy& s, double nominal) {
  std::ostringstream o;
  o << "| " << (s.table.empty() ? std::string("every table") : s.table) << ", " << s.groups
    << " jobs | median abs. error (time) | p90 | inside the anchored " << fixed_decimals(100 * nominal, 0)
    << " % band |\n|---|---|---|---|\n";
  o << "| no anchor (" << s.rows << " rows) | " << fixed_decimals(s.median_abs_pct, 1) << " % | "
    << fixed_decimals(s.p90_abs_pct, 1) << " % | |\n";
  o << "| anchored on one row of the group (" << s.pairs << " pairs) | " << fixed_decimals(s.anchored_median_abs_pct, 1)
    << " % | " << fixed_decimals(s.anchored_p90_abs_pct, 1) << " % | " << fixed_decimals(100 * s.coverage(), 0)
    << " % (band from the other sweep groups) |\n";
  return o.str();
}

}  // namespace moesim::bands
