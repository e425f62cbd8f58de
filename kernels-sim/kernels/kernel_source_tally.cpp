#include "kernels/kernel_source_tally.hpp"

namespace moesim::kernels {
namespace {
const char* pass_suffix(GemmPass p) {
  switch (p) {
    case GemmPass::fwd: return "";
    case GemmPass::dgrad: return " dgrad";
    case GemmPass::wgrad: return " wgrad";
  }
  return "";
}
}  // namespace

std::string kernel_class(const Kernel& kernel) {
  struct V {
    std::string operator()(const Gemm& g) const { return std::string("gemm") + pass_suffix(g.pass); }
    std::string operator()(const GroupedGemm& g) const { return std::string("grouped_gemm") + pass_suffix(g.pass); }
    std::string operator()(const AttentionFwd&) const { return "attention_fwd"; }
    std::string operator()(const AttentionBwd&) const { return "attention_bwd"; }
    std::string operator()(const MemoryBound&) const { return "memory-bound"; }
  };
  return std::visit(V{}, kernel);
}

double KernelSourceTally::seconds(const Kernel& kernel, const DeviceRates& device) const {
  const double s = inner_.seconds(kernel, device);
  const KernelSource from = inner_.source(kernel, device);
  const std::lock_guard<std::mutex> lock(mutex_);
  auto& c = counts_[kernel_class(kernel)][from];
  ++c.calls;
  c.seconds += s;
  return s;
}

std::map<std::string, std::map<KernelSource, KernelSourceTally::Count>> KernelSourceTally::counts() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

std::string KernelSourceTally::summary() const {
  std::string out;
  for (const auto& [cls, by_source] : counts()) {
    out += (out.empty() ? "" : "; ") + cls;
    bool first = true;
    for (const auto& [source, c] : by_source) {
      out += std::string(first ? " " : ", ") + to_string(source) + " " + std::to_string(c.calls);
      first = false;
    }
  }
  return out;
}

}  // namespace moesim::kernels
