#pragma once
// KernelCostModel: the one interface through which the engine and the analytical path ask "how long does this
// kernel take on this GPU". Implementations are registered by name (register_builtin_kernel_cost_models); the
// roofline model (roofline_model.hpp) is the built-in one, and a fitted model from kernels/fit/ implements the
// same interface (or reuses RooflineKernelCostModel with fitted KernelEfficiencyParams).
//
// Contract for every implementation:
//   - seconds() is finite, > 0 for any kernel with work, deterministic, and free of side effects (models are
//     shared across threads by search);
//   - more work never takes less time, and higher peak FLOP/s or HBM bandwidth never takes more;
//   - a kernel the device cannot run (FP4 on Hopper) throws InfeasibleError; a parameter set lacking a row the
//     kernel needs throws ConfigError.
#include <memory>
#include <string>

#include "core/registry.hpp"
#include "kernels/device_rates.hpp"
#include "kernels/kernel.hpp"

namespace moesim::kernels {

// Where a kernel's time came from, most trusted first: the measured time of its shape, an interpolation between two
// measured shapes of its family, a model fitted to measurements, or the roofline with its published efficiencies.
enum class KernelSource { table, interpolated, fit, roofline };
const char* to_string(KernelSource s);

class KernelCostModel {
 public:
  virtual ~KernelCostModel() = default;
  virtual double seconds(const Kernel& kernel, const DeviceRates& device) const = 0;
  // Where seconds() takes this kernel's time from (the same rules, no other effect).
  virtual KernelSource source(const Kernel&, const DeviceRates&) const { return KernelSource::roofline; }
  // Registered name ("roofline") plus, where useful, where its parameters came from.
  virtual std::string name() const = 0;
};

using KernelCostModelRegistry = Registry<std::unique_ptr<KernelCostModel>()>;

// Adds the built-in models: "roofline" (built-in efficiency parameters from hardware.md §5).
void register_builtin_kernel_cost_models(KernelCostModelRegistry& registry);

// A registry holding the built-in models (callers add fitted models to it before making one).
KernelCostModelRegistry kernel_cost_model_registry();

// Convenience: kernel_cost_model_registry().make(name). Unknown names are a ConfigError listing the known ones.
std::unique_ptr<KernelCostModel> make_kernel_cost_model(const std::string& name);

}  // namespace moesim::kernels
