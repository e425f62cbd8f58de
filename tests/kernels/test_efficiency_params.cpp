#include <doctest/doctest.h>

#include "core/error.hpp"
#include "kernels/efficiency_params.hpp"
#include "kernels/roofline_model.hpp"

using namespace moesim;
using namespace moesim::kernels;

TEST_CASE("the built-in set is complete: every (arch, dtype) with a datapath has its ceilings and curves") {
  const auto p = builtin_kernel_efficiency();
  // Every (arch, dtype) with a datapath has a GEMM ceiling and both attention passes (FP4 attention excepted).
  for (auto a : {Arch::hopper, Arch::blackwell, Arch::blackwell_ultra}) {
    for (auto d : {DType::bf16, DType::fp8, DType::fp8_block}) {
      CHECK(p.gemm_ceiling(a, d).fraction > 0.5);
      CHECK(p.gemm_ceiling(a, d).fraction < 0.9);
      CHECK(p.attention_curve(a, d, false).ceiling_fraction < 1.0);
      CHECK(p.attention_curve(a, d, true).ceiling_fraction < 1.0);
    }
  }
  CHECK_THROWS_AS(p.attention_curve(Arch::blackwell, DType::fp4, false), ConfigError);
}

// The data file holds the doubles its notes derive; these re-derive each from the published points (the same
// arithmetic the C++ built-in set used before it became data), exactly.
TEST_CASE("the built-in file's figures are their derivations from the published points") {
  using A = Arch;
  using D = DType;
  const auto p = builtin_kernel_efficiency();
  CHECK(p.gemm_ceiling(A::hopper, D::bf16).fraction == 794.5 / 989.4);  // [S2] MAMF / datasheet peak
  CHECK(p.gemm_ceiling(A::hopper, D::fp8).fraction == 1402.6 / 1978.9);
  CHECK(p.gemm_ceiling(A::hopper, D::fp8_block).fraction == 1358.0 / 1978.9);  // [S28]
  CHECK(p.gemm_ceiling(A::blackwell, D::bf16).fraction == 1822.0 / 2500.0);
  CHECK(p.gemm_ceiling(A::blackwell, D::fp8).fraction == 3615.6 / 5000.0);
  CHECK(p.gemm_ceiling(A::blackwell, D::fp4).fraction == 7627.6 / 0.804 / 10000.0);  // [S14] / sustained_math
  CHECK(p.gemm_ceiling(A::blackwell_ultra, D::bf16).fraction == 1769.0 / 2250.0);
  CHECK(p.gemm_ceiling(A::blackwell_ultra, D::fp8).fraction == 3353.3 / 4500.0);
  CHECK(p.gemm_ceiling(A::blackwell_ultra, D::fp4).fraction == 7627.6 / 10000.0);
  CHECK(p.hbm_fraction == 2.7 / 3.35);                                                              // [S28]
  CHECK(p.elementwise_fraction(A::hopper) == (4096.0 * 7168 * 2 * 2 / (115e-6 - 2e-6)) / 3.35e12);  // h800-trace
  CHECK(p.kernel_fixed_s == 2e-6);
  CHECK(p.grouped_gemm_overhead_rows == 123.5);  // (1024 + 4h) / (1024 + h) = 1233 / 932
  const auto pe = per_expert_gemms_through({8, 4096, 768, 2048, 628.0}, {16, 2048, 768, 2048, 554.0}, 989.4e12,
                                           794.5 / 989.4, p.gemm_tiling(A::hopper), 132, "[S29]");
  CHECK(p.per_expert_gemms.kernel_s == pe.kernel_s);
  CHECK(p.per_expert_gemms.ceiling_scale == pe.ceiling_scale);
  // Attention: (value at 4k, value at 32k, peak) per curve, [S32] (current releases) and [S63] (cuDNN < 9.18).
  struct Points {
    A a;
    D d;
    bool bwd;
    double lo, hi, peak;
    int cudnn_below = 0;
  };
  const std::vector<Points> points = {
      {A::hopper, D::bf16, false, 591, 702, 989.4},
      {A::hopper, D::bf16, true, 474, 612, 989.4},
      {A::hopper, D::fp8, false, 854, 1062, 1978.9},
      {A::hopper, D::fp8, true, 474, 612, 1978.9},
      {A::hopper, D::fp8_block, false, 854, 1062, 1978.9},
      {A::hopper, D::fp8_block, true, 474, 612, 1978.9},
      {A::blackwell, D::bf16, false, 1334, 1701, 2500},
      {A::blackwell, D::bf16, true, 1131, 1434, 2500},
      {A::blackwell, D::fp8, false, 1801, 2221, 5000},
      {A::blackwell, D::fp8, true, 1166, 1805, 5000},
      {A::blackwell, D::fp8_block, false, 1716, 2143, 5000},
      {A::blackwell, D::fp8_block, true, 1166, 1805, 5000},
      {A::blackwell_ultra, D::bf16, false, 1672, 2014, 2500},
      {A::blackwell_ultra, D::bf16, true, 1195, 1559, 2500},
      {A::blackwell_ultra, D::fp8, false, 2324, 3157, 5000},
      {A::blackwell_ultra, D::fp8, true, 1309, 1926, 5000},
      {A::blackwell_ultra, D::fp8_block, false, 2324, 3157, 5000},
      {A::blackwell_ultra, D::fp8_block, true, 1309, 1926, 5000},
      {A::blackwell, D::bf16, false, 1141.14, 1514.76, 2250, 91800},
      {A::blackwell, D::bf16, true, 832.907, 1180.25, 2250, 91800},
      {A::blackwell, D::fp8, false, 1230.65, 1781.41, 4500, 91800},
      {A::blackwell, D::fp8, true, 972.284, 1582.24, 4500, 91800},
  };
  CHECK(p.attention.size() == points.size());
  for (const auto& pt : points) {
    CAPTURE(to_string(pt.a));
    CAPTURE(to_string(pt.d));
    CAPTURE(pt.bwd);
    const auto want = attention_curve_through(pt.a, pt.d, pt.bwd, 4096, pt.lo, 32768, pt.hi, pt.peak, "");
    const auto& got = p.attention_curve(pt.a, pt.d, pt.bwd, pt.cudnn_below > 0 ? pt.cudnn_below - 1 : 0);
    CHECK(got.cudnn_below == pt.cudnn_below);
    CHECK(got.ceiling_fraction == want.ceiling_fraction);
    CHECK(got.half_seq == want.half_seq);
  }
}

TEST_CASE("a curve through two points reproduces both") {
  const auto c = attention_curve_through(Arch::hopper, DType::bf16, false, 4096, 591, 32768, 702, 989.4, "t");
  CHECK(c.fraction_at(4096) * 989.4 == doctest::Approx(591).epsilon(1e-12));
  CHECK(c.fraction_at(32768) * 989.4 == doctest::Approx(702).epsilon(1e-12));
  CHECK(c.half_seq == doctest::Approx(902.9).epsilon(1e-3));
  CHECK_THROWS_AS(attention_curve_through(Arch::hopper, DType::bf16, false, 4096, 702, 32768, 591, 989.4, "t"),
                  InternalError);
}

TEST_CASE("older cuDNN releases: Blackwell BF16 / FP8 attention on the cuDNN 9.13.1 curves, others unchanged") {
  const auto p = builtin_kernel_efficiency();
  // [S63]: B200, cuDNN 9.13.1 (NeMo 25.11), causal hd128 at 4k and 32k, of B200's 2250 / 4500 TF peaks.
  for (int release : {91100, 91301, 91799}) {
    CAPTURE(release);
    CHECK(p.attention_curve(Arch::blackwell, DType::bf16, false, release).fraction_at(4096) * 2250 ==
          doctest::Approx(1141.14).epsilon(1e-9));
    CHECK(p.attention_curve(Arch::blackwell, DType::bf16, true, release).fraction_at(32768) * 2250 ==
          doctest::Approx(1180.25).epsilon(1e-9));
    CHECK(p.attention_curve(Arch::blackwell, DType::fp8, true, release).fraction_at(4096) * 4500 ==
          doctest::Approx(972.284).epsilon(1e-9));
    // No older figure for MXFP8, Hopper or Blackwell Ultra: their current curves.
    CHECK(&p.attention_curve(Arch::blackwell, DType::fp8_block, false, release) ==
          &p.attention_curve(Arch::blackwell, DType::fp8_block, false));
    CHECK(&p.attention_curve(Arch::hopper, DType::bf16, true, release) ==
          &p.attention_curve(Arch::hopper, DType::bf16, true));
    CHECK(&p.attention_curve(Arch::blackwell_ultra, DType::bf16, true, release) ==
          &p.attention_curve(Arch::blackwell_ultra, DType::bf16, true));
  }
  // 9.18.0 on (and 0, "current") read the current curves: GB200 BF16 forward 1334 TF at 4k [S32].
  for (int release : {0, 91800, 92101}) {
    CAPTURE(release);
    CHECK(p.attention_curve(Arch::blackwell, DType::bf16, false, release).fraction_at(4096) * 2500 ==
          doctest::Approx(1334).epsilon(1e-9));
  }
  // The kernel follows its shape's release: an older cuDNN is slower at the same shape.
  const DeviceRates b200{"B200", Arch::blackwell, 148, 8e12, 2250e12, 4500e12, 9000e12};
  const RooflineKernelCostModel m(p);
  AttentionBwd now, older;
  now.batch = older.batch = 1, now.heads = older.heads = 128, now.seq_q = now.seq_kv = 4096;
  older.seq_q = older.seq_kv = 4096, now.d_qk = older.d_qk = 192, now.d_v = older.d_v = 128;
  older.cudnn_version = 91301;
  // Same FLOPs and fixed time: the compute terms differ by the two curves' fractions at 4k, (1131 / 2500) over
  // (832.907 / 2250) = 1.222.
  const double fixed = p.kernel_fixed_s;
  CHECK((m.seconds(older, b200) - fixed) / (m.seconds(now, b200) - fixed) ==
        doctest::Approx((1131.0 / 2500) / (832.907 / 2250)).epsilon(1e-9));
}

TEST_CASE("efficiency parameters round-trip through JSON and drive the same predictions") {
  const auto p = builtin_kernel_efficiency();
  const auto q = parse_kernel_efficiency_params(to_json_text(p), "roundtrip.json");
  CHECK(q.source == p.source);
  CHECK(q.gemm_ceilings.size() == p.gemm_ceilings.size());
  CHECK(q.attention.size() == p.attention.size());
  const DeviceRates gb200{"GB200", Arch::blackwell, 152, 8e12, 2500e12, 5000e12, 10000e12};
  const RooflineKernelCostModel a(p), b(q);
  AttentionBwd att;
  att.batch = 1, att.heads = 16, att.seq_q = att.seq_kv = 8192, att.d_qk = 192, att.d_v = 128;
  const GroupedGemm gg{{100, 700, 0, 3000}, 2048, 7168, DType::fp8_block};
  CHECK(a.seconds(att, gb200) == doctest::Approx(b.seconds(att, gb200)).epsilon(1e-12));
  CHECK(a.seconds(gg, gb200) == doctest::Approx(b.seconds(gg, gb200)).epsilon(1e-12));
  att.cudnn_version = 91301;  // the older-release curves travel with the file too
  CHECK(a.seconds(att, gb200) == doctest::Approx(b.seconds(att, gb200)).epsilon(1e-12));
}

TEST_CASE("a bad efficiency file reports every problem at once, with did-you-mean") {
  try {
    load_kernel_efficiency_params(MOESIM_FIXTURES_DIR "/kernels/bad_efficiency.json");
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.code() == ExitCode::bad_config);
    const std::string f = MOESIM_FIXTURES_DIR "/kernels/bad_efficiency.json";
    const std::string what = e.what();
    CHECK(what.find(f + ":/hbm_fraction/value: must be a fraction in (0, 1], got 1.500000") != std::string::npos);
    CHECK(what.find(f + ":/kernel_fixed_us/source: missing required key \"source\"") != std::string::npos);
    CHECK(what.find(f + ":/grouped_gemm_overhead_rows/unit: expected \"rows\", got \"us\"") != std::string::npos);
    CHECK(what.find(f + ":/gemm_ceilings/0/arch: expected one of hopper, blackwell, blackwell_ultra, got \"hoper\" "
                        "(did you mean \"hopper\"?)") != std::string::npos);
    CHECK(what.find(f + ":/gemm_ceilings/1/fracton: unknown key \"fracton\" (did you mean \"fraction\"?)") !=
          std::string::npos);
    CHECK(what.find(f + ":/attention/0/pass: expected one of fwd, bwd, got \"forward\"") != std::string::npos);
    CHECK(e.diagnostics().size() == 7);  // the six above plus the missing /gemm_ceilings/1/fraction
  }
}
