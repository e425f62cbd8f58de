#pragma once
// SYNTHETIC calibration records for tests only: times are generated from known coefficients (plus seeded
// noise), never measured. Nothing here may be written into kernels-sim/data/.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/fit/features.hpp"
#include "kernels/fit/gpu_peaks.hpp"
#include "kernels/fit/record.hpp"

namespace synthetic {

inline moesim::kernels::fit::CalibrationRecord base_record(const std::string& kernel, const std::string& dtype) {
  moesim::kernels::fit::CalibrationRecord r;
  r.kernel = kernel;
  r.dtype = dtype;
  r.repeats = 20;
  r.gpu = {"NVIDIA H200", 132, 1980, 3201, "9.0"};
  r.driver = "test";
  r.cuda = "test";
  r.date = "2025-01-01";
  r.source = "SYNTHETIC test data (tests/kernels/test_fit_synthetic.hpp), not a measurement";
  r.location = "synthetic";
  return r;
}

// Sets the record's time to sum_i c_i f_i times (1 + noise), noise uniform in [-rel_noise, rel_noise].
inline void set_time(moesim::kernels::fit::CalibrationRecord& r, const std::vector<double>& coeffs, double rel_noise,
                     std::mt19937& rng) {
  const auto peaks = *moesim::kernels::fit::find_gpu_peaks(r.gpu.name);
  const auto f = moesim::kernels::fit::feature_vector(r, peaks);
  double t = 0;
  for (std::size_t i = 0; i < f.size(); ++i) t += coeffs[i] * f[i];
  std::uniform_real_distribution<double> u(-rel_noise, rel_noise);
  t *= 1 + u(rng);
  r.time = {t, t * 0.98, t * 1.02};
}

// Dense BF16 GEMMs over a grid of shapes that separates flops, bytes and wave waste.
inline std::vector<moesim::kernels::fit::CalibrationRecord> gemm_records(const std::vector<double>& coeffs,
                                                                         double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<moesim::kernels::fit::CalibrationRecord> out;
  for (long m : {64, 200, 1000, 4096, 9000})
    for (long n : {576, 2048, 7168})
      for (long k : {512, 2048, 7168}) {
        auto r = base_record("gemm", "bf16");
        r.shape = {{"m", m}, {"n", n}, {"k", k}};
        set_time(r, coeffs, noise, rng);
        out.push_back(r);
      }
  return out;
}

inline std::vector<moesim::kernels::fit::CalibrationRecord> rmsnorm_records(const std::vector<double>& coeffs,
                                                                            double noise, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<moesim::kernels::fit::CalibrationRecord> out;
  for (long tokens : {256, 1024, 4096, 16384})
    for (long hidden : {1024, 4096, 7168}) {
      auto r = base_record("rmsnorm", "bf16");
      r.shape = {{"tokens", tokens}, {"hidden", hidden}};
      set_time(r, coeffs, noise, rng);
      out.push_back(r);
    }
  return out;
}

inline moesim::kernels::fit::CalibrationData as_data(std::vector<moesim::kernels::fit::CalibrationRecord> recs) {
  moesim::kernels::fit::CalibrationData d;
  d.records = std::move(recs);
  d.files = {"synthetic.jsonl"};
  d.hash = "fnv1a64:0000000000000000";
  return d;
}

}  // namespace synthetic
