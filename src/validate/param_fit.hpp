#pragma once
// Refitting one general parameter -- a step parameter (workload/step_params.hpp) or a named kernel constant
// (kernels/efficiency_param_names.hpp) -- against a table of published measurements, as
// the issue allows: one value for every row, never a per-row constant. The objective is the mean absolute log
// ratio |ln(predicted / measured)| over the predicted rows (symmetric in over- and under-prediction), minimised
// by a golden-section search on the logarithm of the parameter between the given bounds; a value at which fewer
// rows can be predicted than at the current value scores +inf. The rows "informing" the
// fit are those whose prediction moves by more than 1 % between the bounds; the rest do not depend on it.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/efficiency_params.hpp"
#include "kernels/kernel_cost_model.hpp"

#include "validate/validation.hpp"

namespace moesim::validate {

// The kernel cost model over a set of roofline constants (the caller's --kernel-model choice over them).
using KernelModelFactory =
    std::function<std::unique_ptr<kernels::KernelCostModel>(const kernels::KernelEfficiencyParams&)>;

struct ParamFitRequest {
  std::string name;       // a step parameter (workload::step_param_names()) or kernel constant (kernel_param_names())
  double lo = 0, hi = 0;  // search bounds, 0 < lo < hi
  int evaluations = 12;   // golden-section evaluations between the bounds (the bounds themselves come on top)
  // For a kernel constant: the constants `base.kernels` was built from, and how to build a model over changed ones.
  kernels::KernelEfficiencyParams kernel_params = kernels::builtin_kernel_efficiency();
  KernelModelFactory kernel_model_for;
};

// The fit's result is plain data in report/ (report/validation_result.hpp), which prints it.
using report::ParamFit;

// Every name --param and --fit accept: the step parameters, then the named kernel constants.
std::vector<std::string> general_param_names();
// ConfigError naming `flag` ("--param", "--fit") for a name in neither set, with a did-you-mean over both.
void require_general_param(const std::string& name, const std::string& flag);

// Mean |ln(predicted / measured)| over the predicted rows of `r` (0 when none).
double mean_abs_log_ratio(const ValidationResult& r);

// Golden-section search for a minimum of `f` on [a, b]: `evaluations` calls of f at interior points (at least
// two), the caller keeping what each returned (the objective need not be unimodal; the caller picks the best).
void golden_section(const std::function<double(double)>& f, double a, double b, int evaluations);

// Throws ConfigError for an unknown parameter name or bad bounds -- both checked before any evaluation, including
// a kernel constant's range (InternalError for a kernel constant without `kernel_model_for`).
ParamFit fit_param(const config::CsvTable& table, const Resolvers& resolve, const PredictOptions& base,
                   const ParamFitRequest& request);

}  // namespace moesim::validate
