// FittedKernelCostModel against the SYNTHETIC fit tests/fixtures/kernels/fits/h200-sxm.json (hand-written
// coefficients, no measurement): covered kernels get exactly the fit's prediction, uncovered ones exactly the
// roofline's, and nothing comes out below the roofline bound.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "kernels/fit/features.hpp"
#include "kernels/fit/fit_file.hpp"
#include "kernels/fitted_model.hpp"
#include "kernels/roofline_model.hpp"

using namespace moesim;
using namespace moesim::kernels;

namespace {

const std::string fixture = std::string(MOESIM_FIXTURES_DIR) + "/kernels/fits/h200-sxm.json";

// The catalog's h200-sxm (topologies/parts/gpu/h200-sxm.json, hardware.md §1).
DeviceRates h200() { return {"h200-sxm", Arch::hopper, 132, 4.8e12, 989e12, 1979e12, 0}; }
DeviceRates gb200() { return {"gb200", Arch::blackwell, 152, 8.0e12, 2500e12, 5000e12, 10000e12}; }

FittedKernelCostModel synthetic_model() { return FittedKernelCostModel(fit::read_fit_file(fixture), "synthetic-h200"); }

// What the fit file itself predicts for a record (the fitter's own path), in seconds.
double fit_file_seconds(const fit::FitFile& f, const fit::CalibrationRecord& r) {
  return f.find(fit::family_key(r))->predict_us(fit::feature_vector(r, f.peaks)) / 1e6;
}

fit::CalibrationRecord record(const std::string& kernel, const std::string& dtype) {
  fit::CalibrationRecord r;
  r.kernel = kernel;
  r.dtype = dtype;
  r.gpu.name = "NVIDIA H200";
  r.gpu.sm_count = 132;
  return r;
}

}  // namespace

TEST_CASE("a dense BF16 GEMM gets the fit's prediction, checked against the features worked by hand") {
  const auto m = synthetic_model();
  const Gemm g{4096, 7168, 2048, DType::bf16};
  const auto t = m.explain(g, h200());
  CHECK(t.from_fit);
  CHECK(t.family == "gemm/bf16");
  CHECK_FALSE(t.clamped);
  // Features (us): flops at 989 TFLOP/s; bytes (A, B in BF16, C out BF16) at 4.8 TB/s; wave waste: 32 x 56 = 1792
  // tiles of 128x128 over 132 SMs = 14 waves = 1848 slots, 56 idle, each 2*128*128*2048 FLOP.
  const double f_flops = 2.0 * 4096 * 7168 * 2048 / 989e12 * 1e6;
  const double f_bytes = ((4096.0 * 2048 + 2048.0 * 7168) * 2 + 4096.0 * 7168 * 2) / 4.8e12 * 1e6;
  const double f_waste = 56 * 2.0 * 128 * 128 * 2048 / 989e12 * 1e6;
  const double expected_us = 5.0 + 1.25 * f_flops + 0.5 * f_bytes + 1.0 * f_waste;
  CHECK(t.seconds == doctest::Approx(expected_us / 1e6).epsilon(1e-12));
  auto r = record("gemm", "bf16");
  r.shape = {{"m", 4096}, {"n", 7168}, {"k", 2048}};
  CHECK(t.seconds == fit_file_seconds(m.fit(), r));  // exactly the fitter's own evaluation
  CHECK(m.seconds(g, h200()) == t.seconds);
}

TEST_CASE("grouped GEMM, attention and memory-bound kernels reproduce the fit's predict_us exactly") {
  const auto m = synthetic_model();
  SUBCASE("grouped GEMM with an empty expert") {
    const GroupedGemm g{{100, 0, 300, 128}, 2048, 7168, DType::bf16};
    auto r = record("grouped_gemm", "bf16");
    r.shape = {{"n", 2048}, {"k", 7168}};
    r.groups = {100, 0, 300, 128};
    const auto t = m.explain(g, h200());
    CHECK(t.from_fit);
    CHECK(t.family == "grouped_gemm/bf16");
    CHECK(t.seconds == fit_file_seconds(m.fit(), r));
  }
  SUBCASE("causal attention forward without a window") {
    AttentionFwd a;
    a.batch = 2, a.heads = 16, a.kv_heads = 16, a.seq_q = 4096, a.seq_kv = 4096, a.d_qk = 192, a.d_v = 128;
    auto r = record("attention_fwd", "bf16");
    r.shape = {{"batch", 2},         {"heads", 16},       {"seq_q", 4096}, {"seq_kv", 4096},
               {"head_dim_qk", 192}, {"head_dim_v", 128}, {"causal", 1}};
    const auto t = m.explain(a, h200());
    CHECK(t.from_fit);
    CHECK(t.seconds == fit_file_seconds(m.fit(), r));
  }
  SUBCASE("RMSNorms under any of their names: constant + c x bytes / HBM") {
    for (const char* name : {"rmsnorm", "q_norm", "kv_norm", "final_norm", "mtp_norms"}) {
      CAPTURE(name);
      const MemoryBound k{1e8, name};
      const auto t = m.explain(k, h200());
      CHECK(t.from_fit);
      CHECK(t.family == "rmsnorm/bf16");
      CHECK(t.seconds == doctest::Approx((3.0 + 1.2 * 1e8 / 4.8e12 * 1e6) / 1e6).epsilon(1e-12));
    }
  }
}

TEST_CASE("kernels the fit does not cover fall back to the roofline exactly") {
  const auto m = synthetic_model();
  const RooflineKernelCostModel roofline;
  AttentionBwd bwd;
  bwd.batch = 1, bwd.heads = 16, bwd.seq_q = 4096, bwd.seq_kv = 4096, bwd.d_qk = 128, bwd.d_v = 128;
  AttentionFwd windowed;
  static_cast<AttentionShape&>(windowed) = bwd;
  windowed.window = 128;  // fitted attention has no window feature
  AttentionFwd ring_steps;
  static_cast<AttentionShape&>(ring_steps) = bwd;
  ring_steps.keys_per_call = 1024;  // nor a feature for work split into key blocks (CP ring steps)
  const Kernel uncovered[] = {
      Gemm{4096, 7168, 2048, DType::fp8},        // gemm/fp8_tensor not in the fit
      Gemm{4096, 7168, 2048, DType::fp8_block},  // gemm/fp8_block128 not in the fit
      GroupedGemm{{512, 512}, 2048, 7168, DType::fp8_block},
      bwd,
      windowed,
      ring_steps,
      MemoryBound{1e8, "rmsnorm_bwd"},
      MemoryBound{1e8, "rope"},
      MemoryBound{1e8, "permute"},  // a mapped name whose family this fit lacks
      MemoryBound{1e8, "adam"},
  };
  for (const auto& k : uncovered) {
    CAPTURE(describe(k));
    const auto t = m.explain(k, h200());
    CHECK_FALSE(t.from_fit);
    CHECK(t.seconds == roofline.seconds(k, h200()));
  }
}

TEST_CASE("a fit prediction below the roofline bound is clamped to the bound") {
  const auto m = synthetic_model();
  // The fixture's swiglu/bf16 fit claims twice the peak HBM bandwidth (bytes coefficient 0.5, constant 0).
  const MemoryBound k{1e9, "swiglu"};
  const auto t = m.explain(k, h200());
  CHECK(t.from_fit);
  CHECK(t.clamped);
  CHECK(t.fit_seconds == doctest::Approx(0.5 * 1e9 / 4.8e12).epsilon(1e-12));
  CHECK(t.bound_seconds == doctest::Approx(1e9 / 4.8e12).epsilon(1e-12));
  CHECK(t.seconds == t.bound_seconds);
  CHECK(m.explain(MemoryBound{1e9, "shared_swiglu"}, h200()).clamped);

  // Property over a GEMM sweep with a fit that is 10x too fast: never below max(FLOP/peak, bytes/HBM), and equal
  // to the fit wherever the fit is physical.
  auto f = fit::read_fit_file(fixture);
  for (auto& c : f.families[0].coefficients) c.value *= 0.1;
  const FittedKernelCostModel fast(f, "fast");
  for (std::int64_t mm : {1, 64, 1000, 8192})
    for (std::int64_t nn : {128, 7168})
      for (std::int64_t kk : {256, 16384}) {
        const Gemm g{mm, nn, kk, DType::bf16};
        CAPTURE(describe(g));
        const auto e = fast.explain(g, h200());
        const double bound = std::max(flops(g) / 989e12, hbm_bytes(g) / 4.8e12);
        CHECK(e.bound_seconds == doctest::Approx(bound).epsilon(1e-12));
        CHECK(e.seconds >= bound);
        CHECK(e.seconds == (e.clamped ? e.bound_seconds : e.fit_seconds));
        CHECK(e.clamped == (e.fit_seconds < bound));
      }
}

TEST_CASE("the model names the fit and its covered kernels, and refuses another GPU") {
  const auto m = synthetic_model();
  CHECK(m.name() == "fit synthetic-h200 (gemm, grouped_gemm, attention_fwd, rmsnorm, swiglu) + roofline fallback");
  try {
    m.seconds(Gemm{128, 128, 128, DType::bf16}, gb200());
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.code() == ExitCode::bad_config);
    CHECK(std::string(e.what()) ==
          "synthetic-h200:/gpu: this fit is for NVIDIA H200 (peaks row H200), not for GPU \"gb200\" (peaks row GB200)");
  }
  fit::FitFile empty = m.fit();
  empty.families.clear();
  CHECK(FittedKernelCostModel(empty, "x").name() == "fit x (no fitted families) + roofline fallback");
}

TEST_CASE("a family whose coefficients are not the model's features is refused at construction") {
  auto f = fit::read_fit_file(fixture);
  f.families[0].coefficients.pop_back();  // gemm without wave_waste_at_peak
  f.families[3].model = "gemm";           // rmsnorm claimed to be a GEMM
  try {
    FittedKernelCostModel m(f, "bad");
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    REQUIRE(e.diagnostics().size() == 2);
    CHECK(e.diagnostics()[0].to_string() ==
          "bad:/families/0/coefficients: gemm/bf16 has coefficients [constant, flops_at_peak, bytes_at_hbm_bw], the "
          "gemm model has features [constant, flops_at_peak, bytes_at_hbm_bw, wave_waste_at_peak]");
    CHECK(e.diagnostics()[1].to_string() ==
          "bad:/families/3: model \"gemm\" of rmsnorm/bf16, expected \"memory_bound\"");
  }
}

TEST_CASE("kernel variants map onto fit families by dtype and architecture") {
  CHECK(fit_family_for(Gemm{1, 1, 1, DType::bf16}, Arch::hopper) == "gemm/bf16");
  CHECK(fit_family_for(Gemm{1, 1, 1, DType::fp8}, Arch::blackwell) == "gemm/fp8_tensor");
  CHECK(fit_family_for(Gemm{1, 1, 1, DType::fp8_block}, Arch::hopper) == "gemm/fp8_block128");
  CHECK(fit_family_for(Gemm{1, 1, 1, DType::fp8_block}, Arch::blackwell_ultra) == "gemm/mxfp8");
  CHECK_FALSE(fit_family_for(Gemm{1, 1, 1, DType::fp4}, Arch::blackwell).has_value());
  CHECK(fit_family_for(GroupedGemm{{1}, 1, 1, DType::fp8_block}, Arch::blackwell) == "grouped_gemm/mxfp8");
  // TE's per-expert loop is a family of its own, never the one-kernel family.
  CHECK(fit_family_for(GroupedGemm{{1}, 1, 1, DType::fp8_block, true}, Arch::blackwell) ==
        "grouped_gemm/mxfp8+per_expert");
  // A gradient pass looks for its own family first, then the plain one; a forward only the plain one.
  CHECK(fit_family_candidates(Gemm{1, 1, 1, DType::bf16, GemmPass::wgrad}, Arch::blackwell) ==
        std::vector<std::string>{"gemm/bf16+wgrad", "gemm/bf16"});
  CHECK(fit_family_candidates(GroupedGemm{{1}, 1, 1, DType::bf16, true, GemmPass::dgrad}, Arch::blackwell) ==
        std::vector<std::string>{"grouped_gemm/bf16+per_expert+dgrad", "grouped_gemm/bf16+per_expert"});
  CHECK(fit_family_candidates(Gemm{1, 1, 1, DType::bf16}, Arch::blackwell) == std::vector<std::string>{"gemm/bf16"});
  CHECK(fit_family_for(AttentionBwd{}, Arch::hopper) == "attention_bwd/bf16");
  CHECK(fit_family_for(MemoryBound{1, "quantize"}, Arch::hopper) == "quantize_fp8/fp8_e4m3");
  // The builder's router_topk is the whole fused router (tens of kernels, other bytes): never the one-kernel fit.
  CHECK_FALSE(fit_family_for(MemoryBound{1, "router_topk"}, Arch::hopper).has_value());
  CHECK(fit_family_for(MemoryBound{1, "unpermute"}, Arch::hopper) == "unpermute/bf16");
  CHECK_FALSE(fit_family_for(MemoryBound{1, "unpermute_bwd"}, Arch::hopper).has_value());
}

TEST_CASE("catalog GPU names map onto the fitter's peaks rows") {
  CHECK(peaks_key_for_gpu("h200-sxm") == "H200");
  CHECK(peaks_key_for_gpu("h100-sxm") == "H100");
  CHECK(peaks_key_for_gpu("h800-sxm") == "H800");
  CHECK(peaks_key_for_gpu("b200") == "B200");
  CHECK(peaks_key_for_gpu("gb200") == "GB200");
  CHECK(peaks_key_for_gpu("b300").empty());
  CHECK(peaks_key_for_gpu("gb300").empty());
}
