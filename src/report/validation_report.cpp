#include "report/validation_report.hpp"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

namespace moesim::report {
namespace {

nlohmann::ordered_json rows_and_summary(const ValidationResult& r) {
  nlohmann::ordered_json j;
  auto rows = nlohmann::ordered_json::array();
  for (const auto& v : r.rows) {
    if (v.predicted)
      rows.push_back({{"id", v.id},
                      {"metric", v.metric},
                      {"measured", v.measured},
                      {"predicted", *v.predicted},
                      {"error_pct", v.error_pct()}});
    else
      rows.push_back({{"id", v.id}, {"skipped", v.skipped}});
  }
  j["rows"] = rows;
  const auto& s = r.summary;
  j["summary"] = {{"n", s.n}, {"skipped", s.skipped}};
  if (s.n > 0) {
    j["summary"]["median_abs_error_pct"] = s.median_abs_error_pct;
    j["summary"]["p90_abs_error_pct"] = s.p90_abs_error_pct;
    j["summary"]["max_abs_error_pct"] = s.max_abs_error_pct;
  }
  return j;
}

}  // namespace

std::string to_json_text(const ValidationResult& r) { return rows_and_summary(r).dump(2) + "\n"; }

namespace {

// A measured or predicted value for the text and markdown tables: one decimal where that keeps four significant figures
// (TFLOPS, tokens/s, seconds above 100), otherwise four significant figures, so that a 0.1883 s step is not
// printed as 0.2.
std::string table_value(double v) {
  char buf[32];
  if (std::abs(v) >= 100.0)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

std::string to_text_table(const ValidationResult& r) {
  std::string out;
  char line[400];
  std::snprintf(line, sizeof line, "%-6s %-24s %10s %10s %8s  %s\n", "id", "metric", "measured", "predicted", "error",
                "model / hardware");
  out += line;
  for (const auto& v : r.rows) {
    if (v.predicted)
      std::snprintf(line, sizeof line, "%-6s %-24s %10s %10s %+7.1f%%  %s / %s\n", v.id.c_str(), v.metric.c_str(),
                    table_value(v.measured).c_str(), table_value(*v.predicted).c_str(), v.error_pct(), v.model.c_str(),
                    v.hardware.c_str());
    else
      std::snprintf(line, sizeof line, "%-6s skipped: %s\n", v.id.c_str(), v.skipped.substr(0, 300).c_str());
    out += line;
  }
  const auto& s = r.summary;
  if (s.n == 0)
    std::snprintf(line, sizeof line, "rows predicted 0, skipped %d; no predictable row\n", s.skipped);
  else
    std::snprintf(line, sizeof line, "rows predicted %d, skipped %d; |error| median %.1f%%, p90 %.1f%%, max %.1f%%\n",
                  s.n, s.skipped, s.median_abs_error_pct, s.p90_abs_error_pct, s.max_abs_error_pct);
  out += line;
  return out;
}

std::string to_markdown(const ValidationResult& r) {
  std::string out =
      "| id | model | hardware | metric | measured | predicted | error |\n|---|---|---|---|---|---|---|\n";
  char line[400];
  for (const auto& v : r.rows) {
    if (!v.predicted) continue;
    std::snprintf(line, sizeof line, "| %s | %s | %s | %s | %s | %s | %+.1f%% |\n", v.id.c_str(), v.model.c_str(),
                  v.hardware.c_str(), v.metric.c_str(), table_value(v.measured).c_str(),
                  table_value(*v.predicted).c_str(), v.error_pct());
    out += line;
  }
  const auto& s = r.summary;
  if (s.n == 0)
    std::snprintf(line, sizeof line, "\nRows predicted: 0; skipped: %d. No predictable row.\n", s.skipped);
  else
    std::snprintf(line, sizeof line,
                  "\nRows predicted: %d; skipped: %d. |error| median %.1f %%, p90 %.1f %%, max %.1f %%.\n", s.n,
                  s.skipped, s.median_abs_error_pct, s.p90_abs_error_pct, s.max_abs_error_pct);
  out += line;
  return out;
}

std::string to_text_table(const std::vector<LadderStep>& steps) {
  std::string out = "step              measured  predicted  direction                           changed columns\n";
  int judged = 0, same = 0, unchanged = 0;
  char line[160];
  for (const auto& s : steps) {
    const char* verdict = !s.judged ? "not judged (small measured change)" : s.same_direction ? "same" : "WRONG";
    std::snprintf(line, sizeof line, "%-6s -> %-6s %+8.1f%% %+9.1f%%  %-34s  ", s.from.c_str(), s.to.c_str(),
                  s.measured_change_pct, s.predicted_change_pct, verdict);
    std::string changed;
    for (const auto& c : s.changed_columns) changed += (changed.empty() ? "" : ", ") + c;
    out += line + (changed.empty() ? std::string("(none: the change is not in the table)") : changed) + "\n";
    judged += s.judged ? 1 : 0;
    same += s.judged && s.same_direction ? 1 : 0;
    unchanged += s.judged && s.changed_columns.empty() ? 1 : 0;
  }
  std::snprintf(line, sizeof line, "steps judged %d, predicted in the measured direction %d", judged, same);
  out += line;
  if (unchanged > 0) {
    std::snprintf(line, sizeof line, "; %d judged step%s no input column changed", unchanged,
                  unchanged == 1 ? " has" : "s have");
    out += line;
  }
  return out + "\n";
}

std::string validation_json(const ValidationResult& r, const ValidationContext& context) {
  auto j = rows_and_summary(r);
  // Which kernel costs priced the rows travels with them.
  j["kernel_model"] = context.kernel_model;
  auto& fills = j["recipe_settings"] = nlohmann::ordered_json::array();
  for (const auto& f : context.recipe_fills) fills.push_back({{"id", f.id}, {"column", f.column}, {"value", f.value}});
  if (context.ladder) {
    auto& steps = j["ladder"] = nlohmann::ordered_json::array();
    for (const auto& st : *context.ladder)
      steps.push_back({{"from", st.from},
                       {"to", st.to},
                       {"measured_change_pct", st.measured_change_pct},
                       {"predicted_change_pct", st.predicted_change_pct},
                       {"judged", st.judged},
                       {"same_direction", st.same_direction},
                       {"changed_columns", st.changed_columns}});
  }
  return j.dump(2) + "\n";
}

std::string validation_text(const ValidationResult& r, const ValidationContext& context, bool markdown) {
  std::string out = markdown ? to_markdown(r) : to_text_table(r);
  if (context.ladder) {
    const auto text = to_text_table(*context.ladder);
    out += markdown ? "\n```\n" + text + "```\n" : "\n" + text;
  }
  out += (markdown ? "\nKernel costs: " : "kernel model: ") + context.kernel_model + "\n";
  if (!context.recipe_fills.empty())
    out += (markdown ? "\nRecipe settings: " : "recipe settings: ") + std::to_string(context.recipe_fills.size()) +
           " unstated cells filled or refined from " + context.recipes_file + "\n";
  return out;
}

std::string explained_row_line(const std::string& id, const std::string& metric, double measured, double predicted) {
  std::ostringstream out;
  out << id << " " << metric << ": measured " << measured << ", predicted " << predicted << " ("
      << (predicted >= measured ? "+" : "") << std::fixed << std::setprecision(1)
      << 100.0 * (predicted - measured) / measured << "%)\n";
  return out.str();
}

std::string to_text(const ParamFit& f) {
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof buf,
                "fit %s on %d rows: best %.3g (mean |ln(predicted/measured)| %.3f; median |error| %.1f%%, p90 %.1f%%, "
                "max %.1f%%)\n",
                f.name.c_str(), f.rows, f.best, f.objective_at_best, f.summary_at_best.median_abs_error_pct,
                f.summary_at_best.p90_abs_error_pct, f.summary_at_best.max_abs_error_pct);
  out += buf;
  std::snprintf(buf, sizeof buf, "  current %.3g: mean |ln| %.3f; median |error| %.1f%%, p90 %.1f%%, max %.1f%%\n",
                f.current, f.objective_at_current, f.summary_at_current.median_abs_error_pct,
                f.summary_at_current.p90_abs_error_pct, f.summary_at_current.max_abs_error_pct);
  out += buf;
  out +=
      "  rows informing it (prediction moves > 1% across the bounds, " + std::to_string(f.informing_rows.size()) + "):";
  for (const auto& id : f.informing_rows) out += " " + id;
  out += "\n";
  return out;
}

}  // namespace moesim::report
