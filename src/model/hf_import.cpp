#include "model/hf_import.hpp"

#include <algorithm>
#include <map>

#include "config/document.hpp"
#include "config/object_reader.hpp"
#include "core/did_you_mean.hpp"

namespace moesim::model {
namespace {
using config::Bound;
using config::Json;
using config::ObjectReader;

enum class Family { deepseek, qwen3_moe, qwen3, mixtral, gpt_oss, llama, unknown };

struct KnownArch {
  const char* architecture;
  const char* model_type;
  Family family;
};

constexpr KnownArch kKnown[] = {
    {"DeepseekV3ForCausalLM", "deepseek_v3", Family::deepseek},
    {"DeepseekV2ForCausalLM", "deepseek_v2", Family::deepseek},
    {"DeepseekV3ForCausalLM", "kimi_k2", Family::deepseek},
    {"Qwen3MoeForCausalLM", "qwen3_moe", Family::qwen3_moe},
    {"Qwen3ForCausalLM", "qwen3", Family::qwen3},
    {"MixtralForCausalLM", "mixtral", Family::mixtral},
    {"GptOssForCausalLM", "gpt_oss", Family::gpt_oss},
    {"LlamaForCausalLM", "llama", Family::llama},
    {"MistralForCausalLM", "mistral", Family::llama},
};

Family family_of(const Json& j, ObjectReader& r) {
  if (const Json* a = r.raw("architectures"); a && a->is_array() && !a->empty() && (*a)[0].is_string()) {
    const std::string arch = (*a)[0].get<std::string>();
    for (const auto& k : kKnown)
      if (arch == k.architecture) return k.family;
    r.error("architectures", "unsupported architecture \"" + arch +
                                 "\"; supported: " + join_names(supported_hf_architectures()) +
                                 did_you_mean(arch, supported_hf_architectures()));
    return Family::unknown;
  }
  const std::string type =
      j.contains("model_type") && j["model_type"].is_string() ? j["model_type"].get<std::string>() : "";
  for (const auto& k : kKnown)
    if (type == k.model_type) return k.family;
  std::vector<std::string> types;
  for (const auto& k : kKnown) types.emplace_back(k.model_type);
  r.error("model_type",
          "unsupported model_type \"" + type + "\"; supported: " + join_names(types) + did_you_mean(type, types));
  return Family::unknown;
}

// An integer that HF allows to be null (q_lora_rank, n_group, sliding_window): null or absent -> fallback.
std::int64_t nullable_int(ObjectReader& r, std::string_view key, std::int64_t fallback, Bound bound = Bound::positive) {
  const Json* v = r.raw(key);
  if (!v || v->is_null()) return fallback;
  return r.integer(key, bound);
}

// Translates the catalog-format field of a cross-check problem to the HF key a user would edit.
std::string hf_pointer(const std::string& field, Family f) {
  static const std::map<std::string, std::string> common = {
      {"/moe/top_k", "/num_experts_per_tok"},
      {"/attention/num_query_groups", "/num_key_value_heads"},
      {"/moe/n_group", "/n_group"},
      {"/moe/topk_group", "/topk_group"},
      {"/moe/first_k_dense_replace", "/first_k_dense_replace"},
      {"/moe/shared_expert_ffn_hidden_size", "/n_shared_experts"},
      {"/ffn/ffn_hidden_size", "/intermediate_size"},
      {"/num_layers", "/num_hidden_layers"},
      {"/mtp_num_layers", "/num_nextn_predict_layers"},
      {"/attention/sliding_window_pattern", "/layer_types"},
  };
  if (field.rfind("/moe/layer_pattern", 0) == 0) return f == Family::qwen3_moe ? "/mlp_only_layers" : "/moe_layer_freq";
  if (auto it = common.find(field); it != common.end()) return it->second;
  return "";
}

std::string name_from_file(const std::string& file) {
  const std::filesystem::path p(file);
  if (p.filename() == "config.json" && p.has_parent_path() && !p.parent_path().filename().empty())
    return p.parent_path().filename().string();
  return p.stem().string();
}

void read_common(ObjectReader& r, ModelSpec& m) {
  m.hidden_size = r.integer("hidden_size");
  m.num_layers = r.integer("num_hidden_layers");
  m.vocab_size = r.integer("vocab_size");
  m.tie_embeddings = r.boolean_or("tie_word_embeddings", false);
  m.attention.num_attention_heads = r.integer("num_attention_heads");
  const std::string act = r.string_or("hidden_act", "silu");
  // Every supported family uses a gated MLP; silu makes it SwiGLU.
  if (act != "silu" && act != "swiglu")
    r.error("hidden_act", "unsupported hidden_act \"" + act + "\" for a gated MLP; supported: silu");
  m.ffn.activation = Activation::swiglu;
}

void read_gqa(ObjectReader& r, ModelSpec& m, bool default_bias) {
  auto& a = m.attention;
  a.kind = AttentionKind::gqa;
  a.num_query_groups = nullable_int(r, "num_key_value_heads", a.num_attention_heads);
  const std::int64_t fallback_dim = a.num_attention_heads > 0 ? m.hidden_size / a.num_attention_heads : 0;
  a.head_dim = nullable_int(r, "head_dim", fallback_dim);
  a.linear_bias = r.boolean_or("attention_bias", default_bias);
}

void read_deepseek(ObjectReader& r, ModelSpec& m) {
  auto& a = m.attention;
  a.kind = AttentionKind::mla;
  a.q_lora_rank = nullable_int(r, "q_lora_rank", 0);
  a.kv_lora_rank = r.integer("kv_lora_rank");
  a.qk_nope_head_dim = r.integer("qk_nope_head_dim");
  a.qk_rope_head_dim = r.integer("qk_rope_head_dim");
  a.v_head_dim = r.integer("v_head_dim");
  m.ffn.ffn_hidden_size = r.integer("intermediate_size");
  auto& e = m.moe;
  e.num_experts = r.integer("n_routed_experts");
  e.top_k = r.integer("num_experts_per_tok");
  e.expert_ffn_hidden_size = r.integer("moe_intermediate_size");
  e.num_shared_experts = nullable_int(r, "n_shared_experts", 0, Bound::non_negative);
  e.shared_expert_ffn_hidden_size = e.num_shared_experts > 0 ? e.expert_ffn_hidden_size : 0;
  e.first_k_dense_replace = r.integer_or("first_k_dense_replace", 0, Bound::non_negative);
  e.moe_layer_freq = r.integer_or("moe_layer_freq", 1);
  e.router_score = r.choice_or("scoring_func", "softmax", {"softmax", "sigmoid"}) == "sigmoid" ? RouterScore::sigmoid
                                                                                               : RouterScore::softmax;
  e.n_group = nullable_int(r, "n_group", 1);
  e.topk_group = nullable_int(r, "topk_group", 1);
  e.topk_scaling_factor = r.number_or("routed_scaling_factor", 1.0);
  m.mtp_num_layers = r.integer_or("num_nextn_predict_layers", 0, Bound::non_negative);
}

void read_qwen3(ObjectReader& r, ModelSpec& m, bool moe) {
  read_gqa(r, m, false);
  m.attention.qk_norm = true;  // Qwen3 normalises every query and key head (q_norm, k_norm)
  m.ffn.ffn_hidden_size = r.integer("intermediate_size");
  if (r.boolean_or("use_sliding_window", false)) {
    // Qwen2/3 modelling code: layers at or above max_window_layers use the window.
    m.attention.sliding_window = nullable_int(r, "sliding_window", 0, Bound::non_negative);
    const std::int64_t first = r.integer_or("max_window_layers", m.num_layers, Bound::non_negative);
    for (std::int64_t i = 0; i < m.num_layers; ++i) m.attention.sliding_window_pattern.push_back(i >= first ? 1 : 0);
  }
  if (!moe) return;
  auto& e = m.moe;
  e.num_experts = r.integer("num_experts");
  e.top_k = r.integer("num_experts_per_tok");
  e.expert_ffn_hidden_size = r.integer("moe_intermediate_size");
  const std::int64_t step = r.integer_or("decoder_sparse_step", 1);
  const auto mlp_only = r.integers_or("mlp_only_layers", {}, Bound::non_negative);
  if (step != 1 || !mlp_only.empty()) {
    // Qwen's rule: layer i is MoE unless listed in mlp_only_layers, and only when (i + 1) % step == 0.
    for (std::int64_t i = 0; i < m.num_layers; ++i) {
      const bool listed = std::find(mlp_only.begin(), mlp_only.end(), i) != mlp_only.end();
      e.layer_pattern.push_back(!listed && step > 0 && (i + 1) % step == 0 ? 1 : 0);
    }
  }
}

void read_mixtral_like(ObjectReader& r, ModelSpec& m, bool gpt_oss) {
  read_gqa(r, m, gpt_oss);
  auto& e = m.moe;
  e.num_experts = r.integer("num_local_experts");
  e.top_k = r.integer("num_experts_per_tok");
  e.expert_ffn_hidden_size = r.integer("intermediate_size");  // every MLP is MoE; this is the expert width
  m.attention.sliding_window = nullable_int(r, "sliding_window", 0, Bound::non_negative);
  if (!gpt_oss) return;
  m.attention.attention_sinks = true;
  m.ffn.linear_bias = true;
  e.router_bias = true;
  m.ffn.activation_clamp = r.number_or("swiglu_limit", 7.0, Bound::non_negative);  // GPT-OSS's clamped SwiGLU
  if (const Json* rs = r.raw("rope_scaling"); rs && rs->is_object()) {
    const auto type = rs->find("rope_type");
    if (type != rs->end() && !type->is_string())
      r.error("rope_scaling", "rope_type must be a string, got " + type->dump());
    else if (type != rs->end() && *type == "yarn")
      m.attention.yarn_rope = true;
  }
  if (const Json* types = r.raw("layer_types"); types && !types->is_null()) {
    if (!types->is_array()) {
      r.error("layer_types", "expected an array of \"sliding_attention\" / \"full_attention\"");
    } else {
      for (std::size_t i = 0; i < types->size(); ++i) {
        const Json& t = (*types)[i];
        if (t == "sliding_attention" || t == "full_attention") {
          m.attention.sliding_window_pattern.push_back(t == "sliding_attention" ? 1 : 0);
        } else {
          r.diagnostics().add(r.file(), r.pointer_to("layer_types") + "/" + std::to_string(i),
                              "expected \"sliding_attention\" or \"full_attention\", got " + t.dump());
        }
      }
      if (static_cast<std::int64_t>(types->size()) != m.num_layers)
        r.error("layer_types", "has " + std::to_string(types->size()) + " entries, expected num_hidden_layers (" +
                                   std::to_string(m.num_layers) + ")");
    }
  } else if (m.attention.sliding_window > 0) {
    m.attention.sliding_window_pattern = {1, 0};  // GPT-OSS default: even layers sliding
  }
}

void read_llama(ObjectReader& r, ModelSpec& m) {
  read_gqa(r, m, false);
  m.ffn.ffn_hidden_size = r.integer("intermediate_size");
  m.ffn.linear_bias = r.boolean_or("mlp_bias", false);
  m.attention.sliding_window = nullable_int(r, "sliding_window", 0, Bound::non_negative);  // Mistral
}
}  // namespace

std::vector<std::string> supported_hf_architectures() {
  std::vector<std::string> out;
  for (const auto& k : kKnown)
    if (std::find(out.begin(), out.end(), k.architecture) == out.end()) out.emplace_back(k.architecture);
  return out;
}

ModelSpec read_hf_config(const config::Document& doc, Diagnostics& diags) {
  ModelSpec m;
  m.name = name_from_file(doc.file);
  m.source = "Hugging Face config.json: " + doc.file;
  const std::size_t problems_before = diags.size();
  ObjectReader r(doc, diags);
  const Family f = family_of(doc.json, r);
  if (f != Family::unknown) {
    read_common(r, m);
    switch (f) {
      case Family::deepseek: read_deepseek(r, m); break;
      case Family::qwen3_moe: read_qwen3(r, m, true); break;
      case Family::qwen3: read_qwen3(r, m, false); break;
      case Family::mixtral: read_mixtral_like(r, m, false); break;
      case Family::gpt_oss: read_mixtral_like(r, m, true); break;
      case Family::llama: read_llama(r, m); break;
      case Family::unknown: break;
    }
  }
  // HF configs carry many keys moesim has no use for: they are accepted, not reported.
  if (doc.json.is_object())
    for (auto it = doc.json.begin(); it != doc.json.end(); ++it) r.has(it.key());
  r.finish();
  if (diags.size() == problems_before)
    for (const auto& p : check_spec(m)) {
      const std::string ptr = hf_pointer(p.field, f);
      diags.add(doc.file, ptr, ptr.empty() && !p.field.empty() ? p.field + ": " + p.message : p.message);
    }
  return m;
}

}  // namespace moesim::model
