// Transformer Engine's cached dummy weight gradients (memory/te_dummy_wgrad.hpp): one BF16 tensor per distinct
// weight shape of a rank's TE linears, hand-derived here from the model shapes.
#include <doctest/doctest.h>

#include "layout/pipeline_layout.hpp"
#include "memory/memory_model.hpp"
#include "memory/model_facts_from_spec.hpp"
#include "memory/te_dummy_wgrad.hpp"
#include "model/model_loader.hpp"

using namespace moesim;

namespace {
model::ModelSpec load(const char* name) {
  return model::load_model_file(std::string(MOESIM_SOURCE_DIR "/models/") + name + ".json");
}
layout::Layout llama_layout(int tp, int pp) {
  layout::Layout l;
  l.gpus = 8;
  l.tp = tp;
  l.pp = pp;
  l.gbs = 8 / (tp * pp) * 4;
  l.seq = 4096;
  l.te_version = {2, 11};
  return l;
}
// Llama 3 70B (h 8192, 64 heads of 128, 8 key/value groups, SwiGLU 28672) per layer at TP1, in elements:
// qkv 10240 x 8192, proj 8192 x 8192, fc1 57344 x 8192, fc2 8192 x 28672.
constexpr double kLlamaLayer = 10240.0 * 8192 + 8192.0 * 8192 + 57344.0 * 8192 + 8192.0 * 28672;
constexpr double kLlamaHead = 128256.0 * 8192;  // the untied output layer (vocab 128256 is a multiple of 128)
}  // namespace

TEST_CASE("TE dummy wgrads: one BF16 buffer per distinct weight shape, sharded by TP, the output layer on its rank") {
  const auto m = load("llama3-70b-simumax-l12");
  CHECK(kLlamaLayer == doctest::Approx(855638016.0));
  const memory::RankModules layers{true, false, false, false}, with_head{true, false, false, true};
  CHECK(memory::te_dummy_wgrad_bytes(m, llama_layout(1, 1), layers) == doctest::Approx(2 * kLlamaLayer));
  CHECK(memory::te_dummy_wgrad_bytes(m, llama_layout(1, 1), with_head) ==
        doctest::Approx(2 * (kLlamaLayer + kLlamaHead)));
  CHECK(memory::te_dummy_wgrad_bytes(m, llama_layout(8, 1), with_head) ==
        doctest::Approx(2 * (kLlamaLayer / 8 + 16128.0 * 8192)));  // vocab padded to 128 x TP: 129024 / 8
  // Twelve identical layers share four buffers: the bytes do not grow with the layer count. PP2: the first rank
  // has no output layer, the last has it.
  const auto l = llama_layout(1, 2);
  const auto est = memory::estimate_memory(m, l, layout::assign_stages(l, memory::model_facts(m)), 1e15);
  CHECK(est.ranks.at(0).te_dummy_wgrads == doctest::Approx(2 * kLlamaLayer));
  CHECK(est.ranks.at(1).te_dummy_wgrads == doctest::Approx(2 * (kLlamaLayer + kLlamaHead)));
  CHECK(est.ranks.at(1).allocated() ==
        doctest::Approx(est.ranks.at(1).weights + est.ranks.at(1).gradients + est.ranks.at(1).optimizer +
                        est.ranks.at(1).activations + est.ranks.at(1).te_dummy_wgrads));
}

TEST_CASE("TE dummy wgrads: none before TE 2.3 or under FSDP; routed experts' GroupedLinear from TE 2.10") {
  const auto llama = load("llama3-70b-simumax-l12");
  const memory::RankModules layers{true, false, false, false};
  auto l = llama_layout(1, 1);
  l.te_version = {2, 2};
  CHECK(memory::te_dummy_wgrad_bytes(llama, l, layers) == 0);
  l.te_version = {2, 11};
  l.fsdp = true;
  CHECK(memory::te_dummy_wgrad_bytes(llama, l, layers) == 0);

  // DeepSeek-V2 (h 5120): the routed experts' shapes (fc1 3072 x 5120, fc2 5120 x 1536) differ from the shared
  // expert's (one of 3072: fc1 6144 x 5120, fc2 5120 x 3072), so TE 2.10's GroupedLinear adds two more buffers.
  const auto v2 = load("deepseek-v2-simumax-l4");
  layout::Layout e;
  e.gpus = 8;
  e.ep = 8;
  e.gbs = 32;
  e.seq = 4096;
  const memory::RankModules moe{false, true, false, false};
  e.te_version = {2, 9};
  const double before = memory::te_dummy_wgrad_bytes(v2, e, moe);
  e.te_version = {2, 10};
  CHECK(memory::te_dummy_wgrad_bytes(v2, e, moe) - before == doctest::Approx(2 * (3072.0 * 5120 + 5120.0 * 1536)));
  // DeepSeek-V3: one shared expert of 2048, the routed experts' width: the same two shapes, the same two buffers.
  const auto v3 = load("deepseek-v3");
  e.te_version = {2, 9};
  const double v3_before = memory::te_dummy_wgrad_bytes(v3, e, moe);
  e.te_version = {2, 11};
  CHECK(memory::te_dummy_wgrad_bytes(v3, e, moe) == doctest::Approx(v3_before));
}
