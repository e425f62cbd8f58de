#include "kernels/fit/fitter.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <Eigen/Dense>

#include "kernels/fit/features.hpp"

namespace moesim::kernels::fit {
namespace {

std::string format(double v) {
  std::ostringstream s;
  s.precision(4);
  s << v;
  return s.str();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

const GpuPeaks& peaks_for(const CalibrationData& data, GpuPeaks& storage) {
  const std::string& name = data.records.front().gpu.name;
  Diagnostics diags;
  for (const auto& r : data.records)
    if (r.gpu.name != name)
      diags.add(
          r.location, "/gpu/name",
          "records from more than one GPU (\"" + name + "\" and \"" + r.gpu.name + "\"): keep one GPU per data folder");
  diags.throw_if_any();
  auto p = find_gpu_peaks(name);
  if (!p)
    throw ConfigError({{data.records.front().location, "/gpu/name",
                        "GPU \"" + name + "\" is not in the peak table (kernels-sim/kernels/fit/gpu_peaks.cpp)"}});
  storage = *p;
  return storage;
}

// Fits one family. Returns the fit, or sets `skip_reason` when the data cannot determine it. Unphysical
// results (negative coefficients) are added to `errors`.
// Least squares under c >= 0 on the scaled design: the optimum has some support S and is there the unconstrained
// fit, so the best of the non-negative unconstrained fits over all subsets is exact (families have at most 5
// features: 31 subsets). `held[j]` is set for the features left out. Returns the unscaled coefficients.
Eigen::VectorXd nonnegative_solution(const Eigen::MatrixXd& xw, const Eigen::VectorXd& yw, const Eigen::VectorXd& scale,
                                     std::vector<bool>& held) {
  const auto p = xw.cols();
  Eigen::VectorXd best = Eigen::VectorXd::Zero(p);
  double best_residual = yw.squaredNorm();
  unsigned best_mask = 0;
  for (unsigned mask = 1; mask < (1u << p); ++mask) {
    std::vector<Eigen::Index> cols;
    for (Eigen::Index j = 0; j < p; ++j)
      if (mask & (1u << j)) cols.push_back(j);
    Eigen::MatrixXd sub(xw.rows(), static_cast<Eigen::Index>(cols.size()));
    for (std::size_t i = 0; i < cols.size(); ++i) sub.col(static_cast<Eigen::Index>(i)) = xw.col(cols[i]);
    const Eigen::VectorXd b = sub.colPivHouseholderQr().solve(yw);
    if (b.minCoeff() < 0) continue;
    const double residual = (sub * b - yw).squaredNorm();
    if (residual >= best_residual) continue;
    best_residual = residual;
    best_mask = mask;
    best.setZero();
    for (std::size_t i = 0; i < cols.size(); ++i) best(cols[i]) = b(static_cast<Eigen::Index>(i));
  }
  for (Eigen::Index j = 0; j < p; ++j) held[static_cast<std::size_t>(j)] = !(best_mask & (1u << j));
  return best.cwiseQuotient(scale);
}

FamilyFit fit_family(const std::string& key, const std::vector<const CalibrationRecord*>& recs, const FamilySpec& spec,
                     const GpuPeaks& peaks, bool nonnegative, std::string& skip_reason, Diagnostics& errors) {
  const auto n = static_cast<Eigen::Index>(recs.size());
  const auto p = static_cast<Eigen::Index>(spec.features.size());
  Eigen::MatrixXd x(n, p);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto f = feature_vector(*recs[static_cast<std::size_t>(i)], peaks);
    for (Eigen::Index j = 0; j < p; ++j) x(i, j) = f[static_cast<std::size_t>(j)];
    y(i) = recs[static_cast<std::size_t>(i)]->time.median_us;
  }
  // Relative-error weighting, then unit-norm columns so the rank test does not depend on units.
  const Eigen::VectorXd w = y.cwiseInverse();
  Eigen::MatrixXd xw = w.asDiagonal() * x;
  const Eigen::VectorXd yw = Eigen::VectorXd::Ones(n);
  Eigen::VectorXd scale(p);
  for (Eigen::Index j = 0; j < p; ++j) {
    scale(j) = xw.col(j).norm();
    if (!(scale(j) > 0)) {
      skip_reason = "feature " + spec.features[static_cast<std::size_t>(j)].name + " is zero for every record";
      return {};
    }
    xw.col(j) /= scale(j);
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(xw);
  qr.setThreshold(1e-8);
  if (qr.rank() < p) {
    std::string missing;
    for (Eigen::Index j = qr.rank(); j < p; ++j)
      missing += (missing.empty() ? "" : ", ") +
                 spec.features[static_cast<std::size_t>(qr.colsPermutation().indices()(j))].name;
    skip_reason = "the shapes do not separate the features (rank " + std::to_string(qr.rank()) + " of " +
                  std::to_string(p) + "; undetermined: " + missing + "); sweep more varied shapes";
    return {};
  }
  Eigen::VectorXd beta = qr.solve(yw).cwiseQuotient(scale);
  std::vector<bool> held(static_cast<std::size_t>(p), false);
  if (nonnegative && beta.minCoeff() < 0) beta = nonnegative_solution(xw, yw, scale, held);

  FamilyFit fit;
  fit.family = key;
  fit.kernel = recs.front()->kernel;
  fit.dtype = family_dtype(*recs.front());
  fit.model = spec.model;
  fit.n = n;
  const double mean_y = y.mean();
  for (Eigen::Index j = 0; j < p; ++j) {
    const auto& fs = spec.features[static_cast<std::size_t>(j)];
    double c = beta(j);
    // A coefficient whose whole contribution is below 1e-9 of the mean time is zero up to rounding.
    if (c < 0 && std::abs(c) * x.col(j).cwiseAbs().mean() < 1e-9 * mean_y) c = 0;
    if (held[static_cast<std::size_t>(j)]) c = 0;
    if (c < 0)
      errors.add(key, "",
                 "coefficient of " + fs.name + " (" + fs.definition + ") is " + format(c) +
                     ", negative: the data says this kernel gets faster with more of it (n=" + std::to_string(n) +
                     "). Check the records' shapes and dtypes, or sweep shapes that separate the features.");
    fit.coefficients.push_back({fs.name, fs.unit, fs.definition, c, held[static_cast<std::size_t>(j)]});
  }
  std::vector<double> rel(static_cast<std::size_t>(n));
  double ss_res = 0, ss_tot = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    double pred = 0;
    for (Eigen::Index j = 0; j < p; ++j) pred += fit.coefficients[static_cast<std::size_t>(j)].value * x(i, j);
    rel[static_cast<std::size_t>(i)] = std::abs(pred - y(i)) / y(i);
    ss_res += (pred - y(i)) * (pred - y(i));
    ss_tot += (y(i) - mean_y) * (y(i) - mean_y);
  }
  fit.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
  fit.median_rel_error = median(rel);
  fit.max_rel_error = *std::max_element(rel.begin(), rel.end());
  return fit;
}

// The host-cost records a fit file carries: each measured op and mode with its medians.
std::vector<HostCost> summarise_host_costs(const std::vector<HostCostRecord>& records) {
  std::vector<HostCost> out;
  for (const auto& h : records)
    if (h.skipped.empty())
      out.push_back(
          {h.op, h.mode, h.what, h.issue_us_per_op.median_us, h.wall_us_per_op.median_us, h.ops_per_repeat, h.repeats});
  return out;
}

bool is_reference(const std::string& dtype) {
  const std::string suffix = "_reference";
  return dtype.size() >= suffix.size() && dtype.compare(dtype.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// " (and k skip records)" when the run could not time k configurations of the family.
std::string skip_note(std::int64_t skips) {
  return skips > 0 ? " (and " + std::to_string(skips) + " skip record" + (skips > 1 ? "s" : "") + " not timed)" : "";
}

}  // namespace

FitFile fit_calibration(const CalibrationData& data, const FitOptions& options) {
  std::vector<const CalibrationRecord*> timed;
  std::map<std::string, std::int64_t> skips;
  for (const auto& r : data.records) {
    if (r.skipped.empty())
      timed.push_back(&r);
    else
      ++skips[family_key(r)];
  }
  if (timed.empty()) throw ConfigError({{"<fit>", "", "no timed kernel records (only skip or host-cost records)"}});
  CalibrationData timed_data;  // for the GPU check: one GPU across every timed record
  for (const auto* r : timed) timed_data.records.push_back(*r);
  GpuPeaks storage;
  const GpuPeaks& peaks = peaks_for(timed_data, storage);

  FitFile out;
  out.gpu = timed.front()->gpu.name;
  out.peaks = peaks;
  out.data_hash = data.hash;
  out.inputs = data.files;
  out.records = static_cast<std::int64_t>(timed.size());
  for (const auto* r : timed)
    if (std::find(out.sources.begin(), out.sources.end(), r->source) == out.sources.end())
      out.sources.push_back(r->source);

  std::map<std::string, std::vector<const CalibrationRecord*>> by_family;
  for (const auto* r : timed) by_family[family_key(*r)].push_back(r);
  for (const auto& [key, n] : skips)
    if (!by_family.count(key)) out.skipped.push_back({key, 0, "every configuration was a skip record" + skip_note(n)});

  Diagnostics fatal;
  for (const auto& [key, recs] : by_family) {
    const auto n = static_cast<std::int64_t>(recs.size());
    const std::string note = skip_note(skips.count(key) ? skips.at(key) : 0);
    const auto spec = family_for_kernel(recs.front()->kernel);
    if (!spec) {
      out.skipped.push_back(
          {key, n, "no cost-model family for kernel \"" + recs.front()->kernel + "\" (kept as data)" + note});
      continue;
    }
    if (is_reference(recs.front()->dtype)) {
      out.skipped.push_back(
          {key, n, "a reference kernel, not the one a training step runs: kept as data, never fitted"});
      continue;
    }
    Diagnostics errors;
    for (const auto* r : recs) {
      const double bound = roofline_bound_us(*r, peaks);
      if (r->time.median_us < bound * (1 - options.roofline_tolerance))
        errors.add(r->location, "/time_us/median",
                   "measured " + format(r->time.median_us) + " us is faster than the roofline bound " + format(bound) +
                       " us on " + peaks.key + " (unphysical: wrong shape, dtype or peak table)");
    }
    const auto needed = static_cast<std::int64_t>(spec->features.size()) + options.min_extra_records;
    std::string skip_reason;
    FamilyFit fit;
    if (n < needed) {
      skip_reason = "too few records: " + std::to_string(n) + ", need at least " + std::to_string(needed);
    } else if (errors.empty()) {
      fit = fit_family(key, recs, *spec, peaks, options.nonnegative, skip_reason, errors);
    }
    if (!errors.empty()) {
      for (const auto& d : errors.items()) fatal.add(d.file, d.pointer, d.message);
      // Refused: the family is reported with its first reason (and how many more), the others go on.
      const auto& first = errors.items().front();
      const auto more = errors.items().size() - 1;
      skip_reason = "refused, unphysical: " + first.file + (first.pointer.empty() ? "" : ":" + first.pointer) + ": " +
                    first.message + (more > 0 ? " (and " + std::to_string(more) + " more)" : "");
    }
    if (!skip_reason.empty()) {
      out.skipped.push_back({key, n, skip_reason + note});
      continue;
    }
    out.families.push_back(std::move(fit));
    // The fitted family's shapes are its table: a kernel of one of them costs its measurement, not the fit.
    const auto entries = table_entries(recs);
    out.table.insert(out.table.end(), entries.begin(), entries.end());
  }
  if (options.strict) fatal.throw_if_any();
  for (const auto& h : data.host_costs)  // host costs belong to the machine of the kernel records
    if (h.gpu.name != out.gpu)
      throw ConfigError({{h.location, "/gpu/name",
                          "host-cost record from \"" + h.gpu.name + "\" beside kernel records from \"" + out.gpu +
                              "\": keep one GPU machine per data folder"}});
  out.host_costs = summarise_host_costs(data.host_costs);
  return out;
}

}  // namespace moesim::kernels::fit
