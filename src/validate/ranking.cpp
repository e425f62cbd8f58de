#include "validate/ranking.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "core/text.hpp"
#include "validate/validation.hpp"

namespace moesim::validate {
namespace {

int sign(double d) { return (d > 0) - (d < 0); }

// A row's speed: rates as they are, a step time inverted (so that larger is faster for every metric).
double speed(const std::string& metric, double value) { return metric == "step_time_s" ? 1.0 / value : value; }

// The cells that name a job: rows of one job differ only in layout.
constexpr std::array<const char*, 5> kJobColumns{"model", "hardware", "gpus", "gbs", "seq"};

// A job cell as compared: ASCII case ignored, so that a group's "Qwen3-30B-A3B" and "qwen3-30b-a3b" rows stay one
// job.
std::string job_cell(const report::ValidationRow& v, const char* name) {
  const auto c = v.inputs.find(name);
  return c == v.inputs.end() ? "" : to_lower(c->second);
}

std::string named_group(const report::ValidationRow& v) {
  const auto it = v.inputs.find("group");
  return it == v.inputs.end() ? "" : it->second;
}

// `values_in`: per named group, the values each job column takes in it. A named group is ranked job by job when
// its rows differ in a job column (model, system, GPUs, batch, sequence), and each job is named by the group and
// the cells that differ ("llama3-70b / gbs=32"): a group that spans batch sizes or sequence lengths (the SimuMax
// runs are grouped per model) would otherwise be ranked mostly by its batch sizes.
using GroupValues = std::map<std::string, std::array<std::set<std::string>, kJobColumns.size()>>;
std::string group_key(const report::ValidationRow& v, const GroupValues& values_in) {
  if (const std::string g = named_group(v); !g.empty()) {
    std::string key = g;
    const auto& values = values_in.at(g);
    for (std::size_t k = 0; k < kJobColumns.size(); ++k)
      if (values[k].size() > 1)
        key += std::string(key == g ? " / " : " ") + kJobColumns[k] + "=" + job_cell(v, kJobColumns[k]);
    return key;
  }
  // The cells that name a sweep first (so that a truncated name still tells groups apart).
  static const std::vector<std::string> first{"model", "hardware", "gpus", "gbs", "seq", "precision"};
  const auto& layout = layout_columns();
  auto skip = [&](const std::string& name) {
    return name == "group" || std::find(layout.begin(), layout.end(), name) != layout.end();
  };
  std::string key;
  auto add = [&key](const std::string& text) {
    if (!text.empty()) key += (key.empty() ? "" : " / ") + text;
  };
  for (const auto& name : first)
    if (const auto it = v.inputs.find(name); it != v.inputs.end()) add(it->second);
  // The others with their column names, so that cells of different columns cannot make equal keys.
  for (const auto& [name, text] : v.inputs)
    if (!skip(name) && std::find(first.begin(), first.end(), name) == first.end() && !text.empty())
      add(name + "=" + text);
  return key;
}

}  // namespace

std::optional<double> kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw std::invalid_argument("kendall_tau_b: samples of different sizes");
  const std::size_t n = x.size();
  long long concordant = 0, discordant = 0, tied_x = 0, tied_y = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const int sx = sign(x[i] - x[j]), sy = sign(y[i] - y[j]);
      tied_x += sx == 0;
      tied_y += sy == 0;
      if (sx * sy > 0) ++concordant;
      if (sx * sy < 0) ++discordant;
    }
  const long long pairs = static_cast<long long>(n * (n - (n > 0 ? 1 : 0)) / 2);
  const double denominator = std::sqrt(static_cast<double>(pairs - tied_x) * static_cast<double>(pairs - tied_y));
  if (pairs == 0 || denominator == 0) return std::nullopt;
  return static_cast<double>(concordant - discordant) / denominator;
}

const std::vector<std::string>& layout_columns() {
  static const std::vector<std::string> columns{"tp",
                                                "pp",
                                                "vpp",
                                                "cp",
                                                "ep",
                                                "etp",
                                                "dp",
                                                "mbs",
                                                "dispatcher",
                                                "recompute",
                                                "cuda_graph",
                                                "a2a_overlap",
                                                "tp_comm_overlap",
                                                "pp_layout",
                                                "fsdp"};
  return columns;
}

report::RankingResult rank_groups(const report::ValidationResult& r) {
  report::RankingResult out;
  std::map<std::string, std::size_t> index;  // group key -> position in out.groups
  std::vector<std::vector<const report::ValidationRow*>> members;
  GroupValues values_in;
  for (const auto& v : r.rows)
    if (const std::string g = named_group(v); !g.empty())
      for (std::size_t k = 0; k < kJobColumns.size(); ++k) values_in[g][k].insert(job_cell(v, kJobColumns[k]));
  for (const auto& v : r.rows) {
    const std::string key = group_key(v, values_in);
    auto [it, added] = index.try_emplace(key, out.groups.size());
    if (added) {
      out.groups.push_back({});
      out.groups.back().name = key;
      members.emplace_back();
    }
    if (v.predicted)
      members[it->second].push_back(&v);
    else
      out.groups[it->second].skipped++;
  }
  std::vector<double> pooled;
  double tau_sum = 0;
  for (std::size_t gi = 0; gi < out.groups.size(); ++gi) {
    auto& g = out.groups[gi];
    const auto& rows = members[gi];
    if (rows.empty()) continue;
    std::vector<double> measured, predicted, errors;
    for (const auto* v : rows) {
      g.ids.push_back(v->id);
      measured.push_back(speed(v->metric, v->measured));
      predicted.push_back(speed(v->metric, *v->predicted));
      errors.push_back(std::fabs(v->error_pct()));
    }
    g.tau_b = kendall_tau_b(measured, predicted);
    g.median_abs_error_pct = percentile(errors, 0.5);
    g.p90_abs_error_pct = percentile(errors, 0.9);
    g.max_abs_error_pct = *std::max_element(errors.begin(), errors.end());
    const auto best_m = std::max_element(measured.begin(), measured.end()) - measured.begin();
    const auto best_p = std::max_element(predicted.begin(), predicted.end()) - predicted.begin();
    g.best_measured = g.ids[best_m];
    g.best_predicted = g.ids[best_p];
    g.top1_loss_pct = 100.0 * (1.0 - measured[best_p] / measured[best_m]);
    if (rows.size() < 2) continue;  // a group of one orders nothing: it adds neither a tau nor pooled rows
    pooled.insert(pooled.end(), errors.begin(), errors.end());
    if (g.top1_loss_pct == 0) out.groups_top1_right++;
    if (g.tau_b) {
      out.groups_with_tau++;
      tau_sum += *g.tau_b;
    }
  }
  out.mean_tau_b = out.groups_with_tau ? tau_sum / out.groups_with_tau : 0;
  out.rows = static_cast<int>(pooled.size());
  out.median_abs_error_pct = percentile(pooled, 0.5);
  out.p90_abs_error_pct = percentile(pooled, 0.9);
  out.max_abs_error_pct = pooled.empty() ? 0 : *std::max_element(pooled.begin(), pooled.end());
  return out;
}

}  // namespace moesim::validate
