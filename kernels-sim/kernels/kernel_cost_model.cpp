#include "kernels/kernel_cost_model.hpp"

#include "kernels/roofline_model.hpp"

namespace moesim::kernels {

const char* to_string(KernelSource s) {
  switch (s) {
    case KernelSource::table: return "table";
    case KernelSource::interpolated: return "interpolated";
    case KernelSource::fit: return "fit";
    case KernelSource::roofline: return "roofline";
  }
  return "roofline";
}

void register_builtin_kernel_cost_models(KernelCostModelRegistry& registry) {
  registry.add("roofline",
               "peak FLOP/s and HBM roofline with GEMM wave-quantisation, grouped-GEMM per-expert and attention "
               "sequence-length efficiency curves (hardware.md §5)",
               [] { return std::make_unique<RooflineKernelCostModel>(); });
}

KernelCostModelRegistry kernel_cost_model_registry() {
  KernelCostModelRegistry registry("kernel cost model");
  register_builtin_kernel_cost_models(registry);
  return registry;
}

std::unique_ptr<KernelCostModel> make_kernel_cost_model(const std::string& name) {
  return kernel_cost_model_registry().make(name);
}

}  // namespace moesim::kernels
