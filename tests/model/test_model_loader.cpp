// Bad-input fixtures of the catalog format: every problem of a file in one error, each with file and
// JSON pointer.
#include <doctest/doctest.h>

#include "model_test_util.hpp"

using moesim::model::load_model_file;

namespace {
std::string load_error(const std::string& fixture) {
  return config_error([&] { load_model_file(kModelFixtures + fixture); });
}
std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')) + 1; }
}  // namespace

TEST_CASE("a small valid file: mha defaults, explicit MoE pattern, gelu") {
  const auto m = load_model_file(kModelFixtures + "tiny_moe.json");
  CHECK(m.name == "tiny-moe");
  CHECK(m.attention.num_query_groups == 4);
  CHECK(m.attention.head_dim == 16);  // hidden / heads when not given
  CHECK(m.ffn.activation == moesim::model::Activation::gelu);
  CHECK(m.num_moe_layers() == 2);
  const auto wide = load_model_file(kModelFixtures + "extends_child.json");
  CHECK(wide.name == "tiny-moe-wide");
  CHECK(wide.hidden_size == 128);
  CHECK(wide.attention.head_dim == 32);
  CHECK(wide.moe.num_experts == 8);
}

TEST_CASE("malformed JSON names the file, line and column") {
  const std::string e = load_error("malformed.json");
  CAPTURE(e);
  CHECK(e == kModelFixtures +
                 "malformed.json: malformed JSON at line 5, column 14: syntax error while parsing object - "
                 "unexpected string literal; expected '}'");
  CHECK(lines(e) == 1);
}

TEST_CASE("unknown keys (with did-you-mean) and the missing key they stand for, all at once") {
  const std::string f = kModelFixtures + "unknown_key.json";
  const std::string e = load_error("unknown_key.json");
  CHECK(e == f + ":/hidden_size: missing required key \"hidden_size\"\n" + f +
                 ":/moe/router_score: unknown key \"router_score\" (did you mean \"router_score_function\"?)\n" + f +
                 ":/hiden_size: unknown key \"hiden_size\" (did you mean \"hidden_size\"?)");
}

TEST_CASE("wrong types") {
  const std::string f = kModelFixtures + "wrong_type.json";
  const std::string e = load_error("wrong_type.json");
  CHECK(e == f + ":/num_layers: expected a positive integer, got string \"32\"\n" + f +
                 ":/vocab_size: expected a positive integer, got number 32000.5\n" + f +
                 ":/tie_embeddings: expected true or false, got string \"no\"\n" + f +
                 ":/ffn/activation: \"silu\" is the gate of a SwiGLU MLP: write \"swiglu\"");
}

TEST_CASE("zero and negative sizes") {
  const std::string f = kModelFixtures + "nonpositive.json";
  const std::string e = load_error("nonpositive.json");
  CHECK(e == f + ":/hidden_size: expected a positive integer, got 0\n" + f +
                 ":/vocab_size: expected a positive integer, got -5\n" + f +
                 ":/moe/top_k: expected a positive integer, got 0");
}

TEST_CASE("cross-checks: top_k > num_experts, heads not divisible by groups, dense layers without FFN") {
  const std::string f = kModelFixtures + "topk_gt_experts.json";
  const std::string e = load_error("topk_gt_experts.json");
  CHECK(e == f + ":/attention/num_query_groups: num_attention_heads (32) is not divisible by num_query_groups (5)\n" +
                 f + ":/moe/top_k: top_k (16) exceeds num_experts (8)\n" + f +
                 ":/ffn/ffn_hidden_size: dense layers (1) need a positive ffn_hidden_size");
}

TEST_CASE("in-memory text and MLA keys in a GQA model") {
  const std::string e = config_error([] {
    model_from_text(R"({"name": "x", "source": "t", "hidden_size": 64, "num_layers": 2, "vocab_size": 10,
      "attention": {"kind": "gqa", "num_attention_heads": 4, "num_query_groups": 2, "kv_lora_rank": 512},
      "ffn": {"ffn_hidden_size": 128}})",
                    "inline.json");
  });
  CHECK(e.find("inline.json:/attention/kv_lora_rank: unknown key \"kv_lora_rank\"") == 0);
}

TEST_CASE("clamped SwiGLU and YaRN RoPE: read from the catalog; a clamp needs a SwiGLU") {
  const auto g = load_model_file(std::string(MOESIM_SOURCE_DIR) + "/models/gpt-oss-120b.json");
  CHECK(g.ffn.activation_clamp == 7.0);
  CHECK(g.attention.yarn_rope);
  const auto d = load_model_file(std::string(MOESIM_SOURCE_DIR) + "/models/deepseek-v3.json");
  CHECK(d.ffn.activation_clamp == 0);
  CHECK_FALSE(d.attention.yarn_rope);
  const std::string e = config_error([] {
    model_from_text(R"({"name": "x", "hidden_size": 64, "num_layers": 2, "vocab_size": 100,
        "attention": {"kind": "mha", "num_attention_heads": 4},
        "ffn": {"ffn_hidden_size": 128, "activation": "gelu", "activation_clamp": 7.0}})",
                    "x.json");
  });
  CHECK(e.find("x.json:/ffn/activation_clamp: a clamp limit needs activation \"swiglu\"") != std::string::npos);
}
