#include "validate/split_half.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "core/error.hpp"
#include "kernels/efficiency_param_names.hpp"
#include "workload/step_params.hpp"

namespace moesim::validate {

const std::vector<FittedParam>& fitted_params() {
  static const std::vector<FittedParam> params = {
      {"framework_host_factor", 1, 8, 1,
       "the isolated torch / TE call times of TE issue #2053 as measured, with no Megatron Python on top"},
      {"x86_host_factor", 1, 4, 1, "TE issue #2053's x86 / Grace call-time ratio as measured (13.5 / 37.1 us)"},
      {"unbound_host_factor", 1, 2.5, 1, "an unbound rank issues as fast as a bound one"},
      {"elementwise_hbm_fraction_blackwell", 0.2, 1, 0.31,
       "Hopper's measured fraction (DeepSeek's H800 trace: TE RMSNorm at 1.04 of 3.35 TB/s) carried over"},
      {"gemm_ceiling_mxfp8_blackwell", 0.4, 0.9, 0.534,
       "the only published Blackwell MXFP8 GEMM figure (GB200 blog grouped GEMM, 2,672 TF = 0.534 of peak)"},
  };
  return params;
}

const std::vector<SplitRule>& split_rules() {
  static const std::vector<SplitRule> rules = {
      {"parity", "odd ids fit, even ids judged", [](long n) { return n % 2 == 1; }},
      {"pairs", "ids with floor(n/2) odd fit (2-3, 6-7, ...), the others judged: neighbouring ids stay together",
       [](long n) { return (n / 2) % 2 == 1; }},
  };
  return rules;
}

namespace {

long id_number(const std::string& id) {
  long n = 0;
  for (char c : id)
    if (c >= '0' && c <= '9') n = n * 10 + (c - '0');
  return n;
}

using Values = std::vector<double>;
using Predictions = std::vector<std::optional<double>>;  // per table row

// Predicts rows of one table at given parameter values, each (row, values) once.
class RowPredictor {
 public:
  RowPredictor(const config::CsvTable& table, const Resolvers& resolve, const PredictOptions& base,
               const SplitHalfRequest& req)
      : table_(table), resolve_(resolve), base_(base), req_(req) {
    measured_.resize(table.rows.size());
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
      const auto rc = case_from_row(table.rows[i], resolve, base);
      measured_[i] = rc.measured;
      ids_.push_back(rc.id);
    }
  }
  double measured(std::size_t i) const { return measured_[i]; }
  const std::string& id(std::size_t i) const { return ids_[i]; }
  std::size_t size() const { return measured_.size(); }

  // Fills `out[i]` for every i in `rows` at `v`.
  void predict(const std::vector<std::size_t>& rows, const Values& v, Predictions& out) {
    std::vector<std::size_t> missing;
    for (auto i : rows)
      if (!memo_.count({i, v})) missing.push_back(i);
    if (!missing.empty()) {
      config::CsvTable sub;
      sub.file = table_.file;
      sub.columns = table_.columns;
      for (auto i : missing) sub.rows.push_back(table_.rows[i]);
      std::unique_ptr<kernels::KernelCostModel> model;
      const auto result = validate_table(sub, resolve_, options_at(v, model));
      for (std::size_t k = 0; k < missing.size(); ++k) memo_[{missing[k], v}] = result.rows[k].predicted;
    }
    out.resize(size());
    for (auto i : rows) out[i] = memo_.at({i, v});
  }

 private:
  PredictOptions options_at(const Values& v, std::unique_ptr<kernels::KernelCostModel>& model) const {
    PredictOptions o = base_;
    auto kernel_params = req_.kernel_params;
    bool kernel = false;
    for (std::size_t p = 0; p < req_.params.size(); ++p) {
      const auto& name = req_.params[p].name;
      if (kernels::is_kernel_param(name)) {
        kernels::set_kernel_param(kernel_params, name, v[p], "--split-half");
        kernel = true;
      } else {
        workload::set_step_param(o.params, name, v[p]);
      }
    }
    if (kernel) {
      model = req_.kernel_model_for(kernel_params);
      o.kernels = model.get();
    }
    return o;
  }

  const config::CsvTable& table_;
  const Resolvers& resolve_;
  const PredictOptions& base_;
  const SplitHalfRequest& req_;
  std::vector<double> measured_;
  std::vector<std::string> ids_;
  std::map<std::pair<std::size_t, Values>, std::optional<double>> memo_;
};

RowsScore score(const RowPredictor& rp, const std::vector<std::size_t>& rows, const Predictions& pred) {
  RowsScore s;
  std::vector<double> errors;
  double sum = 0;
  for (auto i : rows) {
    if (!pred[i] || !(*pred[i] > 0) || !(rp.measured(i) > 0)) continue;
    sum += std::fabs(std::log(*pred[i] / rp.measured(i)));
    errors.push_back(100.0 * std::fabs(*pred[i] / rp.measured(i) - 1));
  }
  s.n = static_cast<int>(errors.size());
  if (s.n == 0) return s;
  s.mean_abs_log = sum / s.n;
  s.median_pct = percentile(errors, 0.5);
  s.p90_pct = percentile(errors, 0.9);
  s.max_pct = *std::max_element(errors.begin(), errors.end());
  return s;
}

std::vector<std::size_t> intersect(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
  std::vector<std::size_t> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Coordinate descent over the parameters not in `fixed`, on `rows`, from `start`: per pass, each parameter in turn
// by a golden-section search on its logarithm between its bounds (the starting value is a candidate too). A value
// at which fewer rows are predicted than at the start is no candidate.
Values coordinate_fit(RowPredictor& rp, const SplitHalfRequest& req,
                      const std::vector<std::vector<std::size_t>>& moving, const std::vector<std::size_t>& rows,
                      Values start, const std::vector<bool>& fixed, int passes) {
  Values cur = std::move(start);
  Predictions pred;
  rp.predict(rows, cur, pred);
  const int n_start = score(rp, rows, pred).n;
  for (int pass = 0; pass < passes; ++pass) {
    bool moved = false;
    for (std::size_t p = 0; p < req.params.size(); ++p) {
      const auto dep = intersect(rows, moving[p]);
      if (fixed[p] || dep.empty()) continue;
      const auto& fp = req.params[p];
      std::map<double, double> objective;
      auto eval = [&](double v) {
        if (auto it = objective.find(v); it != objective.end()) return it->second;
        Values trial = cur;
        trial[p] = v;
        Predictions tp = pred;
        rp.predict(dep, trial, tp);
        const auto s = score(rp, rows, tp);
        return objective[v] = s.n < n_start ? std::numeric_limits<double>::infinity() : s.mean_abs_log;
      };
      auto f = [&](double log_value) { return eval(std::exp(log_value)); };
      eval(cur[p]);
      golden_section(f, std::log(fp.lo), std::log(fp.hi), req.evaluations);
      double best = cur[p];
      for (const auto& [v, o] : objective)
        if (o < objective[best]) best = v;
      if (std::fabs(std::log(best / cur[p])) > 0.01) moved = true;
      cur[p] = best;
      rp.predict(dep, cur, pred);
    }
    if (!moved) break;
  }
  return cur;
}

void say(const SplitHalfRequest& req, const std::string& what, const Values& v, const RowsScore& s) {
  if (!req.log) return;
  std::string line = what + ":";
  for (std::size_t p = 0; p < v.size(); ++p) line += " " + req.params[p].name + "=" + std::to_string(v[p]);
  req.log(line + "; scored rows mean |ln| " + std::to_string(s.mean_abs_log) + ", median " +
          std::to_string(s.median_pct) + " %");
}

}  // namespace

SplitHalfResult split_half_check(const config::CsvTable& table, const Resolvers& resolve, const PredictOptions& base,
                                 const SplitHalfRequest& req) {
  SplitHalfResult out;
  out.params = req.params;
  const bool any_kernel = std::any_of(req.params.begin(), req.params.end(),
                                      [](const FittedParam& p) { return kernels::is_kernel_param(p.name); });
  if (any_kernel && !req.kernel_model_for) throw InternalError("split_half_check: kernel constant without a factory");
  for (const auto& p : req.params) {
    require_general_param(p.name, "--split-half");
    if (!(p.lo > 0 && p.lo < p.hi && p.unfitted >= p.lo && p.unfitted <= p.hi))
      throw ConfigError({{"<flags>", "--split-half", "bounds of \"" + p.name + "\" must satisfy 0 < lo < hi"}});
    out.builtin.push_back(kernels::is_kernel_param(p.name) ? kernels::get_kernel_param(req.kernel_params, p.name)
                                                           : workload::get_step_param(base.params, p.name));
  }
  RowPredictor rp(table, resolve, base, req);
  std::vector<std::size_t> all(rp.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;

  // Which rows move with each parameter: predicted at its two bounds, the others at their built-in values.
  Predictions at_builtin;
  rp.predict(all, out.builtin, at_builtin);
  std::vector<std::vector<std::size_t>> moving(req.params.size());
  for (std::size_t p = 0; p < req.params.size(); ++p) {
    Predictions lo, hi;
    Values v = out.builtin;
    v[p] = req.params[p].lo;
    rp.predict(all, v, lo);
    v[p] = req.params[p].hi;
    rp.predict(all, v, hi);
    std::vector<std::string> ids;
    for (auto i : all) {
      const bool differs =
          lo[i].has_value() != hi[i].has_value() || (lo[i] && hi[i] && std::fabs(*hi[i] / *lo[i] - 1) > 1e-9);
      if (!differs) continue;
      moving[p].push_back(i);
      ids.push_back(rp.id(i));
    }
    out.moving_rows.push_back(ids);
  }

  const std::vector<bool> none_fixed(req.params.size(), false);
  out.full_at_builtin = score(rp, all, at_builtin);
  out.full_fit = coordinate_fit(rp, req, moving, all, out.builtin, none_fixed, req.full_passes);
  Predictions at_full;
  rp.predict(all, out.full_fit, at_full);
  out.full_at_full_fit = score(rp, all, at_full);
  say(req, "full fit", out.full_fit, out.full_at_full_fit);

  for (const auto& rule : req.splits) {
    SplitCheck sc;
    sc.split = rule.name;
    sc.rule = rule.rule;
    std::vector<std::size_t> fit, judge;
    for (auto i : all) {
      if (!at_builtin[i]) continue;  // a row the model cannot predict is in neither half
      (rule.fit_half(id_number(rp.id(i))) ? fit : judge).push_back(i);
    }
    sc.fit_rows = static_cast<int>(fit.size());
    sc.judge_rows = static_cast<int>(judge.size());
    sc.half_fit = coordinate_fit(rp, req, moving, fit, out.full_fit, none_fixed, req.half_passes);
    Predictions pred;
    rp.predict(all, sc.half_fit, pred);
    sc.fit_at_half_fit = score(rp, fit, pred);
    sc.judge_at_half_fit = score(rp, judge, pred);
    sc.judge_at_full_fit = score(rp, judge, at_full);
    say(req, rule.name + " half fit", sc.half_fit, sc.judge_at_half_fit);
    for (std::size_t p = 0; p < req.params.size() && rule.unfitted_checks; ++p) {
      UnfittedCheck u;
      u.name = req.params[p].name;
      Values start = sc.half_fit;
      start[p] = req.params[p].unfitted;
      std::vector<bool> fixed(req.params.size(), false);
      fixed[p] = true;
      u.values = coordinate_fit(rp, req, moving, fit, start, fixed, req.half_passes);
      Predictions up;
      rp.predict(judge, u.values, up);
      u.judge = score(rp, judge, up);
      say(req, rule.name + " " + u.name + " unfitted", u.values, u.judge);
      sc.unfitted.push_back(u);
    }
    out.splits.push_back(sc);
  }
  return out;
}

}  // namespace moesim::validate
