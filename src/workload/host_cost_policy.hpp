#pragma once
// Host (CPU) time to issue the step's ops (moe-modeling.md §7; figures and sources in docs/workload-model.md "Host"):
// the per-op eager issue figures the layer costs are built from (an eager PyTorch op, a Transformer Engine module call,
// a raw C++ launch), scaled by the framework, x86 and unbound-process factors of StepParams, and which ops a CUDA graph
// captures (a full-iteration graph: all; per-module graphs: the blocks of the layout's graph scopes) and so cost one
// graph launch instead.
#include <cstdint>

#include "layout/layout.hpp"
#include "topology/system_spec.hpp"
#include "workload/layer_costs.hpp"
#include "workload/op_graph_names.hpp"
#include "workload/step_params.hpp"

namespace moesim::workload {

// Graph scopes of the step's blocks (layout.hpp GraphScope: Megatron's attn, mlp, moe_router, moe_preprocess;
// moesim's shared_experts). Routed experts, unpermute, embedding, loss, MTP head, optimizer and every
// collective have no scope (0) and stay eager, and so does a recompute that redoes expert work.
inline constexpr std::uint32_t kScopeAttn = static_cast<std::uint32_t>(layout::GraphScope::attn);
inline constexpr std::uint32_t kScopeMlp = static_cast<std::uint32_t>(layout::GraphScope::mlp);
inline constexpr std::uint32_t kScopeShared = static_cast<std::uint32_t>(layout::GraphScope::shared_experts);
inline constexpr std::uint32_t kScopeRouter = static_cast<std::uint32_t>(layout::GraphScope::moe_router) |
                                              static_cast<std::uint32_t>(layout::GraphScope::moe_preprocess);
// The pre-MLP norm with the router, top-k and permute (MoE) or alone (dense).
inline std::uint32_t pre_mlp_scope(bool moe) { return moe ? kScopeRouter : kScopeMlp; }
// A selective recompute of attention or MLP modules only is captured with them; one that redoes expert work is not.
std::uint32_t recompute_scope(const layout::Layout& layout);

class HostCostPolicy {
 public:
  // Each figure: a --param override, else the system's calibration figure of that name, else the x86 default.
  HostCostPolicy(const topology::SystemSpec& system, const layout::Layout& layout, const StepParams& params);

  // The per-op issue figures the layer costs count in (framework, x86 and binding factors applied).
  const HostCosts& eager() const { return eager_; }
  // Whether a full-iteration CUDA graph launches the step (one graph launch per rank; nothing else eager unless the
  // graph leaves the optimizer out, optimizer_eager()).
  bool full_graph() const { return cuda_graph_ == layout::CudaGraph::full; }
  // A full-iteration graph that wraps the forward-backward only (Layout::optimizer_in_graph off): the optimizer
  // phase's ops are issued eagerly, at the same price as without any graph (set_launch), so that a graph that
  // leaves the optimizer out is never dearer than no graph at all.
  bool optimizer_eager() const { return full_graph() && !optimizer_in_graph_; }
  double graph_launch_s() const { return graph_launch_s_; }

  // Host time before `op` can start: none inside a full-iteration graph (except the optimizer ops a graph leaves
  // out, optimizer_eager(), which are priced as every eager op is), one
  // graph launch for a block whose graph scope (0 = none) per-module graphs capture, else the framework's eager
  // issue time `host_s`, never below the raw launch cost of its kernels. Reads op.phase.
  void set_launch(Op& op, int kernels, std::uint32_t graph_scope, double host_s = 0) const;

 private:
  HostCosts eager_;
  double kernel_launch_s_ = 0;
  double graph_launch_s_ = 0;
  layout::CudaGraph cuda_graph_ = layout::CudaGraph::none;
  bool optimizer_in_graph_ = true;
  std::uint32_t graph_scopes_ = 0;
};

}  // namespace moesim::workload
