#include "model/model_spec.hpp"

#include <cstdio>
#include <string>

#include "model/parameters.hpp"

namespace moesim::model {

const char* to_string(AttentionKind k) { return k == AttentionKind::mla ? "mla" : "gqa"; }

const char* to_string(Activation a) {
  switch (a) {
    case Activation::swiglu: return "swiglu";
    case Activation::gelu: return "gelu";
    case Activation::relu2: return "relu2";
  }
  return "?";
}

const char* to_string(RouterScore r) { return r == RouterScore::sigmoid ? "sigmoid" : "softmax"; }

std::int64_t AttentionSpec::qk_head_dim() const {
  return kind == AttentionKind::mla ? qk_nope_head_dim + qk_rope_head_dim : head_dim;
}

std::int64_t AttentionSpec::v_dim() const { return kind == AttentionKind::mla ? v_head_dim : head_dim; }

bool ModelSpec::is_moe_layer(std::int64_t layer) const {
  if (!is_moe() || layer < 0 || layer >= num_layers) return false;
  if (!moe.layer_pattern.empty())
    return static_cast<std::size_t>(layer) < moe.layer_pattern.size() && moe.layer_pattern[layer] != 0;
  const std::int64_t freq = moe.moe_layer_freq > 0 ? moe.moe_layer_freq : 1;
  return layer >= moe.first_k_dense_replace && layer % freq == 0;
}

std::int64_t ModelSpec::num_moe_layers() const {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < num_layers; ++i) n += is_moe_layer(i) ? 1 : 0;
  return n;
}

std::int64_t ModelSpec::window_of_layer(std::int64_t layer) const {
  if (attention.sliding_window <= 0 || layer < 0) return 0;
  const auto& p = attention.sliding_window_pattern;
  if (p.empty()) return attention.sliding_window;
  return p[static_cast<std::size_t>(layer) % p.size()] != 0 ? attention.sliding_window : 0;
}

std::int64_t ModelSpec::num_sliding_window_layers() const {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < num_layers; ++i) n += window_of_layer(i) > 0 ? 1 : 0;
  return n;
}

std::vector<SpecProblem> check_spec(const ModelSpec& s) {
  std::vector<SpecProblem> out;
  auto add = [&out](std::string field, std::string message) { out.push_back({std::move(field), std::move(message)}); };
  // Absurd sizes: refused before any loop over the layers or int64 count of the parameters (a hidden size of 2^32
  // overflows h^2), with the limits named so a mistyped size is easy to spot.
  if (s.num_layers > kMaxLayers)
    add("/num_layers", "num_layers " + std::to_string(s.num_layers) + " is beyond moesim's limit of " +
                           std::to_string(kMaxLayers) + " layers");
  if (s.mtp_num_layers > kMaxLayers)
    add("/mtp_num_layers", "mtp_num_layers " + std::to_string(s.mtp_num_layers) + " is beyond moesim's limit of " +
                               std::to_string(kMaxLayers) + " layers");
  // The other checks walk the layers: not with billions of them.
  if (!out.empty()) return out;
  if (const long double n = parameter_magnitude(s); n > kMaxParameters) {
    char count[32];
    std::snprintf(count, sizeof count, "%.3Lg", n);
    add("", std::string("the model's sizes give about ") + count +
                " parameters, beyond moesim's limit of 1e15 (hidden_size " + std::to_string(s.hidden_size) +
                ", vocab_size " + std::to_string(s.vocab_size) + ", num_layers " + std::to_string(s.num_layers) +
                "); is a size mistyped?");
  }
  const auto& a = s.attention;
  if (a.kind == AttentionKind::gqa && a.num_query_groups > 0 && a.num_attention_heads % a.num_query_groups != 0)
    add("/attention/num_query_groups", "num_attention_heads (" + std::to_string(a.num_attention_heads) +
                                           ") is not divisible by num_query_groups (" +
                                           std::to_string(a.num_query_groups) + ")");
  if (a.kind == AttentionKind::gqa && a.num_query_groups > a.num_attention_heads)
    add("/attention/num_query_groups", "num_query_groups (" + std::to_string(a.num_query_groups) +
                                           ") exceeds num_attention_heads (" + std::to_string(a.num_attention_heads) +
                                           ")");
  if (a.kind == AttentionKind::mla && a.linear_bias)
    add("/attention/linear_bias", "projection biases are only modelled for GQA/MHA attention");
  for (std::size_t i = 0; i < a.sliding_window_pattern.size(); ++i)
    if (a.sliding_window_pattern[i] != 0 && a.sliding_window_pattern[i] != 1)
      add("/attention/sliding_window_pattern/" + std::to_string(i),
          "expected 0 (full) or 1 (sliding), got " + std::to_string(a.sliding_window_pattern[i]));
  if (!a.sliding_window_pattern.empty() && a.sliding_window == 0)
    add("/attention/sliding_window_pattern", "a layer pattern is given but sliding_window is 0");

  const auto& m = s.moe;
  if (s.is_moe()) {
    if (m.top_k > m.num_experts)
      add("/moe/top_k",
          "top_k (" + std::to_string(m.top_k) + ") exceeds num_experts (" + std::to_string(m.num_experts) + ")");
    if ((m.num_shared_experts > 0) != (m.shared_expert_ffn_hidden_size > 0))
      add("/moe/shared_expert_ffn_hidden_size",
          "num_shared_experts and shared_expert_ffn_hidden_size must be both zero or both positive");
    if (m.n_group > 0 && m.num_experts % m.n_group != 0)
      add("/moe/n_group", "num_experts (" + std::to_string(m.num_experts) + ") is not divisible by n_group (" +
                              std::to_string(m.n_group) + ")");
    if (m.topk_group > m.n_group)
      add("/moe/topk_group",
          "topk_group (" + std::to_string(m.topk_group) + ") exceeds n_group (" + std::to_string(m.n_group) + ")");
    else if (m.n_group > 1 && m.num_experts % m.n_group == 0 && m.top_k <= m.num_experts &&
             m.top_k > m.topk_group * (m.num_experts / m.n_group))
      add("/moe/topk_group", "top_k (" + std::to_string(m.top_k) + ") exceeds the experts in topk_group groups (" +
                                 std::to_string(m.topk_group * (m.num_experts / m.n_group)) + ")");
    if (!m.layer_pattern.empty()) {
      if (static_cast<std::int64_t>(m.layer_pattern.size()) != s.num_layers)
        add("/moe/layer_pattern", "has " + std::to_string(m.layer_pattern.size()) +
                                      " entries, expected one per layer (" + std::to_string(s.num_layers) + ")");
      for (std::size_t i = 0; i < m.layer_pattern.size(); ++i)
        if (m.layer_pattern[i] != 0 && m.layer_pattern[i] != 1)
          add("/moe/layer_pattern/" + std::to_string(i),
              "expected 0 (dense) or 1 (MoE), got " + std::to_string(m.layer_pattern[i]));
    } else if (m.first_k_dense_replace >= s.num_layers && s.num_layers > 0) {
      add("/moe/first_k_dense_replace", "first_k_dense_replace (" + std::to_string(m.first_k_dense_replace) +
                                            ") leaves no MoE layer among " + std::to_string(s.num_layers));
    }
  }
  if (s.num_dense_layers() > 0 && s.ffn.ffn_hidden_size <= 0)
    add("/ffn/ffn_hidden_size",
        "dense layers (" + std::to_string(s.num_dense_layers()) + ") need a positive ffn_hidden_size");
  return out;
}

}  // namespace moesim::model
