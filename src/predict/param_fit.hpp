#pragma once
// Refitting one general step parameter (workload/step_params.hpp) against a table of published measurements, as
// the issue allows: one value for every row, never a per-row constant. The objective is the mean absolute log
// ratio |ln(predicted / measured)| over the predicted rows (symmetric in over- and under-prediction), minimised
// by a golden-section search on the logarithm of the parameter between the given bounds; a value at which fewer
// rows can be predicted than at the current value scores +inf. The rows "informing" the
// fit are those whose prediction moves by more than 1 % between the bounds; the rest do not depend on it.
#include <string>
#include <vector>

#include "predict/validation.hpp"

namespace moesim::predict {

struct ParamFitRequest {
  std::string name;       // a step parameter name (workload::step_param_names())
  double lo = 0, hi = 0;  // search bounds, 0 < lo < hi
  int evaluations = 12;   // golden-section evaluations between the bounds (the bounds themselves come on top)
};

struct ParamFit {
  std::string name;
  double best = 0;
  double objective_at_best = 0;     // mean |ln(predicted / measured)|
  double current = 0;               // the value in `base` (the built-in default unless --param set it)
  double objective_at_current = 0;
  ValidationSummary summary_at_best, summary_at_current;
  std::vector<std::string> informing_rows;
  int rows = 0;                     // rows in the objective
};

// Mean |ln(predicted / measured)| over the predicted rows of `r` (0 when none).
double mean_abs_log_ratio(const ValidationResult& r);

// Throws ConfigError for an unknown parameter name or bad bounds.
ParamFit fit_step_param(const config::CsvTable& table, const Resolvers& resolve, const PredictOptions& base,
                        const ParamFitRequest& request);

// "fit framework_host_factor on 63 rows: best 3.34 (mean |ln(predicted/measured)| ...)", the current value's
// figures and the informing rows.
std::string to_text(const ParamFit& f);

}  // namespace moesim::predict
