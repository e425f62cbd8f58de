#include "validate/validation.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <exception>
#include <map>

#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "core/parallel_map.hpp"
#include "core/text.hpp"
#include "predict/default_pipeline_layout.hpp"
#include "validate/dataset_rules.hpp"
#include "validate/recipe_settings.hpp"
#include "validate/row_layout.hpp"

namespace moesim::validate {
namespace {

// "tokens_per_sec_per_gpu=N" in a row's notes (Megatron-Bridge rows publish both metrics); 0 when absent, when
// the number does not end cleanly (end, ';', ')' or a space: "3,541" is not 3), or when marked "derived" (computed
// from the TFLOPS by the table's authors, so it carries no FLOP definition of its own).
double published_tokens_per_s(const std::string& notes) {
  static const std::string key = "tokens_per_sec_per_gpu=";
  const auto at = notes.find(key);
  if (at == std::string::npos) return 0;
  std::string before = to_lower(notes.substr(0, at));
  while (!before.empty() && (std::isspace(static_cast<unsigned char>(before.back())) || before.back() == ':'))
    before.pop_back();
  if (before.size() >= 7 && before.compare(before.size() - 7, 7, "derived") == 0) return 0;
  try {
    std::size_t used = 0;
    const std::string rest = notes.substr(at + key.size());
    const double v = std::stod(rest, &used);
    const bool clean = used == rest.size() || rest[used] == ';' || rest[used] == ')' ||
                       std::isspace(static_cast<unsigned char>(rest[used]));
    return clean && v > 0 && std::isfinite(v) ? v : 0;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

RowCase case_from_row(const std::map<std::string, std::string>& row, const Resolvers& resolve,
                      const PredictOptions& base) {
  if (!resolve.rules) throw InternalError("case_from_row: no dataset rules (Resolvers::rules; see load_dataset_rules)");
  const DatasetRules& rules = *resolve.rules;
  RowCase rc;
  rc.id = cell(row, "id");
  rc.metric = cell(row, "metric");
  try {
    rc.measured = std::stod(cell(row, "value"));
  } catch (const std::exception&) {
    rc.skipped = "value \"" + cell(row, "value") + "\" is not a number";
    return rc;
  }
  const bool metric_ok =
      rc.metric == "tflops_per_gpu" || rc.metric == "tokens_per_sec_per_gpu" || rc.metric == "step_time_s";
  if (!metric_ok) {
    rc.skipped = "metric " + rc.metric + " is not a single-step prediction";
    return rc;
  }
  if (rc.metric == "tflops_per_gpu") {
    if (const auto tokens = published_tokens_per_s(cell(row, "notes")); tokens > 0)
      rc.row_flops_per_token = rc.measured * 1e12 / tokens;
  }
  layout::Layout l;
  if (auto why = read_row_layout(row, rules.spellings, l)) {
    rc.skipped = *why;
    return rc;
  }
  try {
    Case c{resolve.model(cell(row, "model")), resolve.system(cell(row, "hardware")), l};
    if (c.model.is_moe() && !integer_cell(row, "ep")) {
      rc.skipped = "column ep is blank for an MoE model";
      return rc;
    }
    // What the row's sources say beyond its columns (data/rules/row_settings.json, container_te.json).
    rules.apply(row, c.model, c.layout);
    rc.options = base;
    // Published runs ran: a memory estimate above the GPU's HBM is moesim's error, not a reason to skip.
    rc.options.check_memory = false;
    rc.options.flops_convention = rules.flops_convention(row, c.model, c.layout);
    rc.options.keep_timeline = false;
    // A PP/VPP split published without its pipeline_model_parallel_layout where the layers do not divide
    // evenly: Megatron-Bridge's recipes then use an uneven layout; moesim's default is the stage optimiser's
    // (Resolvers::stage_layout) or, without one, the balanced layout (predict/default_pipeline_layout.hpp).
    if (c.layout.pp_layout.empty()) {
      c.layout.pp_layout = predict::default_pipeline_layout(c.model, c.layout);
      if (!c.layout.pp_layout.empty() && resolve.stage_layout) {
        c.layout.pp_layout.clear();
        c.layout.pp_layout = resolve.stage_layout(c, rc.options);
      }
    }
    rc.c = std::move(c);
  } catch (const Error& e) {
    std::string what = e.what();
    if (auto nl = what.find('\n'); nl != std::string::npos) what = what.substr(0, nl) + " ...";
    rc.skipped = what;
  }
  return rc;
}

double RowCase::value_of(const report::StepReport& r) const {
  if (metric == "tflops_per_gpu" && row_flops_per_token > 0) return r.tokens_per_s_per_gpu * row_flops_per_token / 1e12;
  return metric == "tflops_per_gpu"           ? r.tflops_per_gpu
         : metric == "tokens_per_sec_per_gpu" ? r.tokens_per_s_per_gpu
                                              : r.step_time_s;
}

const std::vector<std::string>& required_columns() {
  static const std::vector<std::string> columns = {"id", "metric", "value", "model", "hardware", "gpus",
                                                   "tp", "pp",     "mbs",   "gbs",   "seq"};
  return columns;
}

void require_columns(const config::CsvTable& table) {
  std::vector<std::string> missing;
  for (const auto& c : required_columns())
    if (std::find(table.columns.begin(), table.columns.end(), c) == table.columns.end()) missing.push_back(c);
  if (missing.empty()) return;
  const std::string expected = "expected a header line with the columns " + join_names(required_columns()) +
                               " (groundtruth.csv's schema; see data/measurements/groundtruth.md)";
  std::string header;
  for (const auto& c : table.columns) header += c;
  // Text tables hold no control bytes but tab, CR and LF (in a quoted cell); a binary file (an image, an
  // archive) does, somewhere.
  const auto has_control = [](const std::string& text) {
    return std::any_of(text.begin(), text.end(), [](char ch) {
      const auto u = static_cast<unsigned char>(ch);
      return (u < 0x20 && ch != '\t' && ch != '\r' && ch != '\n') || u == 0x7f;
    });
  };
  bool binary = has_control(header);
  for (const auto& row : table.rows)
    for (const auto& cell : row) binary = binary || has_control(cell.second);
  if (header.find_first_not_of(" \t") == std::string::npos)
    throw ConfigError({{table.file, "", "empty table: " + expected}});
  if (binary && missing.size() == required_columns().size())
    throw ConfigError({{table.file, "", "not a CSV text table (it holds control bytes): " + expected}});
  std::vector<Diagnostic> problems;
  for (const auto& c : missing)
    problems.push_back({table.file, "", "missing required column \"" + c + "\"" + did_you_mean(c, table.columns)});
  problems.push_back({table.file, "", expected});
  throw ConfigError(std::move(problems));
}

namespace {
// An id names one measurement: `--explain ID` picks a row by it and the summary counts each row once, so a table
// that repeats an id (a pasted row) is refused rather than double-counted.
void require_unique_ids(const config::CsvTable& table) {
  std::map<std::string, std::size_t> first_row;
  std::vector<Diagnostic> problems;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const auto id = cell(table.rows[i], "id");
    if (id.empty()) continue;
    const auto [at, fresh] = first_row.emplace(id, i + 1);
    if (!fresh)
      problems.push_back({table.file, "",
                          "duplicate id \"" + id + "\" in data rows " + std::to_string(at->second) + " and " +
                              std::to_string(i + 1) + ": each row needs its own id"});
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));
}
}  // namespace

ValidationResult validate_table(const config::CsvTable& table, const Resolvers& resolve, const PredictOptions& base,
                                int jobs, core::Progress* progress) {
  require_columns(table);
  require_unique_ids(table);
  ValidationResult out;
  // Rows are independent and land in their own slots, so the result does not depend on `jobs`. An exception that
  // is not a row's own (an internal error) propagates: the one of the lowest row, whatever the timing.
  auto predict_row = [&](std::size_t i) {
    const auto& row = table.rows[i];
    ValidationRow v;
    v.model = cell(row, "model");
    v.hardware = cell(row, "hardware");
    for (const auto& [name, text] : row)
      if (name != "id" && name != "metric" && name != "value" && name != "unit" && name != "source" && name != "notes")
        v.inputs[name] = text;
    RowCase rc = case_from_row(row, resolve, base);
    v.id = rc.id;
    v.metric = rc.metric;
    v.measured = rc.measured;
    v.skipped = rc.skipped;
    if (!rc.c) return v;
    try {
      const auto p = predict::predict_step(*rc.c, rc.options);
      v.layout = p.report.layout_summary;
      v.predicted = rc.value_of(p.report);
    } catch (const Error& e) {
      std::string what = e.what();
      if (auto nl = what.find('\n'); nl != std::string::npos) what = what.substr(0, nl) + " ...";
      v.skipped = what;
    }
    return v;
  };
  out.rows = parallel_map<ValidationRow>(table.rows.size(), jobs, [&](std::size_t i) {
    auto v = predict_row(i);
    if (progress) progress->advance();
    return v;
  });
  if (progress) progress->finish();

  std::vector<double> errors;
  for (const auto& v : out.rows) {
    if (v.predicted)
      errors.push_back(std::fabs(v.error_pct()));
    else
      out.summary.skipped++;
  }
  out.summary.n = static_cast<int>(errors.size());
  out.summary.median_abs_error_pct = percentile(errors, 0.5);
  out.summary.p90_abs_error_pct = percentile(errors, 0.9);
  out.summary.max_abs_error_pct = errors.empty() ? 0 : *std::max_element(errors.begin(), errors.end());
  return out;
}

std::vector<LadderStep> ladder_steps(const ValidationResult& r, double threshold_pct) {
  std::vector<LadderStep> out;
  for (std::size_t i = 1; i < r.rows.size(); ++i) {
    const auto& a = r.rows[i - 1];
    const auto& b = r.rows[i];
    if (!a.predicted || !b.predicted || a.metric != b.metric) continue;
    LadderStep s;
    s.from = a.id;
    s.to = b.id;
    // A step-time metric improves downwards: compare rates (1 / time) so that "+" always means faster.
    const bool time = b.metric == "step_time_s";
    auto change = [time](double x, double y) { return 100.0 * (time ? x / y - 1 : y / x - 1); };
    s.measured_change_pct = change(a.measured, b.measured);
    s.predicted_change_pct = change(*a.predicted, *b.predicted);
    s.judged = std::fabs(s.measured_change_pct) > threshold_pct;
    // A prediction that moves by less than 0.1 % has not moved (rounding in a row's inputs is not a direction).
    s.same_direction = std::fabs(s.predicted_change_pct) >= 0.1 && s.measured_change_pct * s.predicted_change_pct > 0;
    for (const auto& [name, text] : b.inputs) {
      const auto it = a.inputs.find(name);
      if (it == a.inputs.end() || it->second != text) s.changed_columns.push_back(name);
    }
    for (const auto& [name, text] : a.inputs)
      if (!b.inputs.count(name)) s.changed_columns.push_back(name);
    out.push_back(s);
  }
  return out;
}

}  // namespace moesim::validate
