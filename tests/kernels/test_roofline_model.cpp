#include <doctest/doctest.h>

#include <cmath>

#include "core/error.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "kernels/roofline_model.hpp"

using namespace moesim;
using namespace moesim::kernels;

namespace {
// Datasheet figures, hardware.md §1.
DeviceRates h100() { return {"H100_SXM", Arch::hopper, 132, 3.35e12, 989.4e12, 1978.9e12, 0}; }
DeviceRates gb200() { return {"GB200", Arch::blackwell, 152, 8.0e12, 2500e12, 5000e12, 10000e12}; }

double tflops(const RooflineKernelCostModel& m, const Kernel& k, const DeviceRates& d) {
  return flops(k) / m.seconds(k, d) / 1e12;
}
}  // namespace

TEST_CASE("a huge GEMM approaches ceiling x peak; a tiny one is bound by the fixed kernel time") {
  const RooflineKernelCostModel m;
  const auto p = builtin_kernel_efficiency();
  for (const auto& d : {h100(), gb200()}) {
    const Gemm huge{1 << 15, 1 << 15, 1 << 15, DType::bf16};
    const double ceiling = p.gemm_ceiling(d.arch, DType::bf16).fraction * d.bf16_flops / 1e12;
    const double achieved = tflops(m, huge, d);
    CHECK(achieved <= ceiling);
    CHECK(achieved > 0.97 * ceiling);
    const Gemm tiny{16, 16, 16, DType::bf16};
    CHECK(m.seconds(tiny, d) == doctest::Approx(p.kernel_fixed_s).epsilon(1e-3));
  }
}

TEST_CASE("GEMM compute time is whole waves of tiles at the ceiling rate, exactly") {
  const RooflineKernelCostModel m;
  const auto p = builtin_kernel_efficiency();
  // H100: 128x256 tiles on 132 SMs. m=4096, n=4096: 32 x 16 = 512 tiles -> 4 waves of 132 units.
  const Gemm g{4096, 4096, 8192, DType::bf16};
  const auto b = m.explain(g, h100());
  const double occupied = 4.0 * 132 * 128 * 256 * 2.0 * 8192;
  CHECK(b.compute_s == doctest::Approx(occupied / (989.4e12 * p.gemm_ceiling(Arch::hopper, DType::bf16).fraction)));
  CHECK(gemm_tile_utilization(4096, 4096, p.gemm_tiling(Arch::hopper), 132) == doctest::Approx(512.0 / 528.0));
  // One row more needs a new row of tiles (33 x 16 = 528 tiles, still 4 waves): same time.
  CHECK(m.explain(Gemm{4097, 4096, 8192, DType::bf16}, h100()).compute_s == doctest::Approx(b.compute_s));
  CHECK(b.seconds == doctest::Approx(p.kernel_fixed_s + b.compute_s));
}

TEST_CASE("memory-bound kernels: fixed time plus bytes at the architecture's in-training HBM fraction") {
  const RooflineKernelCostModel m;
  const auto p = builtin_kernel_efficiency();
  const MemoryBound k{1e9, "permute"};
  // Hopper: the DeepSeek H800 trace's RMSNorm rate, 4096 x 7168 x 4 B in (115 - 2) us.
  const double hopper_Bps = 4096.0 * 7168 * 4 / 113e-6;
  CHECK(m.seconds(k, h100()) == doctest::Approx(p.kernel_fixed_s + 1e9 / hopper_Bps));
  // Blackwell has no in-training measurement: the fraction fitted to groundtruth.csv (0.38), sourced as FITTED.
  CHECK(m.seconds(k, gb200()) == doctest::Approx(p.kernel_fixed_s + 1e9 / (gb200().hbm_Bps * 0.38)));
  for (const auto& e : p.elementwise_hbm)
    if (e.arch != Arch::hopper)
      CHECK(e.source.rfind("FITTED: moesim validate --fit elementwise_hbm_fraction_blackwell", 0) == 0);
  // A GEMM's memory term keeps the streaming fraction on Hopper too.
  CHECK(p.elementwise_fraction(Arch::hopper) < p.hbm_fraction);
  CHECK(m.explain(k, h100()).memory_bound());
  CHECK(m.explain(k, h100()).efficiency == 0);
}

TEST_CASE("a memory-bound kind measured on the GPU costs its measured rate and fixed time; others keep the fraction") {
  const RooflineKernelCostModel m;
  const auto p = builtin_kernel_efficiency();
  auto d = gb200();
  d.memory_rates["cross_entropy_fused"] = {2.4e12, 30e-6};
  // Worked by hand: 30 us + 1.2e9 B / 2.4e12 B/s = 530 us, in place of the assumed fixed time and the fraction.
  CHECK(m.seconds(MemoryBound{1.2e9, "cross_entropy_fused"}, d) == doctest::Approx(530e-6));
  // Another kind on the same GPU, and the same kind on a GPU without the measurement, are priced as before.
  CHECK(m.seconds(MemoryBound{1.2e9, "permute"}, d) == m.seconds(MemoryBound{1.2e9, "permute"}, gb200()));
  CHECK(m.seconds(MemoryBound{1.2e9, "cross_entropy_fused"}, gb200()) ==
        doctest::Approx(p.kernel_fixed_s + 1.2e9 / (8.0e12 * 0.38)));
  // Monotone in bytes; zero bytes cost the fixed time; negative bytes are an internal error.
  CHECK(m.seconds(MemoryBound{2.4e9, "cross_entropy_fused"}, d) >
        m.seconds(MemoryBound{1.2e9, "cross_entropy_fused"}, d));
  CHECK(m.seconds(MemoryBound{0, "cross_entropy_fused"}, d) == doctest::Approx(30e-6));
  CHECK_THROWS_AS(m.seconds(MemoryBound{-1, "cross_entropy_fused"}, d), InternalError);
}

TEST_CASE("monotonicity: more work never faster, more FLOP/s or bandwidth never slower") {
  const RooflineKernelCostModel m;
  AttentionFwd a;
  a.batch = 1, a.heads = 32, a.kv_heads = 8, a.d_qk = 128, a.d_v = 128;
  for (const auto& base : {h100(), gb200()}) {
    DeviceRates faster = base;
    faster.bf16_flops *= 1.5;
    faster.fp8_flops *= 1.5;
    DeviceRates wider = base;
    wider.hbm_Bps *= 2;
    double previous_gemm = 0, previous_attn = 0, previous_grouped = 0;
    for (std::int64_t s = 64; s <= 65536; s = s * 3 / 2) {
      const Gemm g{s, 7168, 2048, DType::bf16};
      a.seq_q = a.seq_kv = s;
      const GroupedGemm gg{{s, s / 2, s / 3, 0}, 4096, 7168, DType::fp8};
      const double tg = m.seconds(g, base), ta = m.seconds(a, base), tgg = m.seconds(gg, base);
      CHECK(tg >= previous_gemm);
      CHECK(ta >= previous_attn);
      CHECK(tgg >= previous_grouped);
      previous_gemm = tg, previous_attn = ta, previous_grouped = tgg;
      for (const auto& better : {faster, wider}) {
        CHECK(m.seconds(g, better) <= tg);
        CHECK(m.seconds(a, better) <= ta);
        CHECK(m.seconds(gg, better) <= tgg);
      }
    }
    for (std::int64_t k = 128; k <= 16384; k *= 2)
      CHECK(m.seconds(Gemm{2048, 2048, k, DType::fp8}, base) <= m.seconds(Gemm{2048, 2048, 2 * k, DType::fp8}, base));
  }
}

TEST_CASE("grouped GEMM: skewed per-expert batches are slower than balanced ones of the same total") {
  const RooflineKernelCostModel m;
  const GroupedGemm balanced{{512, 512, 512, 512, 512, 512, 512, 512}, 4096, 7168, DType::fp8_block};
  const GroupedGemm skewed{{1900, 1000, 500, 300, 200, 100, 60, 36}, 4096, 7168, DType::fp8_block};
  CHECK(flops(balanced) == flops(skewed));
  CHECK(m.seconds(skewed, h100()) > 1.05 * m.seconds(balanced, h100()));
  CHECK(m.seconds(skewed, gb200()) > 1.05 * m.seconds(balanced, gb200()));
  // Smaller per-expert batches at the same total work are slower (fine-grained experts).
  const GroupedGemm coarse{std::vector<std::int64_t>(8, 4096), 1536, 2048, DType::bf16};
  const GroupedGemm fine{std::vector<std::int64_t>(64, 512), 1536, 2048, DType::bf16};
  CHECK(flops(coarse) == flops(fine));
  CHECK(m.seconds(fine, h100()) > 1.1 * m.seconds(coarse, h100()));
  // A grouped GEMM of one expert costs exactly the dense GEMM plus the per-expert overhead rows.
  const auto p = builtin_kernel_efficiency();
  const double one = m.explain(GroupedGemm{{4096}, 4096, 4096, DType::bf16}, h100()).compute_s;
  const double dense = m.explain(Gemm{4096, 4096, 4096, DType::bf16}, h100()).compute_s;
  const double overhead = 2.0 * p.grouped_gemm_overhead_rows * 4096 * 4096 /
                          (989.4e12 * p.gemm_ceiling(Arch::hopper, DType::bf16).fraction);
  CHECK(one == doctest::Approx(dense + overhead));
}

TEST_CASE("grouped GEMM as one kernel per expert reproduces TE PR #2045's H100 BF16 points") {
  // Transformer Engine's default GroupedLinear path, H100 BF16, n=768, k=2048 [S29] (hardware.md §5.1).
  const RooflineKernelCostModel m;
  auto tflops = [&](int groups, std::int64_t rows) {
    const GroupedGemm g{std::vector<std::int64_t>(static_cast<std::size_t>(groups), rows), 768, 2048, DType::bf16,
                        true};
    return flops(g) / m.seconds(g, h100()) / 1e12;
  };
  CHECK(tflops(8, 4096) == doctest::Approx(628).epsilon(1e-9));
  CHECK(tflops(16, 2048) == doctest::Approx(554).epsilon(1e-9));
  const auto& pe = builtin_kernel_efficiency().per_expert_gemms;
  CHECK(pe.kernel_s == doctest::Approx(2.74e-6).epsilon(0.01));
  CHECK(pe.ceiling_scale == doctest::Approx(0.941).epsilon(0.002));
  // Per-expert kernels: the fixed time grows with the non-empty experts; empty experts launch nothing.
  const GroupedGemm sparse{{4096, 0, 0, 4096}, 768, 2048, DType::bf16, true};
  CHECK(m.explain(sparse, h100()).fixed_s == doctest::Approx(2 * pe.kernel_s));
  // With many small experts, per-expert kernels cost more than one grouped kernel.
  const GroupedGemm fused{std::vector<std::int64_t>(16, 1024), 3072, 4096, DType::fp8_block};
  GroupedGemm looped = fused;
  looped.per_expert_kernels = true;
  CHECK(m.seconds(looped, gb200()) > 1.1 * m.seconds(fused, gb200()));
  CHECK_THROWS_AS(per_expert_gemms_through({8, 4096, 768, 2048, 554.0}, {16, 2048, 768, 2048, 628.0}, 989.4e12, 0.803,
                                           builtin_kernel_efficiency().gemm_tilings[0], 132, "t"),
                  InternalError);
}

TEST_CASE("attention: efficiency rises with sequence length and the built-in curve passes through cuDNN figures") {
  const RooflineKernelCostModel m;
  AttentionFwd a;
  a.batch = 2, a.heads = 64, a.kv_heads = 8, a.d_qk = 128, a.d_v = 128, a.causal = true;
  // GB200 BF16 forward: 1334 TF at 4k and 1701 TF at 32k [S32] (compute-bound, so only the fixed time differs).
  a.seq_q = a.seq_kv = 4096;
  const auto b4 = m.explain(a, gb200());
  CHECK(flops(a) / b4.compute_s / 1e12 == doctest::Approx(1334).epsilon(1e-9));
  a.seq_q = a.seq_kv = 32768;
  const auto b32 = m.explain(a, gb200());
  CHECK(flops(a) / b32.compute_s / 1e12 == doctest::Approx(1701).epsilon(1e-9));
  // 2k drops 20-40% below the long-sequence figure (hardware.md §5.2).
  a.seq_q = a.seq_kv = 2048;
  const double drop = 1 - m.explain(a, gb200()).efficiency / b32.efficiency;
  CHECK(drop > 0.2);
  CHECK(drop < 0.4);
  // FP8 runs faster than BF16 at the same shape.
  AttentionFwd f8 = a;
  f8.dtype = DType::fp8;
  CHECK(m.seconds(f8, gb200()) < m.seconds(a, gb200()));
  // Backward is 2.5x the forward FLOPs and slower.
  AttentionBwd bwd;
  static_cast<AttentionShape&>(bwd) = a;
  CHECK(flops(bwd) == doctest::Approx(2.5 * flops(a)));
  CHECK(m.seconds(bwd, gb200()) > 2.5 * m.seconds(a, gb200()) * 0.99);
}

TEST_CASE("attended keys per query: causal, windowed and cross attention, exact") {
  AttentionShape a;
  a.seq_q = a.seq_kv = 4;
  a.causal = false;
  CHECK(attended_keys_per_query(a) == 4.0);
  a.causal = true;  // 1 + 2 + 3 + 4
  CHECK(attended_keys_per_query(a) == doctest::Approx(10.0 / 4));
  a.window = 2;  // 1 + 2 + 2 + 2
  CHECK(attended_keys_per_query(a) == doctest::Approx(7.0 / 4));
  a.window = 0;
  a.seq_q = 2;  // last two of four positions: 3 + 4
  CHECK(attended_keys_per_query(a) == doctest::Approx(3.5));
}

TEST_CASE("kernels the device cannot run are infeasible; bad device rates are config errors") {
  const RooflineKernelCostModel m;
  CHECK_THROWS_AS(m.seconds(Gemm{1024, 1024, 1024, DType::fp4}, h100()), InfeasibleError);
  DeviceRates bad = h100();
  bad.hbm_Bps = 0;
  try {
    m.seconds(MemoryBound{1, "x"}, bad);
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "<input>: device rates for \"H100_SXM\": hbm_Bps must be positive");
  }
}

TEST_CASE("cost models by name from the registry") {
  auto model = make_kernel_cost_model("roofline");
  CHECK(model->name().rfind("roofline (built-in", 0) == 0);
  CHECK(model->seconds(Gemm{4096, 4096, 4096, DType::bf16}, h100()) > 0);
  try {
    make_kernel_cost_model("rooflin");
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("unknown kernel cost model \"rooflin\" (did you mean \"roofline\"?)") !=
          std::string::npos);
  }
}

TEST_CASE("an FP8 attention backward with a sliding window costs the full causal work; BF16 and forwards do not") {
  const RooflineKernelCostModel m;
  AttentionShape full;
  full.batch = 2, full.heads = 64, full.kv_heads = 8, full.seq_q = 4096, full.seq_kv = 4096, full.d_qk = 64,
  full.d_v = 64;
  AttentionShape window = full;
  window.window = 128;
  for (auto dt : {DType::fp8, DType::fp8_block}) {
    CAPTURE(to_string(dt));
    full.dtype = window.dtype = dt;
    CHECK(m.seconds(AttentionBwd{window}, gb200()) == m.seconds(AttentionBwd{full}, gb200()));
    CHECK(m.seconds(AttentionFwd{window}, gb200()) < m.seconds(AttentionFwd{full}, gb200()));
  }
  full.dtype = window.dtype = DType::bf16;
  CHECK(m.seconds(AttentionBwd{window}, gb200()) < m.seconds(AttentionBwd{full}, gb200()));
  // The FLOPs the step counts stay the windowed ones.
  full.dtype = window.dtype = DType::fp8;
  CHECK(flops(AttentionBwd{window}) < 0.1 * flops(AttentionBwd{full}));
}
