#include "memory/activation_memory.hpp"

namespace moesim::memory {
namespace {
using layout::RecomputeModule;

constexpr double kBf16 = 2.0;
constexpr double kFp32 = 4.0;
// E4M3 plus one fp32 scale per 128 elements (act_mem.py "1.03"); MXFP8's 1/32-byte E8M0 scale is the same
// to two digits.
constexpr double kFp8Saved = 1.03;

bool fp8_linears(const layout::Layout& l) { return l.precision != layout::Precision::bf16; }

void add(std::vector<SavedTensor>& out, std::string name, double bytes, bool tp_sharded = true) {
  if (bytes > 0) out.push_back({std::move(name), bytes, tp_sharded});
}

void attention_tensors(const model::ModelSpec& m, const layout::Layout& l, std::vector<SavedTensor>& out) {
  const auto& a = m.attention;
  const double h = static_cast<double>(m.hidden_size);
  const double lin = fp8_linears(l) ? kFp8Saved : kBf16;
  const bool drop_norm = l.recompute.has(RecomputeModule::layernorm);
  const double nh = static_cast<double>(a.num_attention_heads);
  add(out, "attn norm input (residual)", kBf16 * h, false);
  if (a.kind == model::AttentionKind::mla) {
    const double ql = static_cast<double>(a.q_lora_rank), kvl = static_cast<double>(a.kv_lora_rank);
    const double qk = static_cast<double>(a.qk_nope_head_dim), qr = static_cast<double>(a.qk_rope_head_dim);
    const double vh = static_cast<double>(a.v_head_dim);
    add(out, "q_down/kv_down input (norm output)", drop_norm ? 0 : lin * h, false);
    add(out, "q_norm input", kBf16 * ql, false);
    add(out, "q_up input", lin * ql, false);
    add(out, "kv_norm input", kBf16 * kvl, false);
    add(out, "kv_up input", lin * kvl, false);
    add(out, "k_rope", kBf16 * qr, false);
    const bool drop_qkv = l.recompute.has(RecomputeModule::mla_up_proj) || l.recompute.has(RecomputeModule::core_attn);
    add(out, "Q,K,V after up-projection and RoPE", drop_qkv ? 0 : kBf16 * nh * (qk + qr) * 2 + kBf16 * nh * vh);
    add(out, "attention output O", kBf16 * nh * vh + (fp8_linears(l) ? kFp8Saved * nh * vh : 0));
  } else {
    const double q = nh * static_cast<double>(a.head_dim);
    const double kv = static_cast<double>(a.num_query_groups * a.head_dim);
    add(out, "qkv input (norm output)", drop_norm ? 0 : lin * h, false);
    add(out, "Q,K,V", l.recompute.has(RecomputeModule::core_attn) ? 0 : kBf16 * (q + 2 * kv));
    add(out, "attention output O", kBf16 * q + (fp8_linears(l) ? kFp8Saved * q : 0));
  }
  add(out, "softmax LSE (fp32)", kFp32 * nh);
}

void moe_tensors(const model::ModelSpec& m, const layout::Layout& l, std::vector<SavedTensor>& out) {
  const double h = static_cast<double>(m.hidden_size);
  // Routed copies per token: top_k, times the capacity's scale (padding saves padded rows, dropping saves fewer).
  const std::int64_t t_rank = static_cast<std::int64_t>(l.mbs) * l.seq / std::max(1, l.cp * l.tp);
  const double k = static_cast<double>(m.moe.top_k) * l.routed_copies_scale(t_rank, m.moe.top_k, m.moe.num_experts);
  const double f = static_cast<double>(m.moe.expert_ffn_hidden_size);
  const double gated = m.ffn.activation == model::Activation::swiglu ? 2.0 : 1.0;
  const double lin = fp8_linears(l) ? kFp8Saved : kBf16;
  add(out, "MLP norm input (residual)", kBf16 * h, false);
  add(out, "MLP norm output", l.recompute.has(RecomputeModule::layernorm) ? 0 : kBf16 * h, false);
  add(out, "router logits and scores (fp32)", 2 * kFp32 * static_cast<double>(m.moe.num_experts), false);
  if (l.recompute.has(RecomputeModule::moe)) return;  // the whole MoE block is recomputed from its input
  add(out, "expert fc1 input (top_k copies)", k * (fp8_linears(l) ? kFp8Saved : kBf16) * h);
  add(out, "expert fc1 output", k * kBf16 * gated * f);
  add(out, "expert fc2 input", l.recompute.has(RecomputeModule::moe_act) ? 0 : k * lin * f);
  if (m.moe.num_shared_experts > 0 && !l.recompute.has(RecomputeModule::shared_experts)) {
    const double fs = static_cast<double>(m.moe.num_shared_experts * m.moe.shared_expert_ffn_hidden_size);
    add(out, "shared expert fc1 output", kBf16 * gated * fs);
    add(out, "shared expert fc2 input", lin * fs);
  }
}

void dense_mlp_tensors(const model::ModelSpec& m, const layout::Layout& l, std::vector<SavedTensor>& out) {
  const double h = static_cast<double>(m.hidden_size);
  const double f = static_cast<double>(m.ffn.ffn_hidden_size);
  const double gated = m.ffn.activation == model::Activation::swiglu ? 2.0 : 1.0;
  const double lin = fp8_linears(l) ? kFp8Saved : kBf16;
  add(out, "MLP norm input (residual)", kBf16 * h, false);
  if (l.recompute.has(RecomputeModule::mlp)) return;  // checkpointed: only the input stays
  add(out, "fc1 input (norm output)", l.recompute.has(RecomputeModule::layernorm) ? 0 : lin * h, false);
  add(out, "fc1 output", kBf16 * gated * f);
  add(out, "fc2 input", lin * f);
}
}  // namespace

std::vector<SavedTensor> saved_tensors(const model::ModelSpec& spec, bool moe_layer, const layout::Layout& layout) {
  std::vector<SavedTensor> out;
  if (layout.recompute.granularity == layout::RecomputeGranularity::full) {
    add(out, "layer input (full-recompute checkpoint)", kBf16 * static_cast<double>(spec.hidden_size), false);
    return out;
  }
  attention_tensors(spec, layout, out);
  if (moe_layer)
    moe_tensors(spec, layout, out);
  else
    dense_mlp_tensors(spec, layout, out);
  return out;
}

double layer_activation_bytes(const model::ModelSpec& spec, bool moe_layer, const layout::Layout& layout) {
  const double tokens = static_cast<double>(layout.mbs) * layout.seq / layout.cp;
  const bool sp = layout.uses_sequence_parallel();
  double bytes = 0;
  for (const auto& t : saved_tensors(spec, moe_layer, layout))
    bytes += t.bytes_per_token * tokens / ((t.tp_sharded || sp) ? layout.tp : 1);
  return bytes;
}

}  // namespace moesim::memory
