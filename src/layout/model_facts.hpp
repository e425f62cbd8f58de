#pragma once
// What the layout feasibility check and the stage assignment need to know about a model. The layout module
// does not depend on model/: the caller fills this from its ModelSpec (memory/model_facts_from_spec.hpp).
namespace moesim::layout {

struct ModelFacts {
  int num_layers = 1;                      // decoder layers, MTP excluded (DeepSeek-V3: 61)
  int num_experts = 0;                     // routed experts per MoE layer; 0 = dense model
  int num_attention_heads = 1;             // query heads
  int num_query_groups = 1;                // KV heads for GQA; set equal to num_attention_heads for MHA and MLA
  int mtp_layers_available = 0;            // MTP layers the model defines (DeepSeek-V3: 1)
  bool clamped_or_biased_experts = false;  // experts with a clamped GLU or linear biases (GPT-OSS)

  bool is_moe() const { return num_experts > 0; }
};

}  // namespace moesim::layout
