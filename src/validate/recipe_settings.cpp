#include "validate/recipe_settings.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>

#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "layout/layout.hpp"
#include "layout/pipeline_layout.hpp"

namespace moesim::validate {
namespace {

std::string field(const std::map<std::string, std::string>& row, const char* name) {
  const auto it = row.find(name);
  return it == row.end() ? std::string() : it->second;
}

// Why `value` cannot stand in `column`, or nullopt.
std::optional<std::string> value_problem(const std::string& column, const std::string& value) {
  try {
    if (column == "dispatcher") layout::parse_dispatcher(value);
    if (column == "recompute") layout::parse_recompute(value);
    if (column == "cuda_graph") layout::parse_cuda_graph_setting(value);
    if (column == "te_version") layout::parse_te_version(value);
    if (column == "grouped_gemm") layout::parse_grouped_gemm(value);
    if (column == "pp_layout") layout::parse_pipeline_layout(value);
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
  const auto x = parse_finite_number(value);
  if (std::ranges::find(switch_columns(), column) != switch_columns().end() && !(x && (*x == 0 || *x == 1)))
    return "expected 0 or 1, got \"" + value + "\"";
  if (column == "mtp" && !(x && *x >= 0 && *x == std::floor(*x)))
    return "expected a non-negative integer, got \"" + value + "\"";
  if (column == "expert_capacity_factor" && !(x && *x > 0)) return "expected a positive number, got \"" + value + "\"";
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& switch_columns() {
  static const std::vector<std::string> columns = {
      "a2a_overlap", "tp_comm_overlap",           "pad_expert_input_to_capacity", "cpu_binding",
      "fsdp",        "fsdp_reshard_after_forward"};
  return columns;
}

const std::vector<std::string>& recipe_columns() {
  // The last six are not groundtruth.csv columns: settings its schema has no place for. pp_layout: the
  // stage layout a recipe's layout map sets when the published table gives only PP and VPP.
  static const std::vector<std::string> columns = {"dispatcher",
                                                   "recompute",
                                                   "cuda_graph",
                                                   "a2a_overlap",
                                                   "mtp",
                                                   "pp_layout",
                                                   "expert_capacity_factor",
                                                   "pad_expert_input_to_capacity",
                                                   "te_version",
                                                   "grouped_gemm",
                                                   "cpu_binding",
                                                   "fsdp_reshard_after_forward"};
  return columns;
}

bool cell_is_unstated(const std::string& cell, const CellSpellings& spellings) { return spellings.unstated(cell); }

bool value_refines(const std::string& cell, const std::string& value) {
  const std::string c = to_lower(cell), v = to_lower(value);
  if (c == "partial") return v.rfind("partial:", 0) == 0;
  if (c.rfind("flex", 0) == 0 && (v == "deepep" || v == "hybridep")) {
    // Only a backend the cell leaves open: a cell naming the other backend alone states it.
    const std::string other = v == "deepep" ? "hybridep" : "deepep";
    return c.find(v) != std::string::npos || c.find(other) == std::string::npos;
  }
  return false;
}

std::vector<RecipeFill> apply_recipe_settings(config::CsvTable& table, const config::CsvTable& recipes,
                                              const CellSpellings& spellings) {
  std::map<std::string, std::size_t> row_of;
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const std::string id = field(table.rows[i], "id");
    row_of.emplace(id, i);
    ids.push_back(id);
  }
  std::vector<Diagnostic> problems;
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<RecipeFill> filled;
  for (std::size_t k = 0; k < recipes.rows.size(); ++k) {
    const auto& line = recipes.rows[k];
    const std::string where = recipes.file + ":" + std::to_string(recipes.row_lines.at(k));
    RecipeFill f{field(line, "id"), field(line, "column"), field(line, "value"), field(line, "source")};
    const auto row = row_of.find(f.id);
    const auto& cols = recipe_columns();
    if (row == row_of.end()) {
      problems.push_back({where, "", "no row with id \"" + f.id + "\" in " + table.file + did_you_mean(f.id, ids)});
      continue;
    }
    if (std::find(cols.begin(), cols.end(), f.column) == cols.end()) {
      std::string list;
      for (const auto& c : cols) list += (list.empty() ? "" : ", ") + c;
      problems.push_back({where, "",
                          "column \"" + f.column + "\" cannot be filled from a recipe (expected one of " + list + ")" +
                              did_you_mean(f.column, cols)});
      continue;
    }
    if (f.value.empty() || f.source.empty()) {
      problems.push_back({where, "", "recipe line for " + f.id + " " + f.column + " needs a value and a source"});
      continue;
    }
    if (auto why = value_problem(f.column, f.value)) {
      problems.push_back({where, "", f.id + " " + f.column + ": " + *why});
      continue;
    }
    if (!seen.insert({f.id, f.column}).second) {
      problems.push_back({where, "", "second recipe line for " + f.id + " " + f.column});
      continue;
    }
    auto& cell = table.rows[row->second][f.column];
    if (!cell_is_unstated(cell, spellings) && !value_refines(cell, f.value)) continue;
    cell = f.value;
    filled.push_back(std::move(f));
  }
  if (!problems.empty()) throw ConfigError(std::move(problems));
  return filled;
}

}  // namespace moesim::validate
