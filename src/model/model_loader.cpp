#include "model/model_loader.hpp"

#include "config/document.hpp"
#include "config/object_reader.hpp"
#include "model/hf_import.hpp"

namespace moesim::model {
namespace {
using config::Bound;
using config::ObjectReader;

Activation activation_from(const std::string& s) {
  if (s == "gelu") return Activation::gelu;
  if (s == "relu2") return Activation::relu2;
  return Activation::swiglu;
}

std::vector<int> to_ints(const std::vector<std::int64_t>& v) { return {v.begin(), v.end()}; }

void read_attention(ObjectReader r, ModelSpec& m) {
  auto& a = m.attention;
  const std::string kind = r.choice("kind", {"mha", "gqa", "mla"});
  a.num_attention_heads = r.integer("num_attention_heads");
  if (kind == "mla") {
    a.kind = AttentionKind::mla;
    a.q_lora_rank = r.integer_or("q_lora_rank", 0, Bound::non_negative);
    a.kv_lora_rank = r.integer("kv_lora_rank");
    a.qk_nope_head_dim = r.integer("qk_nope_head_dim");
    a.qk_rope_head_dim = r.integer("qk_rope_head_dim");
    a.v_head_dim = r.integer("v_head_dim");
  } else {
    a.kind = AttentionKind::gqa;
    // MHA: one key/value head per query head, so the key may be left out.
    a.num_query_groups =
        kind == "mha" ? r.integer_or("num_query_groups", a.num_attention_heads) : r.integer("num_query_groups");
    if (kind == "mha" && a.num_query_groups != a.num_attention_heads && a.num_query_groups > 0)
      r.error("num_query_groups", "kind \"mha\" needs num_query_groups == num_attention_heads (" +
                                      std::to_string(a.num_attention_heads) + "); use kind \"gqa\"");
    a.head_dim = r.integer_or("head_dim", 0);
    if (a.head_dim == 0 && m.hidden_size > 0 && a.num_attention_heads > 0)
      a.head_dim = m.hidden_size / a.num_attention_heads;
  }
  a.qk_norm = r.boolean_or("qk_norm", false);
  a.linear_bias = r.boolean_or("linear_bias", false);
  a.attention_sinks = r.boolean_or("attention_sinks", false);
  a.yarn_rope = r.boolean_or("yarn_rope", false);
  a.sliding_window = r.integer_or("sliding_window", 0, Bound::non_negative);
  a.sliding_window_pattern = to_ints(r.integers_or("sliding_window_pattern", {}));
}

void read_ffn(ObjectReader r, ModelSpec& m) {
  m.ffn.ffn_hidden_size = r.integer_or("ffn_hidden_size", 0);
  // Hugging Face writes hidden_act "silu" for SwiGLU; say so rather than suggest the nearest spelling, "gelu".
  if (const auto* act = r.raw("activation"); act && act->is_string() && *act == "silu")
    r.error("activation", "\"silu\" is the gate of a SwiGLU MLP: write \"swiglu\"");
  else
    m.ffn.activation = activation_from(r.choice_or("activation", "swiglu", {"swiglu", "gelu", "relu2"}));
  m.ffn.linear_bias = r.boolean_or("linear_bias", false);
  m.ffn.activation_clamp = r.number_or("activation_clamp", 0, Bound::non_negative);
  if (m.ffn.activation_clamp > 0 && m.ffn.activation != Activation::swiglu)
    r.error("activation_clamp", "a clamp limit needs activation \"swiglu\"");
}

void read_moe(ObjectReader r, ModelSpec& m) {
  auto& e = m.moe;
  e.num_experts = r.integer("num_experts");
  e.top_k = r.integer("top_k");
  e.expert_ffn_hidden_size = r.integer("expert_ffn_hidden_size");
  e.num_shared_experts = r.integer_or("num_shared_experts", 0, Bound::non_negative);
  e.shared_expert_ffn_hidden_size = r.integer_or("shared_expert_ffn_hidden_size", 0, Bound::non_negative);
  e.first_k_dense_replace = r.integer_or("first_k_dense_replace", 0, Bound::non_negative);
  e.moe_layer_freq = r.integer_or("moe_layer_freq", 1);
  e.layer_pattern = to_ints(r.integers_or("layer_pattern", {}));
  if (!e.layer_pattern.empty() && (r.has("first_k_dense_replace") || r.has("moe_layer_freq")))
    r.error("layer_pattern", "give either layer_pattern or first_k_dense_replace/moe_layer_freq, not both");
  e.router_score = r.choice_or("router_score_function", "softmax", {"softmax", "sigmoid"}) == "sigmoid"
                       ? RouterScore::sigmoid
                       : RouterScore::softmax;
  e.router_bias = r.boolean_or("router_bias", false);
  e.n_group = r.integer_or("n_group", 1);
  e.topk_group = r.integer_or("topk_group", 1);
  e.topk_scaling_factor = r.number_or("topk_scaling_factor", 1.0);
}
}  // namespace

bool is_hf_config(const config::Document& doc) {
  return doc.json.is_object() && !doc.json.contains("name") &&
         (doc.json.contains("architectures") || doc.json.contains("model_type"));
}

ModelSpec read_catalog_model(const config::Document& doc, Diagnostics& diags) {
  ModelSpec m;
  const std::size_t problems_before = diags.size();
  ObjectReader r(doc, diags);
  m.name = r.string("name");
  m.source = r.string("source");
  m.aliases = r.strings_or("aliases", {});
  r.string_or("notes", "");  // free text for readers of the file
  m.hidden_size = r.integer("hidden_size");
  m.num_layers = r.integer("num_layers");
  m.vocab_size = r.integer("vocab_size");
  m.tie_embeddings = r.boolean_or("tie_embeddings", false);
  read_attention(r.object("attention"), m);
  if (auto f = r.object_opt("ffn")) read_ffn(std::move(*f), m);
  if (auto e = r.object_opt("moe")) read_moe(std::move(*e), m);
  m.mtp_num_layers = r.integer_or("mtp_num_layers", 0, Bound::non_negative);
  r.finish();
  // Cross-checks only make sense on values that were read without error.
  if (diags.size() == problems_before)
    for (const auto& p : check_spec(m)) diags.add(doc.file, p.field, p.message);
  return m;
}

ModelSpec read_model_document(const config::Document& doc, Diagnostics& diags) {
  return is_hf_config(doc) ? read_hf_config(doc, diags) : read_catalog_model(doc, diags);
}

ModelSpec load_model_file(const std::filesystem::path& path) {
  Diagnostics diags;
  const config::Document doc = config::load_file(path, diags);
  diags.throw_if_any();
  ModelSpec m = read_model_document(doc, diags);
  diags.throw_if_any();
  return m;
}

}  // namespace moesim::model
