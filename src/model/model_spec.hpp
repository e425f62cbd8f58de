#pragma once
// ModelSpec: the architecture of one transformer LLM (dense or Mixture-of-Experts), as plain data.
//
// Everything the parameter, FLOP, memory and workload models need is here; nothing about parallelism or
// precision. A spec comes from a catalog file (model_loader.hpp), a Hugging Face config.json
// (hf_import.hpp), or is filled in directly by tests. Sizes are element counts (not bytes). Layer indices
// are 0-based over the main model; MTP blocks are extra and are not counted in num_layers.
#include <cstdint>
#include <string>
#include <vector>

namespace moesim::model {

// mha is gqa with num_query_groups == num_attention_heads; both are read the same way.
enum class AttentionKind { gqa, mla };
// swiglu: gated (3 matrices: gate, up, down); gelu / relu2: plain 2-matrix MLP.
enum class Activation { swiglu, gelu, relu2 };
enum class RouterScore { softmax, sigmoid };

const char* to_string(AttentionKind k);
const char* to_string(Activation a);
const char* to_string(RouterScore r);

struct AttentionSpec {
  AttentionKind kind = AttentionKind::gqa;
  std::int64_t num_attention_heads = 0;
  // GQA/MHA only.
  std::int64_t num_query_groups = 0;  // key/value heads
  std::int64_t head_dim = 0;
  // MLA only (DeepSeek-V2/V3, Kimi-K2). q_lora_rank 0 = queries projected directly from the hidden state.
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;

  bool qk_norm = false;          // RMSNorm on each query and key head (Qwen3): 2*head_dim parameters a layer
  bool linear_bias = false;      // biases on q/k/v/o projections (GPT-OSS)
  bool attention_sinks = false;  // one learned sink logit per head (GPT-OSS)
  // RoPE with YaRN scaling (GPT-OSS). Megatron does not fuse RoPE when YaRN's mscale is used (Megatron-LM PR
  // #2038), so it runs as separate elementwise ops; other models use the fused RoPE kernel. GQA/MHA only: MLA's
  // decoupled RoPE is costed as its own kernels whatever this says.
  bool yarn_rope = false;
  // Sliding-window attention: a query sees itself and the `sliding_window` tokens before it (Megatron's
  // window_size[0]; Hugging Face's "sliding_window"). 0 = no layer uses a window.
  std::int64_t sliding_window = 0;
  // Which layers use the window: layer i does when pattern[i % pattern.size()] != 0. Empty with a non-zero
  // window = every layer. GPT-OSS: {1, 0} (even layers sliding, odd layers full).
  std::vector<int> sliding_window_pattern;

  // Per-head width of queries/keys (MLA: nope + rope) and of values.
  std::int64_t qk_head_dim() const;
  std::int64_t v_dim() const;
};

struct FfnSpec {
  std::int64_t ffn_hidden_size = 0;            // dense layers' MLP width; 0 when the model has no dense layer
  Activation activation = Activation::swiglu;  // also used by routed and shared experts
  bool linear_bias = false;                    // biases on MLP and expert linears (GPT-OSS)
  // Clamped SwiGLU (GPT-OSS: limit 7.0; gate clamped above, linear part both ways, (up + 1) * gate *
  // sigmoid(1.702 gate)); 0 = plain SwiGLU. The measured stacks run it as separate elementwise ops (Megatron-LM
  // #1739; fused only by Megatron-LM PR #5941, 2026-07).
  double activation_clamp = 0;

  // Number of hidden-size x ffn matrices in one MLP: 3 gated, 2 plain (Megatron's "ffx"/"glu" factor).
  std::int64_t matrices() const { return activation == Activation::swiglu ? 3 : 2; }
};

struct MoeSpec {
  std::int64_t num_experts = 0;  // routed experts per MoE layer; 0 = dense model
  std::int64_t top_k = 0;
  std::int64_t expert_ffn_hidden_size = 0;
  std::int64_t num_shared_experts = 0;
  std::int64_t shared_expert_ffn_hidden_size = 0;  // width of EACH shared expert
  // Which layers are MoE. With an explicit layer_pattern (one 0/1 per layer, Megatron's --moe-layer-freq
  // list) it decides alone; otherwise layer i is MoE when i >= first_k_dense_replace and
  // i % moe_layer_freq == 0 (the rule of Hugging Face's DeepseekV3 modelling code).
  std::int64_t first_k_dense_replace = 0;  // DeepSeek-V3: 3, Kimi-K2: 1
  std::int64_t moe_layer_freq = 1;
  std::vector<int> layer_pattern;
  RouterScore router_score = RouterScore::softmax;
  bool router_bias = false;  // a learned bias on the router linear (GPT-OSS)
  // Group-limited routing: experts split in n_group groups, each token picks its topk_group best groups
  // first (DeepSeek-V3: 8 / 4; with one group per node this is "at most 4 nodes per token").
  std::int64_t n_group = 1;
  std::int64_t topk_group = 1;
  double topk_scaling_factor = 1.0;  // DeepSeek-V3 routed_scaling_factor 2.5 (no effect on counts)
};

struct ModelSpec {
  std::string name;    // catalog name, e.g. "deepseek-v3"
  std::string source;  // where the numbers come from (config.json URL, paper)
  std::vector<std::string> aliases;

  std::int64_t hidden_size = 0;
  std::int64_t num_layers = 0;  // main model, without MTP blocks
  std::int64_t vocab_size = 0;  // unpadded
  bool tie_embeddings = false;

  AttentionSpec attention;
  FfnSpec ffn;
  MoeSpec moe;
  // Multi-token-prediction depth (DeepSeek-V3: 1). Each MTP block is one more transformer layer of the same
  // type as the last main layer, plus an eh-projection (2h -> h) and norms; it shares embedding and head.
  std::int64_t mtp_num_layers = 0;

  bool is_moe() const { return moe.num_experts > 0; }
  bool is_moe_layer(std::int64_t layer) const;
  std::int64_t num_moe_layers() const;
  std::int64_t num_dense_layers() const { return num_layers - num_moe_layers(); }
  // The type MTP blocks take (that of the last main layer).
  bool mtp_layer_is_moe() const { return num_layers > 0 && is_moe_layer(num_layers - 1); }
  // Tokens a query of `layer` sees before itself; 0 = full causal attention.
  std::int64_t window_of_layer(std::int64_t layer) const;
  std::int64_t num_sliding_window_layers() const;
};

// A problem with a spec's values that no single field shows (top_k > num_experts, heads not divisible by
// groups, ...). `field` is the catalog-format JSON pointer of the value at fault ("/moe/top_k") so that
// each reader can translate it to its own file's key.
struct SpecProblem {
  std::string field;
  std::string message;
};

// Limits on absurd sizes, far above any published model (the largest have ~1e12 parameters and ~130 layers), so
// that the int64 parameter counts, the FLOP and byte figures and the per-layer loops stay in range.
inline constexpr std::int64_t kMaxLayers = 10000;
inline constexpr long double kMaxParameters = 1e15L;

// Cross-checks of a fully read spec; empty when the spec is usable. Assumes each size was already checked
// to be positive where required.
std::vector<SpecProblem> check_spec(const ModelSpec& spec);

}  // namespace moesim::model
