#pragma once
// Which kernel cost model a command uses: a GPU's fit file when there is one (or one is named), else the
// built-in roofline. `requested` is the --kernel-model value:
//   "auto" (or "")  <fits_dir>/<gpu>.json when that file exists, else the roofline. <gpu> is the catalog GPU
//                   name (SystemSpec::gpu.name: "h200-sxm", "gb200", ...); a file there that was fitted on
//                   another GPU is a ConfigError, never silently ignored.
//   "roofline"      the built-in roofline (kernels/roofline_model.hpp), whatever fits exist.
//   anything else   the path of a fit file; it must exist, read cleanly and match the GPU (fit_matches_gpu).
// The fit is wrapped in a FittedKernelCostModel (kernels/fitted_model.hpp): kernels it has no family for fall
// back to the roofline. Every error is a ConfigError (exit 2) naming the file. `roofline` holds the constants of
// the roofline, wherever it prices kernels (alone or as a fit's fallback): the built-in set unless --param
// changed one (kernels/efficiency_param_names.hpp).
#include <filesystem>
#include <memory>
#include <string>

#include "kernels/efficiency_params.hpp"
#include "kernels/kernel_cost_model.hpp"

namespace moesim::kernels {

struct KernelModelChoice {
  std::unique_ptr<KernelCostModel> model;
  // One line saying which model and why, starting with "fit: " or "roofline: ", e.g.
  // "roofline: auto found no fit file kernels-sim/fits/gb300.json for GPU gb300".
  std::string why;
};

// The model for cases on the catalog GPU `gpu_name`.
KernelModelChoice select_kernel_cost_model(const std::string& gpu_name, const std::filesystem::path& fits_dir,
                                           const std::string& requested,
                                           const KernelEfficiencyParams& roofline = builtin_kernel_efficiency());

// One model for commands predicting cases on several GPUs (validate): it prices each kernel with the model
// select_kernel_cost_model would pick for the device's GPU (DeviceRates::name). "auto" loads every
// <fits_dir>/<gpu>.json up front (each checked against its file name); a named fit file prices the GPUs it
// matches and the roofline prices the others.
KernelModelChoice select_kernel_cost_model_per_gpu(
    const std::filesystem::path& fits_dir, const std::string& requested,
    const KernelEfficiencyParams& roofline = builtin_kernel_efficiency());

// How a fit file is named in messages and model names: the path with its two enclosing folders
// ("kernels-sim/fits/h200-sxm.json"), or the whole path when it has fewer.
std::string fit_file_label(const std::filesystem::path& file);

}  // namespace moesim::kernels
