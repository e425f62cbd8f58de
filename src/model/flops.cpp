#include "model/flops.hpp"

#include "model/parameters.hpp"

namespace moesim::model {
namespace {
constexpr FlopsConvention kAll[] = {FlopsConvention::megatron, FlopsConvention::torchtitan, FlopsConvention::maxtext};

// Megatron's per-layer attention projection parameters (= MACs per token); no norms, biases or sinks.
double attention_projection_macs(const ModelSpec& s) {
  const auto& a = s.attention;
  const double h = static_cast<double>(s.hidden_size), nh = static_cast<double>(a.num_attention_heads);
  if (a.kind == AttentionKind::mla) {
    const double qk = static_cast<double>(a.qk_nope_head_dim), qr = static_cast<double>(a.qk_rope_head_dim);
    const double v = static_cast<double>(a.v_head_dim), ql = static_cast<double>(a.q_lora_rank);
    const double q = a.q_lora_rank > 0 ? ql * (h + nh * (qk + qr) + 1) : h * nh * (qk + qr);
    return q + static_cast<double>(a.kv_lora_rank) * (h + nh * (qk + v) + 1) + h * qr + nh * v * h;
  }
  const double d = static_cast<double>(a.head_dim), g = static_cast<double>(a.num_query_groups);
  return h * (nh * d + 2 * g * d) + nh * d * h;
}

// 6 * heads * (d_qk + d_v) * context, summed over the main layers and `extra_full_layers` MTP layers.
double attention_core(const ModelSpec& s, const FlopsOptions& o, bool causal_halving, std::int64_t extra_full_layers) {
  const double per_key = 6.0 * static_cast<double>(s.attention.num_attention_heads) *
                         static_cast<double>(s.attention.qk_head_dim() + s.attention.v_dim());
  double sum = 0;
  for (std::int64_t i = 0; i < s.num_layers; ++i) {
    const std::int64_t w = o.sliding_window_aware ? s.window_of_layer(i) : 0;
    sum += per_key * attention_context(o.seq_length, w, causal_halving);
  }
  sum += per_key * attention_context(o.seq_length, 0, causal_halving) * static_cast<double>(extra_full_layers);
  return sum;
}

FlopsBreakdown megatron_like(const ModelSpec& s, const FlopsOptions& o, std::int64_t mtp, bool router,
                             std::int64_t vocab) {
  FlopsBreakdown b;
  const double h = static_cast<double>(s.hidden_size), ffx = static_cast<double>(s.ffn.matrices());
  const double n_moe = static_cast<double>(s.num_moe_layers() + (s.mtp_layer_is_moe() ? mtp : 0));
  const double n_dense = static_cast<double>(s.num_dense_layers() + (s.mtp_layer_is_moe() ? 0 : mtp));
  const double f_dense = static_cast<double>(s.ffn.ffn_hidden_size);
  const double f_routed = static_cast<double>(s.moe.expert_ffn_hidden_size * s.moe.top_k);
  const double f_shared = static_cast<double>(s.moe.shared_expert_ffn_hidden_size * s.moe.num_shared_experts);
  b.mlp = 6 * h * (f_dense * ffx * n_dense + (f_routed + f_shared) * ffx * n_moe);
  b.attention_core = attention_core(s, o, true, mtp);
  b.attention = 6 * attention_projection_macs(s) * static_cast<double>(s.num_layers + mtp) + b.attention_core;
  b.mtp = 6 * static_cast<double>(mtp) * (3 * h + 2 * h * h);
  b.logits = 6 * h * static_cast<double>(vocab) * static_cast<double>(mtp + 1);
  if (router) b.router = 6 * h * static_cast<double>(s.moe.num_experts) * static_cast<double>(s.num_moe_layers());
  return b;
}

FlopsBreakdown torchtitan(const ModelSpec& spec, const FlopsOptions& o) {
  ModelSpec s = spec;
  s.mtp_num_layers = 0;  // TorchTitan's models have no MTP block
  const ParameterCounts p = count_parameters(s);
  FlopsBreakdown b;
  for (const auto& l : p.layers) {
    b.mlp += 6.0 * static_cast<double>(l.dense_mlp + s.moe.top_k * l.per_expert + l.shared_experts);
    b.router += 6.0 * static_cast<double>(l.router);
    b.attention += 6.0 * static_cast<double>(l.attention);
    b.other += 6.0 * static_cast<double>(l.norms);
  }
  b.other += 6.0 * static_cast<double>(p.final_norm);
  b.logits = 6.0 * static_cast<double>(p.lm_head);
  FlopsOptions full = o;
  full.sliding_window_aware = false;
  b.attention_core = attention_core(s, full, false, 0);
  b.attention += b.attention_core;
  return b;
}
}  // namespace

const char* to_string(FlopsConvention c) {
  switch (c) {
    case FlopsConvention::megatron: return "megatron";
    case FlopsConvention::torchtitan: return "torchtitan";
    case FlopsConvention::maxtext: return "maxtext";
  }
  return "?";
}

std::optional<FlopsConvention> parse_flops_convention(std::string_view name) {
  for (auto c : kAll)
    if (name == to_string(c)) return c;
  return std::nullopt;
}

std::vector<std::string> flops_convention_names() {
  std::vector<std::string> out;
  for (auto c : kAll) out.emplace_back(to_string(c));
  return out;
}

std::int64_t padded_vocab_size(std::int64_t vocab, std::int64_t divisible_by, std::int64_t tp) {
  const std::int64_t m = (divisible_by > 0 ? divisible_by : 1) * (tp > 0 ? tp : 1);
  return (vocab + m - 1) / m * m;
}

double attention_context(std::int64_t seq, std::int64_t window, bool causal_halving) {
  const double s = static_cast<double>(seq);
  const double full = causal_halving ? s / 2 : s;
  if (window <= 0) return full;
  // Megatron-Bridge flop_utils.py: W = window_size[0] + window_size[1] + 1 (the query itself included).
  const double w = static_cast<double>(window + 1);
  if (w >= s) return full;
  return w - w * (w - 1) / (2 * s);
}

FlopsBreakdown training_flops_per_token(const ModelSpec& spec, const FlopsOptions& o) {
  switch (o.convention) {
    case FlopsConvention::torchtitan: return torchtitan(spec, o);
    case FlopsConvention::maxtext: return megatron_like(spec, o, 0, true, spec.vocab_size);
    case FlopsConvention::megatron: break;
  }
  const std::int64_t mtp = o.mtp_num_layers >= 0 ? o.mtp_num_layers : spec.mtp_num_layers;
  return megatron_like(spec, o, mtp, false, padded_vocab_size(spec.vocab_size, o.vocab_divisible_by, o.tp));
}

}  // namespace moesim::model
