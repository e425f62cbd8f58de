#include "memory/te_dummy_wgrad.hpp"

#include <cstdint>
#include <set>
#include <utility>

#include "model/flops.hpp"
#include "model/parameters.hpp"

namespace moesim::memory {
namespace {

// TE releases that return a cached dummy (module/base.py get_dummy_wgrad): te.Linear and LayerNormLinear from 2.3,
// GroupedLinear from 2.10 (the first tags whose modules call it, TE git history).
constexpr layout::TeVersion kTeDummyWgradLinear{2, 3};
constexpr layout::TeVersion kTeDummyWgradGrouped{2, 10};

using Shape = std::pair<std::int64_t, std::int64_t>;  // (rows, cols) of one GPU's weight

void attention_shapes(const model::ModelSpec& m, std::int64_t tp, std::set<Shape>& out) {
  const auto& a = m.attention;
  const std::int64_t h = m.hidden_size, nh = a.num_attention_heads;
  if (a.kind == model::AttentionKind::mla) {
    // Megatron's MLA: the down-projections are not split over TP, the up-projections and the output are.
    if (a.q_lora_rank > 0) {
      out.insert({a.q_lora_rank, h});
      out.insert({nh * (a.qk_nope_head_dim + a.qk_rope_head_dim) / tp, a.q_lora_rank});
    } else {
      out.insert({nh * (a.qk_nope_head_dim + a.qk_rope_head_dim) / tp, h});
    }
    out.insert({a.kv_lora_rank + a.qk_rope_head_dim, h});
    out.insert({nh * (a.qk_nope_head_dim + a.v_head_dim) / tp, a.kv_lora_rank});
    out.insert({h, nh * a.v_head_dim / tp});
  } else {
    out.insert({(nh + 2 * a.num_query_groups) * a.head_dim / tp, h});
    out.insert({h, nh * a.head_dim / tp});
  }
}

void mlp_shapes(const model::ModelSpec& m, std::int64_t width, std::int64_t shards, std::set<Shape>& out) {
  const std::int64_t gated = m.ffn.activation == model::Activation::swiglu ? 2 : 1;
  out.insert({gated * width / shards, m.hidden_size});
  out.insert({m.hidden_size, width / shards});
}

}  // namespace

double te_dummy_wgrad_bytes(const model::ModelSpec& m, const layout::Layout& l, const RankModules& held) {
  if (l.fsdp || l.te_version < kTeDummyWgradLinear) return 0;
  std::set<Shape> shapes;
  if (held.dense_layers || held.moe_layers || held.mtp) attention_shapes(m, l.tp, shapes);
  if (held.dense_layers) mlp_shapes(m, m.ffn.ffn_hidden_size, l.tp, shapes);
  if ((held.moe_layers || (held.mtp && m.mtp_layer_is_moe())) && m.moe.num_shared_experts > 0)
    mlp_shapes(m, m.moe.num_shared_experts * m.moe.shared_expert_ffn_hidden_size, l.tp, shapes);
  if (held.mtp) shapes.insert({m.hidden_size / l.tp, 2 * m.hidden_size});  // MTP's [embedding; hidden] projection
  // Routed experts: one dummy per expert shape (all experts share it), GroupedLinear from TE 2.10.
  std::set<Shape> grouped;
  if ((held.moe_layers || (held.mtp && m.mtp_layer_is_moe())) && l.te_version >= kTeDummyWgradGrouped)
    mlp_shapes(m, m.moe.expert_ffn_hidden_size, l.etp, grouped);
  if (held.head) shapes.insert({model::padded_vocab_size(m.vocab_size, 128, l.tp) / l.tp, m.hidden_size});
  constexpr double kParamBytes = 2;  // the parameters' dtype (BF16; FP8 primary weights still report BF16)
  double elements = 0;
  for (const auto& s : shapes) elements += static_cast<double>(s.first) * static_cast<double>(s.second);
  for (const auto& s : grouped)  // a distinct cache key only if no te.Linear has the same shape
    if (!shapes.count(s)) elements += static_cast<double>(s.first) * static_cast<double>(s.second);
  return kParamBytes * elements;
}

}  // namespace moesim::memory
