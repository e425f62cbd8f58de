#pragma once
// layout::ModelFacts filled from a ModelSpec: the bridge from a model to what the layout feasibility check
// needs (layout/ does not depend on model/). It lives here because memory/ is the first module that sees both.
#include "layout/model_facts.hpp"
#include "model/model_spec.hpp"

namespace moesim::memory {

inline layout::ModelFacts model_facts(const model::ModelSpec& m) {
  layout::ModelFacts f;
  f.num_layers = static_cast<int>(m.num_layers);
  f.num_experts = static_cast<int>(m.moe.num_experts);
  f.num_attention_heads = static_cast<int>(m.attention.num_attention_heads);
  // MLA has no key/value groups to shard: every head has its own K and V after the up-projection.
  f.num_query_groups = m.attention.kind == model::AttentionKind::mla ? f.num_attention_heads
                                                                     : static_cast<int>(m.attention.num_query_groups);
  f.mtp_layers_available = static_cast<int>(m.mtp_num_layers);
  f.clamped_or_biased_experts = m.ffn.activation_clamp > 0 || m.ffn.linear_bias;
  return f;
}

}  // namespace moesim::memory
