#include "workload/host_cost_policy.hpp"

#include <algorithm>

namespace moesim::workload {

std::uint32_t recompute_scope(const layout::Layout& layout) {
  using M = layout::RecomputeModule;
  const auto& rc = layout.recompute;
  const bool experts = rc.has(M::moe) || rc.has(M::moe_act) || rc.has(M::shared_experts);
  return rc.granularity == layout::RecomputeGranularity::selective && !experts ? kScopeAttn | kScopeMlp : 0;
}

HostCostPolicy::HostCostPolicy(const topology::SystemSpec& system, const layout::Layout& layout, const StepParams& p)
    : cuda_graph_(layout.cuda_graph),
      optimizer_in_graph_(layout.optimizer_in_graph),
      graph_scopes_(layout.cuda_graph_scopes) {
  auto figure_us = [&](double param_us, const char* name, double fallback_us) {
    if (param_us >= 0) return param_us;
    const auto* f = system.calibration.find(name);
    return f ? f->value_si * 1e6 : fallback_us;
  };
  const double kernel_launch_us = figure_us(p.kernel_launch_us, "kernel_launch", 5.0);
  kernel_launch_s_ = kernel_launch_us * 1e-6;
  graph_launch_s_ = p.graph_launch_us * 1e-6;
  const HostCosts x86;
  eager_.cxx_launch_s = kernel_launch_us * 1e-6;
  const double fw = p.framework_host_factor *
                    (system.host.cpu_family == topology::CpuFamily::x86 ? p.x86_host_factor : 1.0) *
                    (layout.cpu_binding ? 1.0 : p.unbound_host_factor);
  eager_.torch_op_s = fw * 1e-6 * figure_us(p.torch_op_host_us, "torch_op_host", x86.torch_op_s * 1e6);
  eager_.inner_op_s = 1e-6 * figure_us(p.torch_op_host_us, "torch_op_host", x86.inner_op_s * 1e6);
  // From TE 2.10 on, a TE module call costs about what a torch op does (te_version.hpp); the system's
  // te_module_host figure is the older TE's (issue #2053). An explicit --param te_module_host_us wins.
  const bool te_reduced = layout.te_version >= layout::kTeHostOverheadReduced && p.te_module_host_us < 0;
  eager_.te_module_s = te_reduced ? eager_.torch_op_s
                                  : fw * 1e-6 * figure_us(p.te_module_host_us, "te_module_host", x86.te_module_s * 1e6);
  eager_.fp8_module_factor = p.fp8_module_host_factor;
}

void HostCostPolicy::set_launch(Op& op, int kernels, std::uint32_t graph_scope, double host_s) const {
  if (full_graph() && !(op.phase == Phase::optimizer && optimizer_eager())) {
    op.graph_captured = true;
  } else if (cuda_graph_ == layout::CudaGraph::partial && (graph_scope & graph_scopes_) != 0) {
    op.launch_cost = seconds_to_ps(graph_launch_s_);  // one graph launch replaces the block's kernels
  } else {
    op.launch_cost = seconds_to_ps(std::max(host_s, kernel_launch_s_ * std::max(1, kernels)));
  }
}

}  // namespace moesim::workload
