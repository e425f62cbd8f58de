#pragma once
// RooflineKernelCostModel: time = fixed + max(compute, memory), where
//   compute = FLOP / (peak(dtype) * efficiency) and memory = HBM bytes / (hbm_Bps * hbm_fraction), with
//   the architecture's elementwise fraction (where measured) instead for memory-bound kernels.
// Efficiency by kernel family (all parameters in KernelEfficiencyParams):
//   GEMM          ceiling(arch, dtype) x tile utilisation: the output is cut into tile_m x tile_n tiles spread in
//                 waves over sms / sms_per_tile units; padded tile rows/columns and the idle units of the last wave
//                 are wasted (wave quantisation).
//   grouped GEMM  as GEMM, with every expert's rows padded to tiles separately and all experts' tiles sharing the
//                 waves, plus grouped_gemm_overhead_rows extra rows of work per non-empty expert: small per-expert
//                 batches waste tile rows and pay the per-expert fill (m rows run at m / (m + overhead)).
//                 Issued as one kernel per expert (per_expert_kernels): the same tiles and waves at
//                 per_expert_gemms.ceiling_scale x the ceiling, no overhead rows, and per_expert_gemms.kernel_s of
//                 fixed time per non-empty expert instead of one kernel_fixed_s.
//   attention     curve(arch, dtype, fwd|bwd).fraction_at(keys) with keys = min(seq_kv, window) (the length the
//                 benchmarks that fix the curve were run at).
//   memory-bound  only the memory term.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/efficiency_params.hpp"
#include "kernels/kernel_cost_model.hpp"

namespace moesim::kernels {

// The parts of one prediction, for reports and tests.
struct KernelTimeBreakdown {
  double seconds = 0;    // fixed + max(compute, memory)
  double compute_s = 0;  // FLOP / (peak * efficiency); 0 for memory-bound kernels
  double memory_s = 0;   // bytes / (hbm * hbm_fraction, or the elementwise fraction for memory-bound kernels)
  double fixed_s = 0;
  double efficiency = 0;  // achieved fraction of the dtype's peak inside the compute term (0 if none)
  bool memory_bound() const { return memory_s > compute_s; }
};

class RooflineKernelCostModel final : public KernelCostModel {
 public:
  explicit RooflineKernelCostModel(KernelEfficiencyParams params = builtin_kernel_efficiency());
  double seconds(const Kernel& kernel, const DeviceRates& device) const override;
  std::string name() const override;
  KernelTimeBreakdown explain(const Kernel& kernel, const DeviceRates& device) const;
  const KernelEfficiencyParams& params() const { return params_; }

 private:
  KernelEfficiencyParams params_;
};

// GEMM tile utilisation in (0, 1]: useful MACs / MACs the scheduled tiles and waves occupy. Exposed for tests and
// for fitted models that reuse the wave-quantisation term.
double gemm_tile_utilization(std::int64_t m, std::int64_t n, const GemmTiling& tiling, int sms);
// FLOP of tensor-core work the tiles of a (grouped) GEMM occupy: every group's rows padded to tile_m, n padded to
// tile_n, all tiles in whole waves over the SMs. `rows` has one entry per group (one for a dense GEMM).
double gemm_occupied_flops(const std::vector<std::int64_t>& rows, std::int64_t n, std::int64_t k,
                           const GemmTiling& tiling, int sms);

}  // namespace moesim::kernels
