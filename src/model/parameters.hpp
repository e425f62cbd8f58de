#pragma once
// Parameter counts of a ModelSpec: totals, parameters active per token, and a per-layer breakdown for the
// memory model.
//
// Conventions follow Megatron-LM's megatron/training/theoretical_memory_usage.py as re-implemented in
// data/reference/scripts/params_check.py (moe-modeling.md §1): RMSNorm (h weights, no bias), two
// norms per layer plus a final norm, MLA's q/kv low-rank norms inside attention, router = h x E. Beyond that
// script, biases (GPT-OSS linears and router), attention sinks and Qwen3's QK-norm are counted when the spec
// has them, so GPT-OSS-120B gives OpenAI's 116.83 B rather than the bias-free 116.79 B.
#include <cstdint>
#include <vector>

#include "model/model_spec.hpp"

namespace moesim::model {

// One transformer layer (a main layer or the transformer part of an MTP block).
struct LayerParameters {
  bool moe = false;
  std::int64_t attention = 0;       // q/k/v/o (or MLA) projections, their biases, MLA and QK norms, sinks
  std::int64_t norms = 0;           // the pre-attention and pre-MLP RMSNorms
  std::int64_t dense_mlp = 0;       // dense layers only
  std::int64_t router = 0;          // MoE layers only: h x E (+ E bias)
  std::int64_t per_expert = 0;      // one routed expert
  std::int64_t routed_experts = 0;  // all routed experts = num_experts * per_expert
  std::int64_t shared_experts = 0;  // all shared experts

  std::int64_t total() const { return attention + norms + dense_mlp + router + routed_experts + shared_experts; }
  // Parameters a token touches: top_k routed experts instead of all.
  std::int64_t active(std::int64_t top_k) const {
    return attention + norms + dense_mlp + router + top_k * per_expert + shared_experts;
  }
};

// One multi-token-prediction block: a transformer layer plus the projection of [embedding; hidden] (2h -> h)
// and its three norms. Embedding and output head are shared with the main model, so not counted here.
struct MtpParameters {
  LayerParameters layer;
  std::int64_t projection = 0;  // 2h * h
  std::int64_t norms = 0;       // 3h: the two input norms and the block's final norm
  std::int64_t total() const { return layer.total() + projection + norms; }
};

struct ParameterCounts {
  std::int64_t embedding = 0;           // input embedding, V x h
  std::int64_t lm_head = 0;             // output head, h x V; 0 when tied to the embedding
  std::int64_t final_norm = 0;          // h
  std::vector<LayerParameters> layers;  // one per main layer
  std::vector<MtpParameters> mtp;       // one per MTP block

  std::int64_t main_total = 0;            // main model (no MTP): embedding + layers + final norm + head
  std::int64_t mtp_total = 0;             // all MTP blocks
  std::int64_t total = 0;                 // main_total + mtp_total
  std::int64_t active = 0;                // per token, main model, embedding and head included (params_check.py)
  std::int64_t active_non_embedding = 0;  // active minus the input embedding (OpenAI's "active"; TorchTitan's N)
};

// Counts `spec`. `vocab_size` overrides the spec's (pass Megatron's padded vocabulary to size the memory a
// run really allocates); 0 keeps the spec's value.
ParameterCounts count_parameters(const ModelSpec& spec, std::int64_t vocab_size = 0);

// An upper estimate of the parameter count in long double (no overflow for any field values): what check_spec
// compares with kMaxParameters before the int64 counts are taken.
long double parameter_magnitude(const ModelSpec& spec);

// Parameters of one dense (moe_layer = false) or MoE layer of `spec`.
LayerParameters layer_parameters(const ModelSpec& spec, bool moe_layer);

}  // namespace moesim::model
