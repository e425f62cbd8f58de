#pragma once
// Ranking fidelity (`validate --ranking`): a layout search is only as good as the order it puts layouts in, so
// rows that share a model, system and batch and differ only in their layout (a sweep group) are judged by the
// Kendall tau between their measured and predicted order, beside their errors.
//
// Groups: by the `group` column when the table has one (a blank cell groups its row by the other columns), split
// by job (model / hardware / gpus / gbs / seq, case ignored) when a named group holds several, each named by the
// group and the cells that differ ("g / gbs=32");
// otherwise by every input column except the layout columns (layout_columns()), named by model / hardware / gpus /
// gbs / seq / precision and then the other non-blank cells as column=value. Cells are compared as text: rows that
// spell one model two ways ("Qwen3-30B-A3B", "qwen3-30b-a3b") fall in two groups unless a `group` cell joins them. Order is by speed: a step-time
// metric is inverted, every other metric (TFLOPS/GPU, tokens/s/GPU) is a rate already, so tau compares rates.
#include <optional>
#include <string>
#include <vector>

#include "report/ranking_report.hpp"
#include "report/validation_result.hpp"

namespace moesim::validate {

// Kendall's tau-b of two paired samples (ties handled): (concordant - discordant pairs) / sqrt((n0 - tied in x) *
// (n0 - tied in y)), n0 = n(n-1)/2; values tie only when equal. Absent when it is undefined: fewer than 2 pairs of
// values, or every pair tied in x or every pair tied in y. Throws std::invalid_argument when the sizes differ.
std::optional<double> kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y);

// The columns that make a row's layout (they may differ inside a sweep group): tp, pp, vpp, cp, ep, etp, dp, mbs,
// dispatcher, recompute, cuda_graph, a2a_overlap, tp_comm_overlap, pp_layout, fsdp.
const std::vector<std::string>& layout_columns();

// The sweep groups of a validated table, each with tau-b, |error| statistics and the fastest row measured and
// predicted; then the mean tau-b over the groups that have one and the |error| statistics of their rows.
report::RankingResult rank_groups(const report::ValidationResult& r);

}  // namespace moesim::validate
