#include "workload/cp_attention_traffic.hpp"

#include <algorithm>

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

CpRingKernels cp_ring_kernels(const model::ModelSpec& m, const layout::Layout& l) {
  CpRingKernels k;
  if (l.cp <= 1 || l.cp_comm_type == layout::CpCommType::a2a) return k;
  constexpr double kBf16 = 2.0, kFp32 = 4.0;
  const auto& a = m.attention;
  const bool mla = a.kind == model::AttentionKind::mla;
  const double tokens = static_cast<double>(l.mbs) * l.seq / l.cp;  // this rank's queries (and keys)
  const double heads = static_cast<double>(a.num_attention_heads) / l.tp;
  const double d_qk = mla ? a.qk_head_dim() : a.head_dim, d_v = mla ? a.v_head_dim : a.head_dim;
  const double kv_heads = mla ? heads : std::max(1.0, static_cast<double>(a.num_query_groups) / l.tp);
  const double q = tokens * heads * d_qk * kBf16, o = tokens * heads * d_v * kBf16;
  const double kv = tokens * kv_heads * (d_qk + d_v) * kBf16;
  const double lse = tokens * heads * kFp32;
  const int cp = l.cp;
  k.attention_calls = cp;
  k.fwd_bytes = 2 * kv + 2 * lse + 3 * lse * (cp - 1) + (2 + 3.0 * (cp - 1)) * o;
  k.fwd_kernels = 1 + 1 + (cp - 1) + cp;
  k.bwd_bytes = 2 * kv + cp * 3 * (q + kv);
  k.bwd_kernels = 1 + 2 * cp;
  return k;
}

}  // namespace moesim::workload
