#pragma once
// What a calibration run measures: every configuration of every suite of the CUDA program, as records with no
// time yet. Host-only, so the dry run (tools/calibrate.sh --dry-run), the rehearsal and the tests see exactly the
// configurations the GPU run times. The CUDA suites (gemm_lt.cu, grouped_gemm.cu, moe_kernels.cu, memcpy in
// calib_cuda.cu) only run a case and fill in its time, or its error.
#include <string>
#include <vector>

#include "calib_record.hpp"

namespace calib {

struct PlanOptions {
  bool quick = false;  // fewer shapes and repeats; still enough distinct shapes for every fitted family
  std::string only;    // comma-separated suite names; empty = all
  int cc_major = 9;    // compute capability of the GPU (MXFP8 only from 10, Blackwell)
};

struct Suite {
  std::string name;  // "gemm", "grouped_gemm", "moe", "memcpy"
  std::string what;  // one line for the dry run and the log
  int warmup = 5;    // untimed calls per configuration
  int repeats = 30;  // timed calls per configuration
  std::vector<Record> cases;
};

// The suites of this program, in run order.
const std::vector<std::string>& suite_names();

// The plan. Throws std::invalid_argument naming an unknown suite in `only`.
std::vector<Suite> make_plan(const PlanOptions& options);

// Rows per expert for a grouped GEMM: `balanced` (equal, remainder to the first experts) or Zipf-skewed with
// exponent 1.2 (a deterministic stand-in for imbalanced routing). Sums to `total`.
std::vector<long long> split_rows(long long total, int experts, bool skewed);

// The value of a named shape entry of a case (0 when absent).
long long dim(const Record& r, const char* name);

}  // namespace calib
