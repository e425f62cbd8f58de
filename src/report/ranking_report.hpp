#pragma once
// `validate --ranking`: how well the predictions order the layouts of one model, system and batch (a sweep group),
// beside their errors. Plain data (validate/ranking.hpp fills it; report/ sits below predict/ in the module order, so
// the types live here) and its text and JSON formatting.
#include <optional>
#include <string>
#include <vector>

namespace moesim::report {

// One sweep group: the predicted rows that share everything but their layout (or the same `group` cell).
struct RankingGroup {
  std::string name;              // the `group` cell, or the shared non-layout cells joined by " / "
  std::vector<std::string> ids;  // predicted rows, in table order
  int skipped = 0;               // rows of the group that were not predicted
  std::optional<double> tau_b;   // Kendall tau-b of measured vs predicted speed; absent below 2 rows or all tied
  double median_abs_error_pct = 0, p90_abs_error_pct = 0, max_abs_error_pct = 0;
  std::string best_measured, best_predicted;  // ids of the fastest row, measured and predicted
  // How much slower (measured) the row predicted fastest is than the row measured fastest, in %: what a layout
  // search trusting the prediction would lose. 0 when it picks the measured best.
  double top1_loss_pct = 0;
};

struct RankingResult {
  std::vector<RankingGroup> groups;  // in order of first appearance in the table
  // Over the groups with a tau: their mean, how many; over every predicted row of a group of >= 2 rows: |error|.
  int groups_with_tau = 0;
  double mean_tau_b = 0;
  int groups_top1_right = 0;
  int rows = 0;
  double median_abs_error_pct = 0, p90_abs_error_pct = 0, max_abs_error_pct = 0;
};

// Per group: rows, tau-b, |error| median / p90 / max, measured and predicted fastest, top-1 loss; then the overall
// line (mean tau-b over the groups that have one, pooled |error|).
std::string to_text(const RankingResult& r);
// {"groups": [...], "summary": {...}}; a group without a tau has "tau_b": null.
std::string to_json_text(const RankingResult& r);
// `validate --json --ranking`: validate's JSON document with a "ranking" member appended.
std::string with_ranking_json(const std::string& validation_json, const RankingResult& r);

}  // namespace moesim::report
