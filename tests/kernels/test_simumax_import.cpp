// The SimuMax importer (kernels/fit/simumax_import.hpp) on small hand-written system files. Expected times are
// derived by hand from the efficiency definition: time = FLOPs / (efficiency x peak).
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "kernels/fit/features.hpp"
#include "kernels/fit/simumax_import.hpp"

using namespace moesim::kernels::fit;

namespace {

SimumaxFacts facts() {
  SimumaxFacts f;
  f.gpu = {"NVIDIA B200", 148, 0, 0, ""};
  f.cuda = "13.1";
  f.implementation_prefix = "Transformer Engine 2.11.0";
  f.date = "2026-05-06";
  f.source = "test file";
  f.gemm_repeats = 75;
  f.grouped_gemm_repeats = 40;
  f.attention_repeats = 20;
  return f;
}

// A system file with one entry per table, peak 2250 TFLOPS.
std::string system_file(const std::string& gemm_key =
                            "b=1, m=4096, k=8192, n=10240, layout=TN, accumulate=False, "
                            "out_dtype=bf16",
                        const std::string& gemm_eff = "0.5") {
  return R"({"accelerator": {"op": {
    "matmul": {"tflops": 2250.0, "accurate_efficient_factor": {")" +
         gemm_key + R"(": )" + gemm_eff + R"(}},
    "group_matmul": {"tflops": 2250.0, "accurate_efficient_factor": {
      "ng=4, M=128, N=256, K=512, dtype=bf16, out_dtype=bf16, main_grad_dtype=fp32, stage=bwd_grad_act, grad=True, accumulate=False, use_split_accumulator=True, single_output=False": 0.25}},
    "sdp_fwd": {"tflops": 2250.0, "accurate_efficient_factor": {
      "batch=1, seq_len=4096, head_num=64, kv_head_num=8, qk_head_dim=128, v_head_dim=128, qkv_contiguous=True": 0.5}},
    "sdp_bwd": {"tflops": 2250.0, "accurate_efficient_factor": {
      "batch=1, seq_len=4096, head_num=64, kv_head_num=8, qk_head_dim=128, v_head_dim=128, qkv_contiguous=False": 0.5}}
  }},
  "networks": {"high_intra_node": {"op": {"all2all": {"efficient_factor": 0.6}}}}})";
}

std::string first_error(const std::string& text) {
  try {
    import_simumax_system(text, "sys.json", facts());
  } catch (const moesim::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("SimuMax import: one GEMM's efficiency becomes its measured time") {
  const auto im = import_simumax_system(system_file(), "sys.json", facts());
  REQUIRE(im.records.size() == 4);
  CHECK(im.peak_tflops == 2250);
  const auto& g = im.records[0];
  CHECK(g.kernel == "gemm");
  CHECK(g.pass == "fwd");
  CHECK(g.dim("m") == 4096);
  CHECK(g.dim("n") == 10240);
  CHECK(g.dim("k") == 8192);
  // 2 * 4096 * 10240 * 8192 = 687,194,767,360 FLOP at 0.5 x 2,250 TFLOPS = 610.8398 us.
  CHECK(g.time.median_us == doctest::Approx(610.8398).epsilon(1e-6));
  CHECK(g.time.p10_us == g.time.median_us);
  CHECK(g.repeats == 75);
  CHECK(g.source == "test file");
  CHECK(g.entry.find("accelerator.op.matmul[\"b=1, m=4096, k=8192") == 0);
  CHECK(family_key(g) == "gemm/bf16");
  CHECK(im.not_converted.size() == 1);
}

TEST_CASE("SimuMax import: gradient passes, grouped GEMM and attention conventions") {
  const auto im = import_simumax_system(system_file(), "sys.json", facts());
  const auto& gg = im.records[1];
  CHECK(gg.kernel == "grouped_gemm");
  CHECK(gg.pass == "dgrad");
  CHECK(gg.per_expert_kernels);
  CHECK(gg.groups == std::vector<std::int64_t>{128, 128, 128, 128});
  CHECK(gg.dim("n") == 512);  // the data gradient's output is the inputs' gradient: M x K
  CHECK(gg.dim("k") == 256);
  // 2 * 128 * 256 * 512 * 4 = 134,217,728 FLOP at 0.25 x 2,250 TFLOPS = 0.238609 us.
  CHECK(gg.time.median_us == doctest::Approx(0.2386093).epsilon(1e-6));
  CHECK(family_key(gg) == "grouped_gemm/bf16+per_expert+dgrad");

  const auto& fwd = im.records[2];
  CHECK(fwd.kernel == "attention_fwd");
  CHECK(fwd.dim("causal") == 1);
  CHECK(fwd.dim("kv_heads") == 8);
  // Full square: 2 * 4096^2 * 64 * 256 = 549,755,813,888 FLOP at 0.5 x 2,250 TFLOPS = 488.6718 us.
  CHECK(fwd.time.median_us == doctest::Approx(488.6718).epsilon(1e-6));
  const auto& bwd = im.records[3];
  CHECK(bwd.variant == "qkv_split");
  CHECK(bwd.time.median_us == doctest::Approx(488.6718 * 2.5).epsilon(1e-6));

  const auto wgrad = import_simumax_system(
      system_file("b=2, m=10240, k=4096, n=8192, layout=NT, accumulate=True, out_dtype=fp32"), "s", facts());
  CHECK(wgrad.records[0].pass == "wgrad");
  CHECK(wgrad.records[0].dim("k") == 8192);  // the batch multiplies the tokens, the reduction of a weight gradient
  // SimuMax's M (output features) and N (input features) in moesim's order: Gemm{inputs, outputs, tokens}.
  CHECK(wgrad.records[0].dim("m") == 8192);
  CHECK(wgrad.records[0].dim("n") == 10240);
  CHECK(family_key(wgrad.records[0]) == "gemm/bf16+wgrad");
  // The record round-trips through JSONL with its pass.
  moesim::Diagnostics diags;
  const auto back = parse_jsonl(to_jsonl(wgrad.records[0]), "x", diags);
  REQUIRE(back.size() == 1);
  CHECK(back[0].pass == "wgrad");
}

TEST_CASE("SimuMax import: a weight gradient's output dtype picks its family") {
  // The FP32-output call (accumulating into Megatron's FP32 main gradient) is the "+wgrad" family a step prices;
  // the BF16-output one is fitted apart. Forward and data-gradient records carry no output dtype.
  const auto fp32 = import_simumax_system(
      system_file("b=1, m=7168, k=4096, n=8192, layout=NT, accumulate=True, out_dtype=fp32"), "s", facts());
  const auto bf16 = import_simumax_system(
      system_file("b=1, m=7168, k=4096, n=8192, layout=NT, accumulate=True, out_dtype=bf16"), "s", facts());
  CHECK(fp32.records[0].out_dtype == "fp32");
  CHECK(family_key(fp32.records[0]) == "gemm/bf16+wgrad");
  CHECK(bf16.records[0].out_dtype == "bf16");
  CHECK(family_key(bf16.records[0]) == "gemm/bf16+wgrad+out_bf16");
  CHECK(import_simumax_system(system_file(), "s", facts()).records[0].out_dtype.empty());
  // Grouped: the weight gradient's main_grad_dtype is its output; the data gradient has none.
  const std::string grouped = R"({"accelerator": {"op": {"matmul": {"tflops": 2250.0,
    "accurate_efficient_factor": {}}, "group_matmul": {"tflops": 2250.0,
    "accurate_efficient_factor": {
      "ng=4, M=128, N=256, K=512, dtype=bf16, out_dtype=bf16, main_grad_dtype=fp32, stage=bwd_grad_w, grad=True, accumulate=True, use_split_accumulator=True, single_output=False": 0.25,
      "ng=4, M=128, N=256, K=512, dtype=bf16, out_dtype=bf16, main_grad_dtype=bf16, stage=bwd_grad_w, grad=True, accumulate=True, use_split_accumulator=True, single_output=False": 0.3}},
    "sdp_fwd": {"tflops": 2250.0, "accurate_efficient_factor": {}},
    "sdp_bwd": {"tflops": 2250.0, "accurate_efficient_factor": {}}}}})";
  const auto g = import_simumax_system(grouped, "s", facts());
  REQUIRE(g.records.size() == 2);
  // (entries are read in key order: main_grad_dtype=bf16 first)
  CHECK(g.records[0].out_dtype == "bf16");
  CHECK(family_key(g.records[0]) == "grouped_gemm/bf16+per_expert+wgrad+out_bf16");
  CHECK(g.records[1].out_dtype == "fp32");
  CHECK(family_key(g.records[1]) == "grouped_gemm/bf16+per_expert+wgrad");
  // The output dtype round-trips through JSONL; a non-GEMM record may not state one.
  moesim::Diagnostics diags;
  const auto back = parse_jsonl(to_jsonl(bf16.records[0]), "x", diags);
  REQUIRE(back.size() == 1);
  CHECK(back[0].out_dtype == "bf16");
  auto attention = import_simumax_system(system_file(), "s", facts()).records[2];
  attention.out_dtype = "fp32";
  parse_jsonl(to_jsonl(attention), "x", diags);
  CHECK(diags.size() == 1);
}

TEST_CASE("SimuMax import: bad input names the entry's JSON pointer") {
  CHECK(first_error("{").find("not valid JSON") != std::string::npos);
  CHECK(first_error(R"({"accelerator": {}})").find("/accelerator/op/matmul/tflops") != std::string::npos);
  const std::string layout = first_error(system_file("b=1, m=1, k=1, n=1, layout=TT"));
  CHECK(layout.find("/accelerator/op/matmul/accurate_efficient_factor/b=1, m=1, k=1, n=1, layout=TT") !=
        std::string::npos);
  CHECK(layout.find("not one of TN (forward), NN (dgrad), NT (wgrad)") != std::string::npos);
  CHECK(first_error(system_file("b=1, m=1, k=1, n=1, lay_out=TN")).find("did you mean \"layout\"") !=
        std::string::npos);
  CHECK(first_error(system_file("b=1, m=1, k=1, n=1, layout=TN", "-0.2")).find("expected a positive efficiency") !=
        std::string::npos);
  CHECK(first_error(system_file("b=1, m=x, k=1, n=1, layout=TN")).find("m=x is not a positive integer") !=
        std::string::npos);
}
