#include "validate/param_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/did_you_mean.hpp"
#include "core/error.hpp"
#include "kernels/efficiency_param_names.hpp"
#include "workload/step_params.hpp"

namespace moesim::validate {

std::vector<std::string> general_param_names() {
  auto names = workload::step_param_names();
  for (auto& n : kernels::kernel_param_names()) names.push_back(std::move(n));
  return names;
}

void require_general_param(const std::string& name, const std::string& flag) {
  const auto names = general_param_names();
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  throw ConfigError(
      {{"<flags>", flag,
        "unknown parameter \"" + name + "\"" + did_you_mean(name, names) + "; known: " + join_names(names)}});
}

double mean_abs_log_ratio(const ValidationResult& r) {
  double sum = 0;
  int n = 0;
  for (const auto& row : r.rows) {
    if (!row.predicted || !(*row.predicted > 0) || !(row.measured > 0)) continue;
    sum += std::fabs(std::log(*row.predicted / row.measured));
    ++n;
  }
  return n == 0 ? 0.0 : sum / n;
}

void golden_section(const std::function<double(double)>& f, double a, double b, int evaluations) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  for (int i = 2; i < evaluations; ++i) {
    if (fc <= fd) {
      b = d, d = c, fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
}

ParamFit fit_param(const config::CsvTable& table, const Resolvers& resolve, const PredictOptions& base,
                   const ParamFitRequest& req) {
  if (!(std::isfinite(req.lo) && std::isfinite(req.hi) && req.lo > 0 && req.lo < req.hi))
    throw ConfigError({{"<flags>", "--fit",
                        "bounds of \"" + req.name + "\" must satisfy 0 < lo < hi, got " + std::to_string(req.lo) + ":" +
                            std::to_string(req.hi)}});
  require_general_param(req.name, "--fit");
  ParamFit fit;
  fit.name = req.name;
  const bool kernel = kernels::is_kernel_param(req.name);
  if (kernel && !req.kernel_model_for) throw InternalError("fit_param: kernel constant without a model factory");
  if (kernel) {  // both bounds in the constant's range, before a minute of evaluations
    auto probe = req.kernel_params;
    kernels::set_kernel_param(probe, req.name, req.lo, "--fit");
    kernels::set_kernel_param(probe, req.name, req.hi, "--fit");
  }
  fit.current =
      kernel ? kernels::get_kernel_param(req.kernel_params, req.name) : workload::get_step_param(base.params, req.name);
  auto at = [&](double value) {
    PredictOptions o = base;
    std::unique_ptr<kernels::KernelCostModel> model;
    if (kernel) {
      auto params = req.kernel_params;
      kernels::set_kernel_param(params, req.name, value, "--fit");
      model = req.kernel_model_for(params);
      o.kernels = model.get();
    } else {
      workload::set_step_param(o.params, req.name, value);
    }
    return validate_table(table, resolve, o);
  };
  // A value at which fewer rows can be predicted than at the current one (e.g. a host cost so large the op
  // graph breaks) is no candidate: the mean over the survivors would reward losing rows.
  const auto now = validate_table(table, resolve, base);
  auto score = [&](const ValidationResult& r) {
    return r.summary.n < now.summary.n ? std::numeric_limits<double>::infinity() : mean_abs_log_ratio(r);
  };
  std::map<double, double> objective;  // value -> objective, every evaluation
  std::map<double, ValidationSummary> summaries;
  auto evaluate = [&](double v) {
    const auto r = at(v);
    summaries[v] = r.summary;
    objective[v] = score(r);
    return r;
  };
  auto f = [&](double log_value) {
    const double v = std::exp(log_value);
    if (!objective.count(v)) evaluate(v);
    return objective[v];
  };

  // The bounds: which rows move, and candidates of their own.
  const auto low = evaluate(req.lo), high = evaluate(req.hi);
  for (std::size_t i = 0; i < low.rows.size(); ++i) {
    const auto& a = low.rows[i];
    const auto& b = high.rows[i];
    if (a.predicted && b.predicted && std::fabs(*b.predicted / *a.predicted - 1) > 0.01)
      fit.informing_rows.push_back(a.id);
  }
  fit.rows = low.summary.n;

  // Golden-section search on ln(value) (the objective need not be unimodal; the bounds are kept as candidates).
  golden_section(f, std::log(req.lo), std::log(req.hi), req.evaluations);
  fit.best = objective.begin()->first;
  for (const auto& [v, o] : objective)
    if (o < objective[fit.best]) fit.best = v;
  if (!std::isfinite(objective[fit.best]))
    throw ConfigError({{"<flags>", "--fit",
                        "no value of \"" + req.name + "\" in [" + std::to_string(req.lo) + ", " +
                            std::to_string(req.hi) + "] predicts every row the current value does"}});
  fit.objective_at_best = objective[fit.best];
  fit.summary_at_best = summaries[fit.best];
  fit.objective_at_current = mean_abs_log_ratio(now);
  fit.summary_at_current = now.summary;
  return fit;
}

}  // namespace moesim::validate
