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
// results are added to `errors`.
FamilyFit fit_family(const std::string& key, const std::vector<const CalibrationRecord*>& recs, const FamilySpec& spec,
                     const GpuPeaks& peaks, std::string& skip_reason, Diagnostics& errors) {
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

  FamilyFit fit;
  fit.family = key;
  fit.kernel = recs.front()->kernel;
  fit.dtype = recs.front()->dtype;
  fit.model = spec.model;
  fit.n = n;
  const double mean_y = y.mean();
  for (Eigen::Index j = 0; j < p; ++j) {
    const auto& fs = spec.features[static_cast<std::size_t>(j)];
    double c = beta(j);
    // A coefficient whose whole contribution is below 1e-9 of the mean time is zero up to rounding.
    if (c < 0 && std::abs(c) * x.col(j).cwiseAbs().mean() < 1e-9 * mean_y) c = 0;
    if (c < 0)
      errors.add(key, "",
                 "coefficient of " + fs.name + " (" + fs.definition + ") is " + format(c) +
                     ", negative: the data says this kernel gets faster with more of it (n=" + std::to_string(n) +
                     "). Check the records' shapes and dtypes, or sweep shapes that separate the features.");
    fit.coefficients.push_back({fs.name, fs.unit, fs.definition, c});
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

}  // namespace

FitFile fit_calibration(const CalibrationData& data, const FitOptions& options) {
  if (data.records.empty()) throw ConfigError({{"<fit>", "", "no calibration records"}});
  GpuPeaks storage;
  const GpuPeaks& peaks = peaks_for(data, storage);

  FitFile out;
  out.gpu = data.records.front().gpu.name;
  out.peaks = peaks;
  out.data_hash = data.hash;
  out.inputs = data.files;
  out.records = static_cast<std::int64_t>(data.records.size());

  std::map<std::string, std::vector<const CalibrationRecord*>> by_family;
  for (const auto& r : data.records) by_family[family_key(r)].push_back(&r);

  Diagnostics errors;
  for (const auto& [key, recs] : by_family) {
    const auto n = static_cast<std::int64_t>(recs.size());
    const auto spec = family_for_kernel(recs.front()->kernel);
    if (!spec) {
      out.skipped.push_back(
          {key, n, "no cost-model family for kernel \"" + recs.front()->kernel + "\" (kept as data)"});
      continue;
    }
    for (const auto* r : recs) {
      const double bound = roofline_bound_us(*r, peaks);
      if (r->time.median_us < bound * (1 - options.roofline_tolerance))
        errors.add(r->location, "/time_us/median",
                   "measured " + format(r->time.median_us) + " us is faster than the roofline bound " + format(bound) +
                       " us on " + peaks.key + " (unphysical: wrong shape, dtype or peak table)");
    }
    const auto needed = static_cast<std::int64_t>(spec->features.size()) + options.min_extra_records;
    if (n < needed) {
      out.skipped.push_back(
          {key, n, "too few records: " + std::to_string(n) + ", need at least " + std::to_string(needed)});
      continue;
    }
    std::string skip_reason;
    FamilyFit fit = fit_family(key, recs, *spec, peaks, skip_reason, errors);
    if (!skip_reason.empty()) {
      out.skipped.push_back({key, n, skip_reason});
      continue;
    }
    out.families.push_back(std::move(fit));
  }
  errors.throw_if_any();
  return out;
}

}  // namespace moesim::kernels::fit
