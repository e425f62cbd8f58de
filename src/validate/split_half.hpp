#pragma once
// The split-half check of the fitted general parameters (issue 17). The model has a few parameters that no
// published figure isolates and that are fitted to the development table (`validate --fit`). Whether such a
// parameter is supported by the data, and not only by the rows it was fitted on, is judged here:
//
//   1. the full fit: every fitted parameter refitted in turn on the whole table (coordinate descent from the
//      built-in values, one golden-section search per parameter and pass);
//   2. for each split rule (a deterministic rule on the row id, below), the rows fall in a fit half and a judge
//      half. All parameters are refitted jointly on the fit half alone; each half-fit value is set beside its
//      full-fit value (does the half agree with the whole?);
//   3. what each parameter buys on data no fit saw: for each parameter P, P is set to its unfitted value (what the
//      model would use without the fit: 1 for a host factor, the nearest published figure for a kernel constant)
//      and the other parameters are refitted on the same fit half; the judge half's error at that fit is set
//      beside its error at the all-fitted half fit. A parameter earns its place when the judge half is better with
//      it fitted than with it at its unfitted value and the others refitted to make up for it.
//
// Rows whose prediction does not move with a parameter (between its bounds, at the starting values) are not
// re-predicted while that parameter is searched, and every prediction is memoised by row and parameter values, so
// a check costs about (rows that move with each parameter) x (evaluations) predictions per fit.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/csv_table.hpp"
#include "validate/param_fit.hpp"
#include "validate/validation.hpp"

namespace moesim::validate {

// One fitted parameter: its name (a step parameter or kernel constant), the search bounds, and its unfitted value
// with the reason for that value.
struct FittedParam {
  std::string name;
  double lo = 0, hi = 0;
  double unfitted = 0;
  std::string unfitted_why;
};

// The model's fitted parameters, in the order they are refitted (docs/workload-model.md "Host",
// docs/kernel-model.md "Fitted to step measurements").
const std::vector<FittedParam>& fitted_params();

// A deterministic split of a table's rows by the digits of their id (GT041 -> 41): `fit_half(n)` is true for the
// rows the half fit sees; the others are judged.
struct SplitRule {
  std::string name, rule;  // a short name and the rule in words
  std::function<bool(long)> fit_half;
  bool unfitted_checks = true;  // also refit with each parameter at its unfitted value (6x the cost of the split)
};
// "parity": odd ids fit, even ids judge (the old tools/holdout-fit.sh split; neighbouring ids, often near-duplicate
// rows of one source, land in different halves). "pairs": ids with floor(n / 2) odd fit (42 and 43 together, 40
// and 41 together): neighbours stay in the same half, a harder test.
const std::vector<SplitRule>& split_rules();

struct SplitHalfRequest {
  std::vector<FittedParam> params = fitted_params();
  std::vector<SplitRule> splits = split_rules();
  int evaluations = 7;  // golden-section evaluations per parameter and pass (+ the starting value)
  int full_passes = 1;  // coordinate passes of the full fit (stops early when no value moves by more than 1 %)
  int half_passes = 1;  // passes of each half fit, started from the full fit's values
  // For the kernel constants: the constants the base model was built from, and how to build a model over others.
  kernels::KernelEfficiencyParams kernel_params = kernels::builtin_kernel_efficiency();
  KernelModelFactory kernel_model_for;
  std::function<void(const std::string&)> log;  // a line per fit done, when set (the CLI writes them to stderr)
};

// |error| statistics of a set of rows at one set of values.
struct RowsScore {
  int n = 0;
  double mean_abs_log = 0;  // mean |ln(predicted / measured)|
  double median_pct = 0, p90_pct = 0, max_pct = 0;
};

// Parameter P unfitted on one split: the others refitted on the fit half, the judge half scored there.
struct UnfittedCheck {
  std::string name;
  std::vector<double> values;  // every parameter's value at this fit (P at its unfitted value)
  RowsScore judge;
};

struct SplitCheck {
  std::string split, rule;
  int fit_rows = 0, judge_rows = 0;
  std::vector<double> half_fit;  // every parameter refitted on the fit half
  RowsScore fit_at_half_fit, judge_at_half_fit, judge_at_full_fit;
  std::vector<UnfittedCheck> unfitted;  // one per parameter, in `params` order; empty without unfitted_checks
};

struct SplitHalfResult {
  std::vector<FittedParam> params;
  std::vector<double> builtin, full_fit;
  std::vector<std::vector<std::string>> moving_rows;  // per parameter: the rows whose prediction moves with it
  RowsScore full_at_builtin, full_at_full_fit;
  std::vector<SplitCheck> splits;
};

// Throws ConfigError for an unknown parameter or bad bounds (as --fit does).
SplitHalfResult split_half_check(const config::CsvTable& table, const Resolvers& resolve, const PredictOptions& base,
                                 const SplitHalfRequest& request);

// The markdown table docs/accuracy.md shows (one row per parameter and split) and the notes under it.
std::string split_half_markdown(const SplitHalfResult& r);

}  // namespace moesim::validate
