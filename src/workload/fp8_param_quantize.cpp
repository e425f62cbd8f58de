#include "workload/fp8_param_quantize.hpp"

#include <algorithm>

namespace moesim::workload {

int fp8_weights_per_layer(const model::ModelSpec& m, const layout::Layout& l, int layer) {
  const auto& a = m.attention;
  const int attention = a.kind == model::AttentionKind::mla ? (a.q_lora_rank > 0 ? 2 : 1) + 3 : 2;
  if (!m.is_moe_layer(layer)) return attention + 2;
  const auto local_experts = static_cast<int>(m.moe.num_experts / std::max(1, l.ep));
  return attention + 2 * local_experts + (m.moe.num_shared_experts > 0 ? 2 : 0);
}

int fp8_weights_on_rank(const model::ModelSpec& m, const layout::Layout& l, const layout::StageAssignment& stages,
                        int pp_rank) {
  int n = 0;
  for (const auto& chunk : stages.ranks.at(static_cast<std::size_t>(pp_rank)))
    for (int layer : chunk.layers) n += fp8_weights_per_layer(m, l, layer);
  return n;
}

Block fp8_param_quantize_cost(const HostCosts& host, int weights, int dp, double amax_s) {
  if (weights <= 0) return {};
  const int held = std::min(weights, weights / std::max(1, dp) + 1);
  Block b;
  b.seconds = amax_s;
  b.kernels = 2 * held + 1;  // compute_amax and the cast per held weight, the scales' multi-tensor kernel
  b.host_s = 2.0 * weights * host.inner_op_s + b.kernels * host.torch_op_s;
  return b;
}

}  // namespace moesim::workload
