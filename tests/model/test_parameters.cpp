// Parameter counts against data/reference/scripts/params_check.py (exact integers; that script
// re-implements Megatron's theoretical_memory_usage.py) and the published totals of moe-modeling.md §1.
#include <doctest/doctest.h>

#include "model/parameters.hpp"
#include "model_test_util.hpp"

using namespace moesim::model;

TEST_CASE("totals and active parameters match params_check.py exactly") {
  struct Row {
    const char* model;
    std::int64_t total, main, active;
  };
  // Qwen3 adds its QK-norm weights (2 x 128 per layer), which params_check.py leaves out.
  const Row rows[] = {
      {"deepseek-v3", 682636472320, 671026404352, 37552282624},
      {"deepseek-v3-no-mtp", 671026404352, 671026404352, 37552282624},
      {"qwen3-235b-a22b", 235093610496 + 256 * 94, 235093610496 + 256 * 94, 22190739456 + 256 * 94},
      {"qwen3-30b-a3b", 30532110336 + 256 * 48, 30532110336 + 256 * 48, 3353020416 + 256 * 48},
      {"mixtral-8x7b", 46702792704, 46702792704, 12879925248},
      {"mixtral-8x22b", 140630071296, 140630071296, 39161468928},
      {"llama3.1-8b", 8030261248, 8030261248, 8030261248},
      {"llama3.1-70b", 70553706496, 70553706496, 70553706496},
      {"llama3.1-405b", 405853388800, 405853388800, 405853388800},
  };
  for (const auto& r : rows) {
    CAPTURE(r.model);
    const auto p = count_parameters(catalog_model(r.model));
    CHECK(p.total == r.total);
    CHECK(p.main_total == r.main);
    CHECK(p.active == r.active);
  }
}

TEST_CASE("DeepSeek-V3: 671.0 B main, 682.6 B with MTP, 37.5 B active; per-layer breakdown") {
  const auto spec = catalog_model("deepseek-v3");
  const auto p = count_parameters(spec);
  CHECK(p.main_total / 1e9 == doctest::Approx(671.0).epsilon(1e-3));
  CHECK(p.total / 1e9 == doctest::Approx(682.6).epsilon(1e-3));
  CHECK(p.active / 1e9 == doctest::Approx(37.55).epsilon(1e-3));
  REQUIRE(p.layers.size() == 61);
  CHECK_FALSE(p.layers[2].moe);
  CHECK(p.layers[3].moe);
  CHECK(p.layers[0].attention == 187107328);  // "MLA 187.1M per layer"
  CHECK(p.layers[0].dense_mlp == 3LL * 7168 * 18432);
  CHECK(p.layers[3].per_expert == 3LL * 7168 * 2048);  // 44 M
  CHECK(p.layers[3].routed_experts / 1e9 == doctest::Approx(11.274).epsilon(1e-4));
  CHECK(p.layers[3].shared_experts == 3LL * 7168 * 2048);
  CHECK(p.layers[3].router == 7168LL * 256);
  CHECK(p.embedding == 129280LL * 7168);
  CHECK(p.lm_head == p.embedding);
  REQUIRE(p.mtp.size() == 1);
  CHECK(p.mtp[0].layer.moe);
  CHECK(p.mtp[0].projection == 2LL * 7168 * 7168);
  // The sum of the parts is the total.
  std::int64_t sum = p.embedding + p.lm_head + p.final_norm;
  for (const auto& l : p.layers) sum += l.total();
  for (const auto& m : p.mtp) sum += m.total();
  CHECK(sum == p.total);
}

TEST_CASE("GPT-OSS with biases and sinks gives OpenAI's published totals (116.83 B / 5.13 B, 20.91 B / 3.61 B)") {
  const auto big = count_parameters(catalog_model("gpt-oss-120b"));
  CHECK(big.total == 116829156672);
  CHECK(big.active_non_embedding / 1e9 == doctest::Approx(5.13).epsilon(1e-3));
  const auto small = count_parameters(catalog_model("gpt-oss-20b"));
  CHECK(small.total == 20914757184);
  CHECK(small.active_non_embedding / 1e9 == doctest::Approx(3.61).epsilon(1e-3));
}

TEST_CASE("published totals of moe-modeling.md §1.2, and Kimi-K2") {
  CHECK(count_parameters(catalog_model("mixtral-8x7b")).total / 1e9 == doctest::Approx(46.7).epsilon(1e-3));
  CHECK(count_parameters(catalog_model("qwen3-235b-a22b")).total / 1e9 == doctest::Approx(235.1).epsilon(1e-3));
  // Moonshot's report says 1.04 T total / 32.6 B active. Megatron's counting of the config.json shapes gives
  // 1.026 T / 32.9 B: their rounding or extra tensors are not known, hence the 2 % here.
  const auto kimi = count_parameters(catalog_model("kimi-k2"));
  CHECK(kimi.total / 1e12 == doctest::Approx(1.04).epsilon(2e-2));
  CHECK(kimi.active / 1e9 == doctest::Approx(32.6).epsilon(2e-2));
  CHECK(kimi.layers[0].attention ==
        1536LL * (7168 + 64 * 192 + 1) + 512LL * (7168 + 64 * 256 + 1) + 7168LL * 64 + 64LL * 128 * 7168);
}

TEST_CASE("tied embeddings drop the head; a vocabulary override resizes both") {
  auto spec = catalog_model("llama3.1-8b");
  const auto untied = count_parameters(spec);
  spec.tie_embeddings = true;
  const auto tied = count_parameters(spec);
  CHECK(untied.total - tied.total == 128256LL * 4096);
  CHECK(tied.lm_head == 0);
  const auto padded = count_parameters(catalog_model("llama3.1-8b"), 128512);
  CHECK(padded.total - untied.total == 2LL * 256 * 4096);
}

TEST_CASE("plain (non-gated) MLPs have two matrices") {
  const auto spec = moesim::model::load_model_file(kModelFixtures + "tiny_moe.json");
  const auto p = count_parameters(spec);
  CHECK(p.layers[0].dense_mlp == 2 * 64 * 256);
  CHECK(p.layers[1].per_expert == 2 * 64 * 32);
  CHECK(p.layers[1].active(2) == p.layers[1].attention + p.layers[1].norms + p.layers[1].router + 2 * 2 * 64 * 32);
}
