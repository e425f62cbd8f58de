#include "workload/cp_attention_traffic.hpp"

namespace moesim::workload {

CpAttentionTraffic cp_attention_traffic(const model::ModelSpec& m, const layout::Layout& l) {
  CpAttentionTraffic t;
  if (l.cp <= 1) return t;
  constexpr double kBf16 = 2.0;
  const auto& a = m.attention;
  const bool mla = a.kind == model::AttentionKind::mla;
  // Per-token widths of the attention's inputs and output, all heads (MLA: up-projected per head).
  const double heads = static_cast<double>(a.num_attention_heads);
  const double q_dims = mla ? heads * a.qk_head_dim() : heads * a.head_dim;
  const double kv_dims = mla ? heads * (a.qk_head_dim() + a.v_head_dim) : 2.0 * a.num_query_groups * a.head_dim;
  const double o_dims = mla ? heads * a.v_head_dim : heads * a.head_dim;
  if (l.cp_comm_type == layout::CpCommType::a2a) {
    const double local_tokens = static_cast<double>(l.mbs) * l.seq / l.cp;
    t.a2a_qkv = local_tokens * (q_dims + kv_dims) * kBf16 / l.tp;
    t.a2a_out = local_tokens * o_dims * kBf16 / l.tp;
  } else {
    t.ring_fwd = static_cast<double>(l.cp - 1) / l.cp * l.mbs * l.seq * kv_dims * kBf16 / l.tp;
    t.ring_bwd = 2 * t.ring_fwd;
  }
  return t;
}

}  // namespace moesim::workload
