// Per-tensor activation model against the DeepSeek-V3 table of moe-modeling.md §3.3 (act_mem.py).
#include <doctest/doctest.h>

#include "memory/activation_memory.hpp"
#include "model/model_catalog.hpp"
#include "model/model_loader.hpp"

using namespace moesim;

namespace {
model::ModelSpec deepseek() { return model::load_model_file(MOESIM_SOURCE_DIR "/models/deepseek-v3.json"); }

double kib_per_token(const model::ModelSpec& m, bool moe, const layout::Layout& l) {
  double sum = 0;
  for (const auto& t : memory::saved_tensors(m, moe, l)) sum += t.bytes_per_token;
  return sum / 1024.0;
}

layout::Layout with(layout::Precision p, const char* recompute) {
  layout::Layout l;
  l.precision = p;
  l.recompute = layout::parse_recompute(recompute);
  return l;
}
}  // namespace

TEST_CASE("DeepSeek-V3 saved bytes per token per layer match moe-modeling.md 3.3") {
  const auto m = deepseek();
  using P = layout::Precision;
  // Table rows: {MoE layer KiB, dense layer KiB}; the table rounds to whole KiB.
  CHECK(kib_per_token(m, true, with(P::bf16, "none")) == doctest::Approx(447).epsilon(0.002));
  CHECK(kib_per_token(m, false, with(P::bf16, "none")) == doctest::Approx(333).epsilon(0.002));
  CHECK(kib_per_token(m, true, with(P::bf16, "selective: mla_up_proj,layernorm,moe_act")) ==
        doctest::Approx(259).epsilon(0.003));
  CHECK(kib_per_token(m, false, with(P::bf16, "selective: mla_up_proj,layernorm,moe_act")) ==
        doctest::Approx(177).epsilon(0.003));
  CHECK(kib_per_token(m, true, with(P::mxfp8, "none")) == doctest::Approx(383).epsilon(0.003));
  CHECK(kib_per_token(m, false, with(P::mxfp8, "none")) == doctest::Approx(316).epsilon(0.003));
  CHECK(kib_per_token(m, true, with(P::mxfp8, "selective: moe_act,mlp")) == doctest::Approx(366).epsilon(0.003));
  CHECK(kib_per_token(m, false, with(P::mxfp8, "selective: moe_act,mlp")) == doctest::Approx(218).epsilon(0.003));
}

TEST_CASE("per micro-batch GiB of a MoE layer: 1.74 GiB at s=4096, b=1 (BF16, no recompute)") {
  layout::Layout l = with(layout::Precision::bf16, "none");
  l.seq = 4096;
  CHECK(memory::layer_activation_bytes(deepseek(), true, l) / (1024.0 * 1024 * 1024) ==
        doctest::Approx(1.74).epsilon(0.005));
}

TEST_CASE("sequence parallelism and CP divide activations; full recompute keeps only the input") {
  const auto m = deepseek();
  layout::Layout l = with(layout::Precision::bf16, "none");
  l.seq = 4096;
  const double base = memory::layer_activation_bytes(m, true, l);
  l.tp = 2;  // SP on by default with tp > 1
  CHECK(memory::layer_activation_bytes(m, true, l) == doctest::Approx(base / 2));
  l.tp = 1;
  l.cp = 4;
  CHECK(memory::layer_activation_bytes(m, true, l) == doctest::Approx(base / 4));
  l.cp = 1;
  l.recompute = layout::parse_recompute("full");
  CHECK(memory::layer_activation_bytes(m, true, l) == doctest::Approx(2.0 * 7168 * 4096));
}

TEST_CASE("token dropping: the routed copies saved follow the expert capacity") {
  const auto m = deepseek();
  layout::Layout l = with(layout::Precision::bf16, "none");
  l.seq = 4096;
  auto routed_kib = [&](const layout::Layout& x) {
    double sum = 0;
    for (const auto& t : memory::saved_tensors(m, true, x))
      if (t.name.rfind("expert fc", 0) == 0) sum += t.bytes_per_token;
    return sum / 1024.0;
  };
  const double dropless = routed_kib(l);
  CHECK(dropless > 0);
  l.expert_capacity_factor = 2.0;
  CHECK(routed_kib(l) == doctest::Approx(dropless).epsilon(1e-12));  // nothing dropped, nothing padded
  l.pad_expert_input_to_capacity = true;
  CHECK(routed_kib(l) == doctest::Approx(2 * dropless).epsilon(1e-12));  // padded to twice the balanced load
  l.expert_capacity_factor = 0.5;
  l.pad_expert_input_to_capacity = false;
  CHECK(routed_kib(l) == doctest::Approx(0.5 * dropless).epsilon(1e-12));  // half the copies dropped
}

TEST_CASE("NVFP4 linears keep their inputs' column-wise NVFP4 copy: 0.5625 bytes per element, not FP8's 1.03") {
  // DeepSeek-V3 MoE layer, no recompute: the quantized linear inputs per token are q_down/kv_down's (h = 7168),
  // q_up's (1536), kv_up's (512), o_proj's (128 heads x 128 = 16384), the routed experts' fc1 and fc2 inputs
  // (8 copies of 7168 and of 2048) and the shared expert's fc2 input (2048): 101,376 elements. Everything else is
  // saved in BF16 either way.
  const auto m = deepseek();
  const double elements = 7168 + 1536 + 512 + 16384 + 8 * 7168 + 8 * 2048 + 2048;
  const double diff_kib = kib_per_token(m, true, with(layout::Precision::mxfp8, "none")) -
                          kib_per_token(m, true, with(layout::Precision::nvfp4, "none"));
  CHECK(diff_kib == doctest::Approx(elements * (1.03 - 0.5625) / 1024));
}
