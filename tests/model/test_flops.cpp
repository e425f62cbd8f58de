// FLOPs per token against the reference vectors of groundtruth.md §1 / moe-modeling.md §2.2. The exact
// values come from data/reference/scripts/gt_flops.py (re-run to regenerate); the formula column of groundtruth.md
// §1 is checked to the 0.1 % the brief asks for. That column is the formula, not a measurement: the FLOPs/token
// implied by published rows (its last column) exist for 7 of these 12 models and lie within 0.15 % of it.
#include <doctest/doctest.h>

#include <cmath>

#include "model/flops.hpp"
#include "model/parameters.hpp"
#include "model_test_util.hpp"

using namespace moesim::model;

namespace {
double gflops(const std::string& model, std::int64_t seq, FlopsConvention c = FlopsConvention::megatron,
              std::int64_t tp = 1) {
  FlopsOptions o;
  o.seq_length = seq;
  o.convention = c;
  o.tp = tp;
  return training_flops_per_token(catalog_model(model), o).total() / 1e9;
}
}  // namespace

TEST_CASE("Megatron FLOPs per token match gt_flops.py exactly and groundtruth.md's formula column to 0.1%") {
  struct Vector {
    const char* model;
    std::int64_t seq;
    double script;     // gt_flops.py
    double published;  // groundtruth.md §1 table, formula column (rounded as printed there)
  };
  const Vector vectors[] = {
      {"deepseek-v3", 4096, 259.992950784, 259.99},      {"deepseek-v3-no-mtp", 4096, 249.812054016, 249.81},
      {"deepseek-v3-mlperf", 4096, 259.9048704, 259.90}, {"kimi-k2", 4096, 204.477394944, 204.48},
      {"qwen3-235b-a22b", 4096, 148.034813952, 148.03},  {"qwen3-30b-a3b", 4096, 23.006281728, 23.01},
      {"gpt-oss-120b", 4096, 32.631261696, 32.63},       {"gpt-oss-20b", 8192, 24.120995328, 24.12},
      {"mixtral-8x7b", 4096, 79.706456064, 79.71},       {"llama3.1-405b", 8192, 2523.955986432, 2524.0},
      {"llama3.1-8b", 8192, 51.470401536, 51.47},        {"llama3.1-70b", 4096, 433.116413952, 433.1},
  };
  for (const auto& v : vectors) {
    CAPTURE(v.model);
    const double g = gflops(v.model, v.seq);
    CHECK(g == doctest::Approx(v.script).epsilon(1e-9));
    CHECK(g == doctest::Approx(v.published).epsilon(1e-3));
  }
}

TEST_CASE("DeepSeek-V3 breakdown (MTP=1, s=4096): 147.45 / 100.81 (core 31.2) / 0.62 / 11.12 G") {
  const FlopsBreakdown b = training_flops_per_token(catalog_model("deepseek-v3"));
  CHECK(b.mlp / 1e9 == doctest::Approx(147.446562816).epsilon(1e-9));
  CHECK(b.attention / 1e9 == doctest::Approx(100.809547776).epsilon(1e-9));
  CHECK(b.attention_core / 1e9 == doctest::Approx(31.20562176).epsilon(1e-9));
  CHECK(b.mtp / 1e9 == doctest::Approx(0.616691712).epsilon(1e-9));
  CHECK(b.logits / 1e9 == doctest::Approx(11.12014848).epsilon(1e-9));
  CHECK(b.router == 0);
  CHECK(b.other == 0);
  // moe-modeling.md §2.2 per-layer vectors: MoE MLP (= dense MLP) 2.378 G, MLA linear 1.123 G, core 0.503 G.
  CHECK(b.mlp / 62 / 1e9 == doctest::Approx(2.378).epsilon(1e-3));
  CHECK((b.attention - b.attention_core) / 62 / 1e9 == doctest::Approx(1.123).epsilon(1e-3));
  CHECK(b.attention_core / 62 / 1e9 == doctest::Approx(0.503).epsilon(1e-3));
}

TEST_CASE("FLOPs against sequence length (groundtruth.md §1 table)") {
  struct Row {
    std::int64_t seq;
    double dsv3, q235, q30;
  };
  const Row rows[] = {{8192, 291.2, 167.0, 27.8},
                      {16384, 353.6, 204.8, 37.5},
                      {32768, 478.4, 280.5, 56.8},
                      {65536, 728.1, 431.9, 95.5},
                      {131072, 1227.4, 734.7, 172.8}};
  for (const auto& r : rows) {
    CAPTURE(r.seq);
    // The table is rounded to 0.1 G: agree to that rounding.
    CHECK(std::abs(gflops("deepseek-v3", r.seq) - r.dsv3) <= 0.05);
    CHECK(std::abs(gflops("qwen3-235b-a22b", r.seq) - r.q235) <= 0.05);
    CHECK(std::abs(gflops("qwen3-30b-a3b", r.seq) - r.q30) <= 0.05);
  }
}

TEST_CASE("sliding windows: Megatron-Bridge's W_eff, and Megatron-LM main without it") {
  CHECK(attention_context(4096, 128, true) == doctest::Approx(129.0 - 129.0 * 128.0 / 8192.0));
  CHECK(attention_context(4096, 0, true) == 2048.0);
  CHECK(attention_context(4096, 0, false) == 4096.0);
  CHECK(attention_context(100, 128, true) == 50.0);  // a window longer than the sequence is full causal
  FlopsOptions o;
  o.sliding_window_aware = false;
  CHECK(training_flops_per_token(catalog_model("gpt-oss-120b"), o).total() / 1e9 ==
        doctest::Approx(34.33).epsilon(1e-3));
}

TEST_CASE("Megatron pads the vocabulary to 128 * TP") {
  CHECK(padded_vocab_size(129280, 128, 1) == 129280);
  CHECK(padded_vocab_size(129280, 128, 8) == 130048);
  CHECK(padded_vocab_size(32000, 128, 3) == 32256);
  // DeepSeek-V3 at TP8: two head GEMMs (main + MTP) over 768 extra rows.
  const double diff = gflops("deepseek-v3", 4096, FlopsConvention::megatron, 8) - gflops("deepseek-v3", 4096);
  CHECK(diff == doctest::Approx(6.0 * 7168 * 768 * 2 / 1e9).epsilon(1e-9));
}

TEST_CASE("--mtp override counts MTP blocks on top of the main model") {
  FlopsOptions o;
  o.mtp_num_layers = 0;
  CHECK(training_flops_per_token(catalog_model("deepseek-v3"), o).total() / 1e9 ==
        doctest::Approx(249.812054016).epsilon(1e-9));
}

TEST_CASE("TorchTitan and MaxText conventions (groundtruth.md §1 'Other frameworks')") {
  // TorchTitan: 6 * 36.6 B active non-embedding + no causal halving = ~281 G for DeepSeek-V3 at 4k.
  const auto spec = catalog_model("deepseek-v3");
  FlopsOptions tt;
  tt.convention = FlopsConvention::torchtitan;
  const FlopsBreakdown t = training_flops_per_token(spec, tt);
  CHECK(t.total() / 1e9 == doctest::Approx(281.0).epsilon(2e-3));
  CHECK(t.attention_core / 1e9 == doctest::Approx(6.0 * 61 * 128 * 320 * 4096 / 1e9));
  CHECK(t.mtp == 0);
  // Its definition is exactly 6 * N_active_non_embedding + the attention core.
  ModelSpec no_mtp = spec;
  no_mtp.mtp_num_layers = 0;
  const auto p = count_parameters(no_mtp);
  CHECK(t.total() ==
        doctest::Approx(6.0 * static_cast<double>(p.active_non_embedding) + t.attention_core).epsilon(1e-12));
  // MaxText: Megatron without MTP plus the router GEMM: ~250.4 G.
  FlopsOptions mx;
  mx.convention = FlopsConvention::maxtext;
  const FlopsBreakdown m = training_flops_per_token(spec, mx);
  CHECK(m.router == doctest::Approx(6.0 * 7168 * 256 * 58));
  CHECK(m.total() / 1e9 == doctest::Approx(250.4).epsilon(1e-3));
  CHECK(m.total() / 1e9 == doctest::Approx(249.812054016 + m.router / 1e9).epsilon(1e-9));
}

TEST_CASE("properties: FLOPs grow with sequence length; halving makes Megatron's core half TorchTitan's") {
  for (const char* name : {"deepseek-v3", "qwen3-30b-a3b", "gpt-oss-20b", "llama3.1-8b"}) {
    CAPTURE(name);
    const auto spec = catalog_model(name);
    double last = 0;
    for (std::int64_t s : {1024, 2048, 4096, 8192, 32768}) {
      FlopsOptions o;
      o.seq_length = s;
      const double f = training_flops_per_token(spec, o).total();
      CHECK(f > last);
      last = f;
    }
    if (spec.attention.sliding_window == 0) {
      FlopsOptions mg, tt;
      tt.convention = FlopsConvention::torchtitan;
      mg.mtp_num_layers = 0;
      CHECK(2 * training_flops_per_token(spec, mg).attention_core ==
            doctest::Approx(training_flops_per_token(spec, tt).attention_core).epsilon(1e-12));
    }
  }
}

TEST_CASE("convention names") {
  CHECK(parse_flops_convention("maxtext") == FlopsConvention::maxtext);
  CHECK_FALSE(parse_flops_convention("Megatron").has_value());
  CHECK(flops_convention_names() == std::vector<std::string>{"megatron", "torchtitan", "maxtext"});
}
