#include <doctest/doctest.h>

#include "model/model_spec.hpp"
#include "model_test_util.hpp"

using namespace moesim::model;

TEST_CASE("MoE layer patterns: first_k_dense_replace, moe_layer_freq, explicit pattern") {
  ModelSpec s;
  s.num_layers = 8;
  CHECK_FALSE(s.is_moe_layer(0));  // dense model
  s.moe.num_experts = 4;
  s.moe.first_k_dense_replace = 3;
  CHECK(s.num_moe_layers() == 5);
  CHECK_FALSE(s.is_moe_layer(2));
  CHECK(s.is_moe_layer(3));
  CHECK_FALSE(s.is_moe_layer(8));  // out of range
  s.moe.moe_layer_freq = 2;        // Hugging Face DeepseekV3: i >= k and i % freq == 0
  CHECK(s.num_moe_layers() == 2);  // layers 4 and 6
  CHECK(s.is_moe_layer(4));
  CHECK_FALSE(s.is_moe_layer(5));
  s.moe.layer_pattern = {1, 0, 1, 0, 1, 0, 1, 1};
  CHECK(s.num_moe_layers() == 5);
  CHECK(s.is_moe_layer(0));
  CHECK(s.mtp_layer_is_moe());
}

TEST_CASE("sliding windows: GPT-OSS alternates 128-token windows (even layers) with full attention") {
  const auto spec = catalog_model("gpt-oss-120b");
  CHECK(spec.window_of_layer(0) == 128);
  CHECK(spec.window_of_layer(1) == 0);
  CHECK(spec.window_of_layer(34) == 128);
  CHECK(spec.num_sliding_window_layers() == 18);
  CHECK(catalog_model("deepseek-v3").num_sliding_window_layers() == 0);
}

TEST_CASE("catalog specs are what the references say") {
  const auto d = catalog_model("deepseek-v3");
  CHECK(d.attention.kind == AttentionKind::mla);
  CHECK(d.attention.qk_head_dim() == 192);
  CHECK(d.num_dense_layers() == 3);
  CHECK(d.num_moe_layers() == 58);
  CHECK(d.moe.router_score == RouterScore::sigmoid);
  CHECK(d.moe.n_group == 8);
  CHECK(d.moe.topk_group == 4);
  CHECK(d.mtp_num_layers == 1);
  const auto no_mtp = catalog_model("deepseek-v3-no-mtp");  // "extends" deepseek-v3.json
  CHECK(no_mtp.mtp_num_layers == 0);
  CHECK(no_mtp.hidden_size == 7168);
  CHECK(no_mtp.name == "deepseek-v3-no-mtp");
  CHECK(catalog_model("kimi-k2").num_dense_layers() == 1);
  CHECK(catalog_model("llama3.1-405b").is_moe() == false);
}

TEST_CASE("check_spec cross-checks") {
  ModelSpec s;
  s.num_layers = 4;
  s.attention.num_attention_heads = 32;
  s.attention.num_query_groups = 5;
  s.moe.num_experts = 8;
  s.moe.top_k = 9;
  s.moe.n_group = 3;
  s.moe.topk_group = 4;
  s.moe.num_shared_experts = 1;
  s.moe.first_k_dense_replace = 4;
  const auto problems = check_spec(s);
  std::vector<std::string> fields;
  for (const auto& p : problems) fields.push_back(p.field);
  CHECK(fields == std::vector<std::string>{"/attention/num_query_groups", "/moe/top_k",
                                           "/moe/shared_expert_ffn_hidden_size", "/moe/n_group", "/moe/topk_group",
                                           "/moe/first_k_dense_replace", "/ffn/ffn_hidden_size"});
  CHECK(problems[1].message == "top_k (9) exceeds num_experts (8)");
  for (const auto& name : ModelCatalog(kDataDir).names()) {
    CAPTURE(name);
    CHECK(check_spec(catalog_model(name)).empty());
  }
}
