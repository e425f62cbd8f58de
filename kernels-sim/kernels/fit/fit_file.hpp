#pragma once
// The fit file, kernels-sim/fits/<gpu>.json: fitted coefficients of every kernel family for one GPU, with the
// quality of each fit and what it was fitted from. Written by `moesim fit`, read by the kernel cost models.
// Format: kernels-sim/fits/README.md. write_fit_file and parse_fit_file round-trip exactly.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/fit/gpu_peaks.hpp"
#include "kernels/fit/measured_table.hpp"

namespace moesim::kernels::fit {

inline constexpr const char* fit_schema = "moesim.kernel_fit/1";

struct Coefficient {
  std::string name;        // feature name, see features.hpp
  std::string unit;        // "us" for constant-like terms, "1" for multipliers of a time
  std::string definition;  // the feature's formula
  double value = 0;
  bool held_at_zero = false;  // the non-negative fit (FitOptions::nonnegative) held it at 0: the data wanted < 0
};

struct FamilyFit {
  std::string family;  // "gemm/bf16": kernel/dtype
  std::string kernel;
  std::string dtype;
  std::string model;            // "gemm", "grouped_gemm", "attention", "memory_bound"
  std::int64_t n = 0;           // records fitted
  double r2 = 0;                // coefficient of determination on the times
  double median_rel_error = 0;  // median |predicted - measured| / measured
  double max_rel_error = 0;
  std::vector<Coefficient> coefficients;  // in feature order

  // sum_i c_i * f_i for a feature vector from feature_vector(); InternalError when the length differs.
  double predict_us(const std::vector<double>& features) const;
};

// A family present in the data but not fitted, and why (too few records, features not determined, no model).
struct SkippedFamily {
  std::string family;
  std::int64_t n = 0;
  std::string reason;
};

// Host overhead of one framework op kind, from host-cost records (kernels-sim/cuda/calib_host.py): data for the
// step builder's host model; nothing reads it yet (the builder's host factors are fitted, docs/workload-model.md).
struct HostCost {
  std::string op;    // "add", "mm", ...
  std::string mode;  // "eager" or "cuda_graph"
  std::string what;
  double issue_us_per_op = 0;  // median host time to issue one op
  double wall_us_per_op = 0;   // median time per op until the GPU finished
  std::int64_t ops_per_repeat = 0;
  std::int64_t repeats = 0;
};

struct FitFile {
  std::string gpu;                  // GPU name from the records
  GpuPeaks peaks;                   // the peak rates the features were computed with
  std::string data_hash;            // CalibrationData::hash of the input
  std::vector<std::string> inputs;  // input file names
  std::int64_t records = 0;
  std::vector<std::string> sources;  // the records' distinct `source` (who measured), in first-seen order
  std::vector<FamilyFit> families;
  std::vector<SkippedFamily> skipped;
  std::vector<HostCost> host_costs;  // written only when there are some
  // Every timed shape of the fitted families (measured_table.hpp): what a kernel of a measured shape costs.
  // Written only when there are some (a fit file from before the table had none: fit only).
  std::vector<TableEntry> table;

  const FamilyFit* find(const std::string& family) const;  // nullptr when not fitted
};

// JSON text (2-space indent, trailing newline). Numbers are written with round-trip precision.
std::string write_fit_file(const FitFile& fit);

// Strict reading (unknown keys, wrong types and a wrong schema are errors); throws ConfigError listing all.
FitFile parse_fit_file(const std::string& text, const std::string& name);
FitFile read_fit_file(const std::filesystem::path& path);

}  // namespace moesim::kernels::fit
