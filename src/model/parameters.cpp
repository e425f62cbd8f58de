#include "model/parameters.hpp"

#include <algorithm>

namespace moesim::model {
namespace {
// Templated on the number type: std::int64_t for the counts, long double for parameter_magnitude(), which must not
// overflow on absurd sizes.
template <class N>
N attention_parameters(const ModelSpec& s) {
  const auto& a = s.attention;
  const N h = static_cast<N>(s.hidden_size), nh = static_cast<N>(a.num_attention_heads);
  N p = 0;
  if (a.kind == AttentionKind::mla) {
    const N qk = static_cast<N>(a.qk_nope_head_dim), qr = static_cast<N>(a.qk_rope_head_dim);
    const N v = static_cast<N>(a.v_head_dim), ql = static_cast<N>(a.q_lora_rank), kl = static_cast<N>(a.kv_lora_rank);
    // q: down-projection, its norm, up-projection; or one direct projection without q_lora.
    p += a.q_lora_rank > 0 ? ql * (h + nh * (qk + qr) + 1) : h * nh * (qk + qr);
    p += kl * (h + nh * (qk + v) + 1);  // kv down, its norm, kv up
    p += h * qr;                        // the shared rope key
    p += nh * v * h;                    // output projection
  } else {
    const N d = static_cast<N>(a.head_dim), g = static_cast<N>(a.num_query_groups);
    p += h * (nh * d + 2 * g * d) + nh * d * h;
    if (a.linear_bias) p += nh * d + 2 * g * d + h;
  }
  if (a.qk_norm) p += 2 * static_cast<N>(a.qk_head_dim());
  if (a.attention_sinks) p += nh;
  return p;
}

// One MLP of width f: gated = 3 matrices (gate, up, down), else 2; biases on each output.
template <class N>
N mlp_parameters(const ModelSpec& s, std::int64_t width) {
  const N h = static_cast<N>(s.hidden_size), f = static_cast<N>(width), m = static_cast<N>(s.ffn.matrices());
  N p = m * h * f;
  if (s.ffn.linear_bias) p += (m - 1) * f + h;
  return p;
}
}  // namespace

long double parameter_magnitude(const ModelSpec& s) {
  using N = long double;
  const N h = static_cast<N>(s.hidden_size), e = static_cast<N>(s.moe.num_experts);
  const N dense = attention_parameters<N>(s) + mlp_parameters<N>(s, s.ffn.ffn_hidden_size);
  const N moe = attention_parameters<N>(s) + h * e + e * mlp_parameters<N>(s, s.moe.expert_ffn_hidden_size) +
                static_cast<N>(s.moe.num_shared_experts) * mlp_parameters<N>(s, s.moe.shared_expert_ffn_hidden_size);
  const N layers = static_cast<N>(s.num_layers) + static_cast<N>(s.mtp_num_layers);
  return 2 * static_cast<N>(s.vocab_size) * h + layers * (std::max(dense, moe) + 2 * h * h + 6 * h);
}

LayerParameters layer_parameters(const ModelSpec& s, bool moe_layer) {
  LayerParameters l;
  l.moe = moe_layer;
  l.attention = attention_parameters<std::int64_t>(s);
  l.norms = 2 * s.hidden_size;
  if (moe_layer) {
    l.router = s.hidden_size * s.moe.num_experts + (s.moe.router_bias ? s.moe.num_experts : 0);
    l.per_expert = mlp_parameters<std::int64_t>(s, s.moe.expert_ffn_hidden_size);
    l.routed_experts = s.moe.num_experts * l.per_expert;
    l.shared_experts = s.moe.num_shared_experts * mlp_parameters<std::int64_t>(s, s.moe.shared_expert_ffn_hidden_size);
  } else {
    l.dense_mlp = mlp_parameters<std::int64_t>(s, s.ffn.ffn_hidden_size);
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
