#pragma once
// Named scalar constants of KernelEfficiencyParams, for `--param name=value` what-if runs and for refitting a
// kernel constant to published step measurements (`moesim validate --fit NAME=LO:HI`), next to the step
// parameters of workload/step_params.hpp. Only constants that are one number across the model have a name:
//   hbm_fraction                         streaming fraction of datasheet HBM bandwidth (GEMM / attention memory term)
//   elementwise_hbm_fraction_hopper      what memory-bound kernels reach inside a training step, Hopper
//   elementwise_hbm_fraction_blackwell   the same on Blackwell and Blackwell Ultra (one value for both: they share
//                                        the HBM3e 8 TB/s memory system and the software that runs on it)
//   kernel_fixed_us                      device time every kernel pays
//   grouped_gemm_overhead_rows           extra rows per non-empty expert in a grouped GEMM
//   gemm_ceiling_mxfp8_blackwell         MXFP8 GEMM ceiling fraction on Blackwell and Blackwell Ultra (fitted)
#include <string>
#include <vector>

#include "kernels/efficiency_params.hpp"

namespace moesim::kernels {

std::vector<std::string> kernel_param_names();
bool is_kernel_param(const std::string& name);

// Sets a named constant; `source` says where the value came from (the flag: "--param", "--fit") and is recorded
// in the changed row's source and in the set's, and names the flag of a ConfigError for a value out of range
// (fractions in (0, 1], the others >= 0). An unknown name is a ConfigError with a did-you-mean.
void set_kernel_param(KernelEfficiencyParams& params, const std::string& name, double value, const std::string& source);
double get_kernel_param(const KernelEfficiencyParams& params, const std::string& name);

}  // namespace moesim::kernels
