#include "model/parameters.hpp"

namespace moesim::model {
namespace {
std::int64_t attention_parameters(const ModelSpec& s) {
  const auto& a = s.attention;
  const std::int64_t h = s.hidden_size, nh = a.num_attention_heads;
  std::int64_t p = 0;
  if (a.kind == AttentionKind::mla) {
    const std::int64_t qk = a.qk_nope_head_dim, qr = a.qk_rope_head_dim, v = a.v_head_dim;
    // q: down-projection, its norm, up-projection; or one direct projection without q_lora.
    p += a.q_lora_rank > 0 ? a.q_lora_rank * (h + nh * (qk + qr) + 1) : h * nh * (qk + qr);
    p += a.kv_lora_rank * (h + nh * (qk + v) + 1);  // kv down, its norm, kv up
    p += h * qr;                                    // the shared rope key
    p += nh * v * h;                                // output projection
  } else {
    const std::int64_t d = a.head_dim, g = a.num_query_groups;
    p += h * (nh * d + 2 * g * d) + nh * d * h;
    if (a.linear_bias) p += nh * d + 2 * g * d + h;
  }
  if (a.qk_norm) p += 2 * a.qk_head_dim();
  if (a.attention_sinks) p += nh;
  return p;
}

// One MLP of width f: gated = 3 matrices (gate, up, down), else 2; biases on each output.
std::int64_t mlp_parameters(const ModelSpec& s, std::int64_t f) {
  const std::int64_t h = s.hidden_size;
  std::int64_t p = s.ffn.matrices() * h * f;
  if (s.ffn.linear_bias) p += (s.ffn.matrices() - 1) * f + h;
  return p;
}
}  // namespace

LayerParameters layer_parameters(const ModelSpec& s, bool moe_layer) {
  LayerParameters l;
  l.moe = moe_layer;
  l.attention = attention_parameters(s);
  l.norms = 2 * s.hidden_size;
  if (moe_layer) {
    l.router = s.hidden_size * s.moe.num_experts + (s.moe.router_bias ? s.moe.num_experts : 0);
    l.per_expert = mlp_parameters(s, s.moe.expert_ffn_hidden_size);
    l.routed_experts = s.moe.num_experts * l.per_expert;
    l.shared_experts = s.moe.num_shared_experts * mlp_parameters(s, s.moe.shared_expert_ffn_hidden_size);
  } else {
    l.dense_mlp = mlp_parameters(s, s.ffn.ffn_hidden_size);
  }
  return l;
}

ParameterCounts count_parameters(const ModelSpec& s, std::int64_t vocab_size) {
  ParameterCounts c;
  const std::int64_t h = s.hidden_size, v = vocab_size > 0 ? vocab_size : s.vocab_size;
  c.embedding = v * h;
  c.lm_head = s.tie_embeddings ? 0 : h * v;
  c.final_norm = h;
  const LayerParameters dense = layer_parameters(s, false), moe = layer_parameters(s, true);
  c.main_total = c.embedding + c.lm_head + c.final_norm;
  c.active = c.main_total;
  for (std::int64_t i = 0; i < s.num_layers; ++i) {
    const LayerParameters& l = s.is_moe_layer(i) ? moe : dense;
    c.layers.push_back(l);
    c.main_total += l.total();
    c.active += l.active(s.moe.top_k);
  }
  for (std::int64_t i = 0; i < s.mtp_num_layers; ++i) {
    MtpParameters m;
    m.layer = s.mtp_layer_is_moe() ? moe : dense;
    m.projection = 2 * h * h;
    m.norms = 3 * h;
    c.mtp.push_back(m);
    c.mtp_total += m.total();
  }
  c.total = c.main_total + c.mtp_total;
  c.active_non_embedding = c.active - c.embedding;
  return c;
}

}  // namespace moesim::model
