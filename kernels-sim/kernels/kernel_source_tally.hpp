#pragma once
// KernelSourceTally: a KernelCostModel that prices every kernel with another one and counts, per kernel class,
// where the times came from (KernelSource: a measured table, an interpolation, a fit, the roofline). `moesim run`
// prints the tally, so a prediction says which of its kernels were measured and which were modelled.
#include <map>
#include <mutex>
#include <string>

#include "kernels/kernel_cost_model.hpp"

namespace moesim::kernels {

// The class a kernel is counted under: "gemm", "gemm dgrad", "gemm wgrad", "grouped_gemm[ dgrad| wgrad]",
// "attention_fwd", "attention_bwd", "memory-bound".
std::string kernel_class(const Kernel& kernel);

class KernelSourceTally final : public KernelCostModel {
 public:
  explicit KernelSourceTally(const KernelCostModel& inner) : inner_(inner) {}

  double seconds(const Kernel& kernel, const DeviceRates& device) const override;
  KernelSource source(const Kernel& kernel, const DeviceRates& device) const override {
    return inner_.source(kernel, device);
  }
  std::string name() const override { return inner_.name(); }

  struct Count {
    long calls = 0;
    double seconds = 0;  // sum over the calls (one call prices one kernel shape, however often the step runs it)
  };
  // Per kernel class, per source.
  std::map<std::string, std::map<KernelSource, Count>> counts() const;
  // "gemm table 6; gemm wgrad table 5, fit 1; memory-bound roofline 14": calls per class and source.
  std::string summary() const;

 private:
  const KernelCostModel& inner_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::map<KernelSource, Count>> counts_;
};

}  // namespace moesim::kernels
