// Hugging Face config.json import: the fixtures carry the real dimensions of each model's config.json, so
// the imported spec must count exactly like the catalog file.
#include <doctest/doctest.h>

#include "model/flops.hpp"
#include "model/hf_import.hpp"
#include "model/parameters.hpp"
#include "model_test_util.hpp"

using namespace moesim::model;

namespace {
std::string hf(const std::string& model) { return kHfFixtures + model + "/config.json"; }
}  // namespace

TEST_CASE("imported configs count exactly like the catalog files (parameters and Megatron FLOPs)") {
  for (const char* name :
       {"deepseek-v3", "kimi-k2", "qwen3-235b-a22b", "mixtral-8x7b", "gpt-oss-120b", "llama3.1-8b"}) {
    CAPTURE(name);
    const ModelSpec imported = load_model_file(hf(name));  // format detected from "architectures"
    const ModelSpec catalog = catalog_model(name);
    CHECK(imported.name == name);  // the folder holding config.json
    const auto pi = count_parameters(imported), pc = count_parameters(catalog);
    CHECK(pi.total == pc.total);
    CHECK(pi.main_total == pc.main_total);
    CHECK(pi.active == pc.active);
    CHECK(training_flops_per_token(imported).total() == training_flops_per_token(catalog).total());
    CHECK(imported.num_moe_layers() == catalog.num_moe_layers());
    CHECK(imported.mtp_num_layers == catalog.mtp_num_layers);
    CHECK(imported.num_sliding_window_layers() == catalog.num_sliding_window_layers());
  }
}

TEST_CASE("DeepSeek-V3 import keeps routing details") {
  const ModelSpec m = load_model_file(hf("deepseek-v3"));
  CHECK(m.moe.router_score == RouterScore::sigmoid);
  CHECK(m.moe.n_group == 8);
  CHECK(m.moe.topk_group == 4);
  CHECK(m.moe.topk_scaling_factor == 2.5);
  CHECK(m.moe.first_k_dense_replace == 3);
  CHECK(m.attention.q_lora_rank == 1536);
  CHECK(m.source.find("Hugging Face config.json") == 0);
}

TEST_CASE("Qwen3-MoE layer rules: mlp_only_layers and decoder_sparse_step") {
  const ModelSpec m = model_from_text(R"({"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 256,
      "num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
      "moe_intermediate_size": 64, "num_experts": 8, "num_experts_per_tok": 2, "vocab_size": 100,
      "decoder_sparse_step": 2, "mlp_only_layers": [3]})",
                                      "qwen.json");
  CHECK(m.moe.layer_pattern == std::vector<int>{0, 1, 0, 0, 0, 1});
  CHECK(m.attention.qk_norm);
  CHECK(m.name == "qwen");
}

TEST_CASE("GPT-OSS without layer_types alternates windows; null q_lora_rank means no q compression") {
  const ModelSpec g = model_from_text(R"({"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 4,
      "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880,
      "num_local_experts": 32, "num_experts_per_tok": 4, "vocab_size": 201088, "sliding_window": 128,
      "swiglu_limit": 7.0, "rope_scaling": {"rope_type": "yarn", "factor": 32.0}})",
                                      "g.json");
  CHECK(g.ffn.activation_clamp == 7.0);
  CHECK(g.attention.yarn_rope);
  try {
    model_from_text(R"({"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 4,
        "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "intermediate_size": 2880,
        "num_local_experts": 32, "num_experts_per_tok": 4, "vocab_size": 201088, "rope_scaling": {"rope_type": 5}})",
                    "bad.json");
    FAIL("expected ConfigError");
  } catch (const moesim::ConfigError& e) {
    CHECK(std::string(e.what()).find("bad.json:/rope_scaling: rope_type must be a string, got 5") != std::string::npos);
  }
  CHECK(g.window_of_layer(0) == 128);
  CHECK(g.window_of_layer(1) == 0);
  CHECK(g.attention.attention_sinks);
  const ModelSpec lite = model_from_text(R"({"architectures": ["DeepseekV2ForCausalLM"], "hidden_size": 2048,
      "num_hidden_layers": 27, "num_attention_heads": 16, "q_lora_rank": null, "kv_lora_rank": 512,
      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "intermediate_size": 10944,
      "moe_intermediate_size": 1408, "n_routed_experts": 64, "n_shared_experts": 2, "num_experts_per_tok": 6,
      "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1, "vocab_size": 102400})",
                                         "lite.json");
  CHECK(lite.attention.q_lora_rank == 0);
  CHECK(lite.moe.shared_expert_ffn_hidden_size == 1408);
  CHECK(lite.moe.router_score == RouterScore::softmax);  // V2's default scoring
  // DeepSeek-V2-Lite: 15.7 B total, 2.4 B active (its model card; we get 2.45 B without the input embedding).
  const auto p = count_parameters(lite);
  CHECK(p.total / 1e9 == doctest::Approx(15.7).epsilon(1e-2));
  CHECK(p.active_non_embedding / 1e9 == doctest::Approx(2.4).epsilon(3e-2));
}

TEST_CASE("bad HF configs: missing required keys, unsupported architectures, inconsistent values") {
  const std::string missing = kHfFixtures + "missing_key.json";
  CHECK(config_error([&] { load_model_file(missing); }) ==
        missing + ":/num_local_experts: missing required key \"num_local_experts\"");
  const std::string arch = kHfFixtures + "unsupported_arch.json";
  CHECK(
      config_error([&] { load_model_file(arch); })
          .find(arch +
                ":/architectures: unsupported architecture \"MambaForCausalLM\"; supported: DeepseekV3ForCausalLM, ") ==
      0);
  const std::string topk = kHfFixtures + "topk_too_large.json";
  CHECK(config_error([&] { load_model_file(topk); }) ==
        topk + ":/num_experts_per_tok: top_k (16) exceeds num_experts (8)");
  CHECK(config_error([] {
          model_from_text(R"({"model_type": "bert"})", "b.json");
        }).find("b.json:/model_type: unsupported model_type \"bert\"; supported: ") == 0);
}
