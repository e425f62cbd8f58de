#pragma once
// How well a fit and the built-in roofline each predict the measurements the fit was made from: the "before and
// after" of a calibration, per family (median, p90 and max relative error). Printed by `moesim fit` when the
// records' GPU is in the catalog.
#include <optional>
#include <string>
#include <vector>

#include "kernels/device_rates.hpp"
#include "kernels/efficiency_params.hpp"
#include "kernels/fit/fit_file.hpp"
#include "kernels/fit/record.hpp"
#include "kernels/kernel.hpp"

namespace moesim::kernels {

// The simulator kernel a calibration record measured, or nullopt when the simulator has none for it (router
// top-k's one-kernel stand-in, communication kernels, a dtype without a DType). Memory-bound kernels carry the
// fitter's byte count (their feature), so the roofline and the fit see the same bytes.
std::optional<Kernel> kernel_of_record(const fit::CalibrationRecord& record, const fit::GpuPeaks& peaks);

struct RelativeErrors {
  int n = 0;
  double median = 0, p90 = 0, max = 0;  // of |predicted - measured| / measured, nearest rank
  double median_signed = 0;             // of (predicted - measured) / measured: < 0 = predicted too fast
};

struct FamilyComparison {
  std::string family;
  RelativeErrors fit;       // the family's own fit (unclamped, as fitted)
  RelativeErrors roofline;  // the built-in roofline on `device`; n = 0 when no record maps to a simulator kernel
};

// Every fitted family of `fit`, over the timed records of `data` in that family.
std::vector<FamilyComparison> compare_fit_with_roofline(
    const fit::FitFile& fit, const fit::CalibrationData& data, const DeviceRates& device,
    const KernelEfficiencyParams& roofline = builtin_kernel_efficiency());

}  // namespace moesim::kernels
