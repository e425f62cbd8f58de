#include "memory/activation_memory.hpp"

#include <algorithm>

namespace moesim::memory {
namespace {
using layout::RecomputeModule;

constexpr double kBf16 = 2.0;
constexpr double kFp32 = 4.0;
// What a quantized linear keeps of its input for the weight-gradient GEMM: Transformer Engine keeps only the
// column-wise copy (`update_usage(rowwise_usage=False, columnwise_usage=True)` in its linear and grouped-linear
// forward). FP8: E4M3 plus one fp32 scale per 128 elements (act_mem.py "1.03"); MXFP8's 1/32-byte E8M0 scale is the
// same to two digits. NVFP4: E2M1 (half a byte) plus one E4M3 scale per 16 elements, 0.5625 bytes (the NVFP4 recipe
// quantizes the wgrad GEMM's inputs too, 16x1 blocks for the activations: "Pretraining Large Language Models with
// NVFP4", NVIDIA 2025; pytorch/ao#3293 lists the same GEMM recipe).
constexpr double kFp8Saved = 1.03;
constexpr double kNvfp4Saved = 0.5 + 1.0 / 16;

bool fp8_linears(const layout::Layout& l) { return l.precision != layout::Precision::bf16; }
double saved_linear_input(const layout::Layout& l) {
  if (!fp8_linears(l)) return kBf16;
  return l.precision == layout::Precision::nvfp4 ? kNvfp4Saved : kFp8Saved;
}

void add(std::vector<SavedTensor>& out, std::string name, double bytes, bool tp_sharded = true) {
  if (bytes > 0) out.push_back({std::move(name), bytes, tp_sharded});
}

void attention_tensors(const model::ModelSpec& m, const layout::Layout& l, std::vector<SavedTensor>& out) {
  const auto& a = m.attention;
  const double h = static_cast<double>(m.hidden_size);
  const double lin = saved_linear_input(l);
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
    add(out, "attention output O", kBf16 * nh * vh + (fp8_linears(l) ? saved_linear_input(l) * nh * vh : 0));
  } else {
    const double q = nh * static_cast<double>(a.head_dim);
    const double kv = static_cast<double>(a.num_query_groups * a.head_dim);
    add(out, "qkv input (norm output)", drop_norm ? 0 : lin * h, false);
    add(out, "Q,K,V", l.recompute.has(RecomputeModule::core_attn) ? 0 : kBf16 * (q + 2 * kv));
    add(out, "attention output O", kBf16 * q + (fp8_linears(l) ? saved_linear_input(l) * q : 0));
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
  const double lin = saved_linear_input(l);
  add(out, "MLP norm input (residual)", kBf16 * h, false);
  add(out, "MLP norm output", l.recompute.has(RecomputeModule::layernorm) ? 0 : kBf16 * h, false);
  add(out, "router logits and scores (fp32)", 2 * kFp32 * static_cast<double>(m.moe.num_experts), false);
  if (l.recompute.has(RecomputeModule::moe)) return;  // the whole MoE block is recomputed from its input
  add(out, "expert fc1 input (top_k copies)", k * saved_linear_input(l) * h);
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
  const double lin = saved_linear_input(l);
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

namespace {
double bytes_on_gpu(const std::vector<SavedTensor>& tensors, const layout::Layout& layout) {
  const double tokens = static_cast<double>(layout.mbs) * layout.seq / layout.cp;
  const bool sp = layout.uses_sequence_parallel();
  double bytes = 0;
  for (const auto& t : tensors) bytes += t.bytes_per_token * tokens / ((t.tp_sharded || sp) ? layout.tp : 1);
  return bytes;
}

// One weight GEMM per token: elements in and out; whether its input (a norm output) is replicated over TP without
// SP, and whether its output is (a row-parallel projection back to the hidden size).
struct WeightGemm {
  const char* name;
  double in, out;
  bool in_replicated, out_replicated;
};

void add_gemm(std::vector<SavedTensor>& out, const WeightGemm& g, double in_bytes) {
  add(out, std::string(g.name) + " input", in_bytes * g.in, !g.in_replicated);
  add(out, std::string(g.name) + " output gradient", kBf16 * g.out, !g.out_replicated);
}
}  // namespace

std::vector<SavedTensor> wgrad_retained_tensors(const model::ModelSpec& m, bool moe_layer, const layout::Layout& l) {
  std::vector<SavedTensor> out;
  const double lin = saved_linear_input(l);
  const double h = static_cast<double>(m.hidden_size);
  const auto& a = m.attention;
  const double nh = static_cast<double>(a.num_attention_heads);
  std::vector<WeightGemm> gemms;
  if (a.kind == model::AttentionKind::mla) {
    const double ql = static_cast<double>(a.q_lora_rank), kvl = static_cast<double>(a.kv_lora_rank);
    const double qk = static_cast<double>(a.qk_nope_head_dim), qr = static_cast<double>(a.qk_rope_head_dim);
    const double vh = static_cast<double>(a.v_head_dim);
    gemms = {{"q_down", h, ql, true, true},
             {"kv_down", h, kvl + qr, true, true},
             {"q_up", ql, nh * (qk + qr), true, false},
             {"kv_up", kvl, nh * (qk + vh), true, false},
             {"o_proj", nh * vh, h, false, true}};
  } else {
    const double q = nh * static_cast<double>(a.head_dim);
    const double kv = static_cast<double>(a.num_query_groups * a.head_dim);
    gemms = {{"qkv", h, q + 2 * kv, true, false}, {"o_proj", q, h, false, true}};
  }
  const double gated = m.ffn.activation == model::Activation::swiglu ? 2.0 : 1.0;
  if (moe_layer) {
    const std::int64_t t_rank = static_cast<std::int64_t>(l.mbs) * l.seq / std::max(1, l.cp * l.tp);
    const double k = static_cast<double>(m.moe.top_k) * l.routed_copies_scale(t_rank, m.moe.top_k, m.moe.num_experts);
    const double f = static_cast<double>(m.moe.expert_ffn_hidden_size);
    gemms.push_back({"router", h, static_cast<double>(m.moe.num_experts), true, true});
    gemms.push_back({"expert fc1", k * h, k * gated * f, false, false});
    gemms.push_back({"expert fc2", k * f, k * h, false, false});
    if (m.moe.num_shared_experts > 0) {
      const double fs = static_cast<double>(m.moe.num_shared_experts * m.moe.shared_expert_ffn_hidden_size);
      gemms.push_back({"shared expert fc1", h, gated * fs, true, false});
      gemms.push_back({"shared expert fc2", fs, h, false, true});
    }
  } else {
    const double f = static_cast<double>(m.ffn.ffn_hidden_size);
    gemms.push_back({"fc1", h, gated * f, true, false});
    gemms.push_back({"fc2", f, h, false, true});
  }
  for (const auto& g : gemms) add_gemm(out, g, lin);
  return out;
}

double layer_activation_bytes(const model::ModelSpec& spec, bool moe_layer, const layout::Layout& layout) {
  return bytes_on_gpu(saved_tensors(spec, moe_layer, layout), layout);
}

double layer_wgrad_retained_bytes(const model::ModelSpec& spec, bool moe_layer, const layout::Layout& layout) {
  return bytes_on_gpu(wgrad_retained_tensors(spec, moe_layer, layout), layout);
}

}  // namespace moesim::memory
