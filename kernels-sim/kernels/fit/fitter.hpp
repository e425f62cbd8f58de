#pragma once
// Least-squares fitting of the kernel cost-model families (features.hpp) to calibration records.
//
// Each family is fitted separately by weighted linear least squares with weights 1/measured time, i.e. it
// minimises the sum of squared *relative* errors, so microsecond kernels count as much as millisecond ones.
// A family is refused when its data implies something unphysical, and then skipped with the reason, never fatal to
// the other families (unless `strict`: then ConfigError, exit code 2):
//   - a negative coefficient (a kernel that gets faster with more work or more bytes),
//   - a measurement faster than its roofline bound max(flops/peak, bytes/hbm_bw) by more than
//     `roofline_tolerance` (the peak table, the byte count or the record is wrong).
// Also skipped with the reason, not guessed: families with too few timed records (fewer than coefficients +
// min_extra_records), families whose features the data does not pin down (rank-deficient design), kernels with no
// cost model (communication), and "*_reference" dtypes (a naive reference kernel, kept as data, never fitted).
// Skip records (configurations the run could not time) are counted per family in the reason, never fitted.
// Always fatal (ConfigError): records from more than one GPU, or a GPU missing from the peak table.
#include <string>
#include <vector>

#include "kernels/fit/fit_file.hpp"
#include "kernels/fit/record.hpp"

namespace moesim::kernels::fit {

struct FitOptions {
  double roofline_tolerance = 0.05;  // a record may beat its roofline bound by at most 5% (clock boost, noise)
  int min_extra_records = 2;         // records needed beyond the number of coefficients
  bool strict = false;               // an unphysical family is an error for the whole fit, not a skipped family
  // Least squares under c >= 0 (exact: the best of the unconstrained fits on every subset of the features whose
  // coefficients come out non-negative) instead of refusing a family whose free fit has a negative coefficient.
  // The features held at zero are marked in the fit file (Coefficient::held_at_zero). For data whose shapes are
  // too large for a feature to be seen (a launch constant under millisecond GEMMs) or whose effect the linear
  // model cannot express (clocks falling under sustained load make big kernels relatively slower).
  bool nonnegative = false;
};

FitFile fit_calibration(const CalibrationData& data, const FitOptions& options = {});

}  // namespace moesim::kernels::fit
