#include "bands/error_table.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "config/csv_table.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace moesim::bands {
namespace {

constexpr const char* kGroupTable = "group_table";

const std::vector<std::string>& columns() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> v{"table", "id", "source", "metric", "group", kGroupTable, "job"};
    for (auto n : kFeatureNames) v.emplace_back(n);
    for (const char* n : {"family", "micro_batches", "gpu_scale", "measured", "predicted", "time_log_error"})
      v.emplace_back(n);
    return v;
  }();
  return c;
}

}  // namespace

MetricSense metric_sense(const std::string& metric) {
  if (metric == "step_time_s") return MetricSense::time;
  if (metric.find("per_s") != std::string::npos || metric.find("flops") != std::string::npos)
    return MetricSense::throughput;
  return MetricSense::none;
}

double time_log_error(MetricSense sense, double measured, double predicted) {
  const double e = std::log(predicted / measured);
  return sense == MetricSense::throughput ? -e : e;
}

std::string sweep_job(const ErrorRow& r) { return r.group.empty() ? "" : r.group + " | " + r.job; }

std::string to_csv(const std::vector<ErrorRow>& rows) {
  std::ostringstream o;
  for (std::size_t i = 0; i < columns().size(); ++i) o << (i ? "," : "") << columns()[i];
  o << "\n";
  for (const auto& r : rows) {
    o << config::csv_cell(r.table) << "," << config::csv_cell(r.id) << "," << config::csv_cell(r.source) << ","
      << config::csv_cell(r.metric) << "," << config::csv_cell(r.group) << "," << config::csv_cell(r.group_table) << ","
      << config::csv_cell(r.job);
    for (const auto& v : r.features.values) o << "," << config::csv_cell(v);
    o << "," << config::csv_cell(r.family) << "," << config::csv_cell(r.micro_batches) << ","
      << config::csv_cell(r.gpu_scale);
    o << "," << fixed_decimals(r.measured, 6) << "," << fixed_decimals(r.predicted, 6) << ","
      << fixed_decimals(r.time_log_error, 6) << "\n";
  }
  return o.str();
}

std::vector<ErrorRow> read_error_table(const std::filesystem::path& file) {
  const auto t = config::read_csv(file);
  Diagnostics d;
  const auto has = [&t](const std::string& c) {
    return std::find(t.columns.begin(), t.columns.end(), c) != t.columns.end();
  };
  for (const auto& c : columns())
    if (c != kGroupTable && !has(c))
      d.add(file.string(), "column " + c, "missing: expected the columns of `moesim bands --write`");
  d.throw_if_any();
  std::vector<ErrorRow> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    const std::string at = "line " + std::to_string(t.row_lines[i]);
    auto number = [&](const std::string& column) {
      const std::string& text = row.at(column);
      try {
        std::size_t used = 0;
        const double v = std::stod(text, &used);
        if (used == text.size() && std::isfinite(v)) return v;
      } catch (const std::exception&) {}
      d.add(file.string(), at + ", column " + column, "expected a number, got \"" + text + "\"");
      return 0.0;
    };
    ErrorRow r;
    r.table = row.at("table");
    r.id = row.at("id");
    r.source = row.at("source");
    r.metric = row.at("metric");
    r.group = row.at("group");
    r.group_table = has(kGroupTable) ? row.at(kGroupTable) : r.group.empty() ? "" : r.table;
    if (r.group.empty() != r.group_table.empty())
      d.add(file.string(), at + ", column group_table",
            "expected the table of the row's sweep group exactly when the group is given, got \"" + r.group_table +
                "\" for group \"" + r.group + "\"");
    r.job = row.at("job");
    r.family = row.at("family");
    r.micro_batches = row.at("micro_batches");
    r.gpu_scale = row.at("gpu_scale");
    for (std::size_t k = 0; k < kFeatureNames.size(); ++k) r.features.values[k] = row.at(std::string(kFeatureNames[k]));
    r.measured = number("measured");
    r.predicted = number("predicted");
    r.time_log_error = number("time_log_error");
    rows.push_back(std::move(r));
  }
  d.throw_if_any();
  return rows;
}

}  // namespace moesim::bands
