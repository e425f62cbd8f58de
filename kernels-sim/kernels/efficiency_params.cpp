#include "kernels/efficiency_params.hpp"

#include <cmath>
#include <set>
#include <tuple>

#include "config/document.hpp"
#include "config/object_reader.hpp"
#include "core/error.hpp"
#include "kernels/roofline_model.hpp"

namespace moesim::kernels {

// ---------------------------------------------------------------------------------------------------------------
// Lookups

namespace {
[[noreturn]] void missing(const KernelEfficiencyParams& p, const std::string& what) {
  throw ConfigError({{p.source, "", "no " + what + " in these kernel efficiency parameters"}});
}
}  // namespace

const GemmCeiling& KernelEfficiencyParams::gemm_ceiling(Arch a, DType d) const {
  for (const auto& c : gemm_ceilings)
    if (c.arch == a && c.dtype == d) return c;
  missing(*this, "GEMM ceiling for " + to_string(a) + "/" + to_string(d));
}

const GemmTiling& KernelEfficiencyParams::gemm_tiling(Arch a) const {
  for (const auto& t : gemm_tilings)
    if (t.arch == a) return t;
  missing(*this, "GEMM tiling for " + to_string(a));
}

double KernelEfficiencyParams::elementwise_fraction(Arch a) const {
  for (const auto& e : elementwise_hbm)
    if (e.arch == a) return e.fraction;
  return hbm_fraction;
}

const AttentionCurve& KernelEfficiencyParams::attention_curve(Arch a, DType d, bool backward, int cudnn_version) const {
  const AttentionCurve* current = nullptr;
  const AttentionCurve* older = nullptr;
  for (const auto& c : attention) {
    if (c.arch != a || c.dtype != d || c.backward != backward) continue;
    if (c.cudnn_below == 0)
      current = &c;
    else if (cudnn_version > 0 && cudnn_version < c.cudnn_below && (!older || c.cudnn_below < older->cudnn_below))
      older = &c;
  }
  if (older) return *older;
  if (current) return *current;
  missing(*this,
          std::string("attention ") + (backward ? "bwd" : "fwd") + " curve for " + to_string(a) + "/" + to_string(d));
}

AttentionCurve attention_curve_through(Arch a, DType d, bool backward, double seq_lo, double tf_lo, double seq_hi,
                                       double tf_hi, double peak, std::string source) {
  if (!(seq_lo > 0 && seq_lo < seq_hi && tf_lo > 0 && tf_lo < tf_hi && peak > 0))
    throw InternalError("attention_curve_through needs 0 < seq_lo < seq_hi and 0 < tf_lo < tf_hi");
  // tf(s) = C s / (s + h). Dividing the two points: r = tf_lo/tf_hi = seq_lo (seq_hi + h) / (seq_hi (seq_lo + h)),
  // linear in h.
  const double r = tf_lo / tf_hi;
  const double h = seq_lo * seq_hi * (1 - r) / (r * seq_hi - seq_lo);
  const double ceiling = tf_hi * (seq_hi + h) / seq_hi;
  return AttentionCurve{a, d, backward, ceiling / peak, h, 0, std::move(source)};
}

PerExpertGemms per_expert_gemms_through(const GroupedGemmPoint& a, const GroupedGemmPoint& b, double peak_flops,
                                        double ceiling, const GemmTiling& tiling, int sms, std::string source) {
  // time_i = occupied_i / rate + groups_i * kernel_s, with rate = peak * ceiling * scale: linear in (1/rate, kernel_s).
  auto terms = [&](const GroupedGemmPoint& p) {
    const std::vector<std::int64_t> rows(static_cast<std::size_t>(p.groups), p.rows);
    const double useful = 2.0 * static_cast<double>(p.groups * p.rows) * static_cast<double>(p.n * p.k);
    return std::make_tuple(gemm_occupied_flops(rows, p.n, p.k, tiling, sms), static_cast<double>(p.groups),
                           useful / (p.tflops * 1e12));
  };
  const auto [oa, ga, ta] = terms(a);
  const auto [ob, gb, tb] = terms(b);
  const double det = oa * gb - ob * ga;
  if (det == 0) throw InternalError("per_expert_gemms_through: the two points do not separate the two parameters");
  const double inv_rate = (ta * gb - tb * ga) / det;
  const double kernel_s = (oa * tb - ob * ta) / det;
  if (!(inv_rate > 0 && kernel_s > 0)) throw InternalError("per_expert_gemms_through: no positive solution");
  return PerExpertGemms{kernel_s, 1.0 / (inv_rate * peak_flops * ceiling), std::move(source)};
}

// ---------------------------------------------------------------------------------------------------------------
// Built-in set. Reference: data/reference/hardware.md §5 and hardware.json "efficiencies"; source tags
// [Sn] resolve in hardware.json "sources". Peaks are the datasheet dense figures of hardware.md §1.

namespace {
const char* const kBlackwellElementwiseFit =
    "FITTED: moesim validate --fit elementwise_hbm_fraction_blackwell=0.2:1 over the Blackwell rows of "
    "groundtruth.csv (0.448, then 0.43 with the refitted host factor, 0.411 with TE's fused grouped MLP where the "
    "recipes enable it, 0.381 with the x86 and unbound-rank host factors; kernels-sim/README.md); no in-training "
    "measurement of Blackwell memory-bound kernels exists";
// The only published MXFP8 GEMM figure is a grouped GEMM (K=7168 N=2048 on GB200, ~2,672 TF with L2 flushed, GB200
// blog, moe-modeling.md §8.15): 0.534 of peak, and it already carries per-expert costs the grouped-GEMM model adds
// on its own (grouped_gemm_overhead_rows) and the clocks of its run. As the dense MXFP8 ceiling it under-predicted
// every GB300 MXFP8 row once GB200's sustained clocks were applied (docs/kernel-model.md), so it is fitted.
// GB200's sustained_math (topologies/parts/gpu/gb200.json: [S14]'s sustained FP8 GEMM over the short-run MAMF).
// [S14]'s FP4 GEMM ran at those clocks too, so its ceiling is divided by it; tests/workload/test_layer_costs.cpp
// checks that GB200 reproduces both [S14] GEMMs end to end, which ties this copy to the JSON figure.
constexpr double kGb200SustainedMath = 0.804;
const char* const kBlackwellMxfp8Fit =
    "FITTED: moesim validate --fit gemm_ceiling_mxfp8_blackwell=0.4:0.9 over groundtruth.csv (0.697, with GB200's "
    "sustained clocks; 39 rows inform it, kernels-sim/README.md); the GB200 blog's grouped figure (2,672 TF, 0.534) "
    "is below it, as a grouped GEMM with per-expert costs should be";
}  // namespace

KernelEfficiencyParams builtin_kernel_efficiency() {
  using A = Arch;
  using D = DType;
  KernelEfficiencyParams p;
  p.source = "built-in (kernels-sim/kernels/efficiency_params.cpp, hardware.md §5)";

  p.gemm_ceilings = {
      {A::hopper, D::bf16, 794.5 / 989.4, "hardware.md §5.1 MAMF H100 SXM BF16 794.5 TF of 989.4 [S2]"},
      {A::hopper, D::fp8, 1402.6 / 1978.9, "hardware.md §5.1 MAMF H100 SXM FP8 1402.6 TF of 1978.9 [S2]"},
      {A::hopper, D::fp8_block, 1358.0 / 1978.9,
       "hardware.md §5.1 DeepGEMM H800 block-scaled FP8, dense M=4096 N=7168 K=16384: 1358 TF [S28]"},
      {A::blackwell, D::bf16, 1822.0 / 2500.0, "hardware.md §5.1 MAMF GB200 BF16 1822 TF of 2500 [S2]"},
      {A::blackwell, D::fp8, 3615.6 / 5000.0, "hardware.md §5.1 MAMF GB200 FP8 3615.6 TF of 5000 [S2]"},
      {A::blackwell, D::fp8_block, 0.70, kBlackwellMxfp8Fit},
      // [S14] ran after 10,000 warm-up iterations, at GB200's sustained clocks, which the device rates already
      // apply: the ceiling is that figure divided by them, so GB200 reproduces 7627.6 TF.
      {A::blackwell, D::fp4, 7627.6 / kGb200SustainedMath / 10000.0,
       "hardware.md §5.1 GB200 FP4 cuBLASLt square N=16384: 7627.6 TF of 10000 at sustained clocks [S14] / GB200's "
       "sustained_math 0.804 (no FP4 MAMF published)"},
      {A::blackwell_ultra, D::bf16, 1769.0 / 2250.0, "hardware.md §5.1 MAMF B300 BF16 1769 TF of 2250 [S2]"},
      {A::blackwell_ultra, D::fp8, 3353.3 / 4500.0, "hardware.md §5.1 MAMF B300 FP8 3353.3 TF of 4500 [S2]"},
      {A::blackwell_ultra, D::fp8_block, 0.70, kBlackwellMxfp8Fit},
      {A::blackwell_ultra, D::fp4, 7627.6 / 10000.0,
       "assumption: GB200's FP4 fraction at sustained clocks [S14] (Blackwell Ultra has no sustained-clock figure and "
       "is not derated); Blackwell Ultra FP4 peak itself is disputed (hardware.md §6)"},
  };

  p.gemm_tilings = {
      {A::hopper, 128, 256, 1, "assumption: 128x256 output tile per SM (common Hopper warp-specialised tile)"},
      {A::blackwell, 256, 256, 2, "assumption: 256x256 tile per SM pair (tcgen05 2-SM MMA)"},
      {A::blackwell_ultra, 256, 256, 2, "assumption: as blackwell"},
  };

  // DeepGEMM masked grouped GEMM on H800, N=4096 K=7168 [S28]: 1 group x 1024 rows 1233 TF, 4 x 256 rows 932 TF.
  // Both fill 128 tiles of 128x256 (one wave on 132 SMs), so the time ratio 1233/932 is all per-expert overhead:
  // (1024 + 4h) / (1024 + h) = 1233/932  =>  h = 123.5 rows.
  p.grouped_gemm_overhead_rows = 123.5;

  // Transformer Engine's GroupedLinear issues one cuBLAS GEMM per expert over 4 streams (its default path; the
  // single-kernel grouped GEMMs are opt-in or newer: TE #2045 CUTLASS, #2502 cuBLASLt grouped, #3038 graph-safe).
  // TE PR #2045 [S29] measured that path on H100 BF16 (hardware.md §5.1): 8 x 4096 rows, n=768, k=2048: 628 TF;
  // 16 x 2048 rows: 554 TF. Both fill the same 768 tiles, so the gap is the per-expert cost: solved exactly with
  // the Hopper tiling and BF16 MAMF ceiling above (about 2.7 us per expert kernel, tiles at 0.94 x the ceiling).
  // Assumption: the same per-kernel time and ceiling scale hold for other GPUs and dtypes.
  p.per_expert_gemms = per_expert_gemms_through(
      {8, 4096, 768, 2048, 628.0}, {16, 2048, 768, 2048, 554.0}, 989.4e12,         // H100 SXM BF16 dense peak (§1)
      p.gemm_ceiling(A::hopper, D::bf16).fraction, p.gemm_tiling(A::hopper), 132,  // H100 SXM: 132 SMs (§1)
      "TE PR #2045 [S29] (hardware.md §5.1): H100 BF16 cuBLAS multi-stream grouped GEMM, 8x4096 628 TF and "
      "16x2048 554 TF (n=768, k=2048), solved with the H100 tiling and MAMF ceiling");

  // DeepGEMM M=64 decode GEMMs are memory-bound at up to 2.7 TB/s on H800 (3.35 TB/s datasheet) [S28].
  p.hbm_fraction = 2.7 / 3.35;
  // Memory-bound kernels in training: DeepSeek's H800 trace (kernels-sim/data/h800-trace, a measurement): TE's
  // RMSNorm over 4096 x 7168 BF16 (117.4 MB read + written) takes 115 us median, i.e. 1.04 TB/s after this model's
  // 2 us fixed cost (the 512- and 1536-wide rows give 1.4 and 1.26); its FP8 per-token casts run at about the same
  // rate. Assumption: other Hopper GPUs reach the same fraction of their datasheet bandwidth.
  // Blackwell (B200, GB200) and Blackwell Ultra (B300, GB300) have no in-training measurement of these kernels.
  // Their fraction is FITTED as one general parameter: `moesim validate --fit
  // elementwise_hbm_fraction_blackwell=0.2:1` over groundtruth.csv gave 0.448 (framework_host_factor 4.5), then
  // 0.43 (at the host factor refitted to 4.32 at 0.448), then 0.428 (host 3.95, with MXFP8's scale kernels), then
  // 0.411 (host 4.0, with TE's fused grouped MLP on the rows whose recipes enable it), then 0.381 (with the x86 and
  // unbound-rank host factors and the framework factor at 2.8; docs/workload-model.md "Host"); 0.38 is used. The Blackwell
  // rows that move with it are listed in docs/kernel-model.md; the held-out check is there too. Before, Blackwell
  // used hbm_fraction
  // (0.806), which over-predicted nearly every Blackwell row.
  p.elementwise_hbm = {{A::hopper, (4096.0 * 7168 * 2 * 2 / (115e-6 - 2e-6)) / 3.35e12,
                        "kernels-sim/data/h800-trace: TE RMSNorm 4096 x 7168 BF16, 115 us median in DeepSeek's H800 "
                        "training trace = 1.04 TB/s of 3.35 after the 2 us fixed cost"},
                       {A::blackwell, 0.38, kBlackwellElementwiseFit},
                       {A::blackwell_ultra, 0.38, kBlackwellElementwiseFit}};
  // assumption: fixed device time per kernel (ramp-up, tail, grid launch on the GPU side). Host launch cost is
  // modelled by the engine, not here.
  p.kernel_fixed_s = 2e-6;

  // cuDNN SDPA, GQA 64/8, hd128, seq 4k-32k [S32] (hardware.md §5.2): each range is read as (value at 4k, value at
  // 32k) — assumption: throughput rises with sequence length — and the curve passes through both exactly.
  const std::string s32 = "hardware.md §5.2 cuDNN SDPA GQA 64/8 hd128, ";
  auto through = [](A a, D d, bool bwd, double lo, double hi, double peak, std::string src) {
    return attention_curve_through(a, d, bwd, 4096, lo, 32768, hi, peak, std::move(src));
  };
  p.attention = {
      through(A::hopper, D::bf16, false, 591, 702, 989.4, s32 + "H200 BF16 fwd 591-702 TF [S32]"),
      through(A::hopper, D::bf16, true, 474, 612, 989.4, s32 + "H200 BF16 bwd 474-612 TF [S32]"),
      through(A::hopper, D::fp8, false, 854, 1062, 1978.9, s32 + "H200 FP8 fwd 854-1062 TF [S32]"),
      through(A::hopper, D::fp8, true, 474, 612, 1978.9,
              "assumption: Hopper FP8 bwd = BF16 bwd throughput (474-612 TF [S32]); GB200 FP8 bwd is only 3-26% "
              "above BF16 bwd [S32]"),
      through(A::hopper, D::fp8_block, false, 854, 1062, 1978.9, "assumption: = Hopper FP8 fwd [S32]"),
      through(A::hopper, D::fp8_block, true, 474, 612, 1978.9, "assumption: = Hopper FP8 bwd (see above)"),
      through(A::blackwell, D::bf16, false, 1334, 1701, 2500, s32 + "GB200 BF16 fwd 1334-1701 TF [S32]"),
      through(A::blackwell, D::bf16, true, 1131, 1434, 2500, s32 + "GB200 BF16 bwd 1131-1434 TF [S32]"),
      through(A::blackwell, D::fp8, false, 1801, 2221, 5000, s32 + "GB200 FP8 fwd 1801-2221 TF [S32]"),
      through(A::blackwell, D::fp8, true, 1166, 1805, 5000, s32 + "GB200 FP8 bwd 1166-1805 TF [S32]"),
      through(A::blackwell, D::fp8_block, false, 1716, 2143, 5000, s32 + "GB200 MXFP8 fwd 1716-2143 TF [S32]"),
      through(A::blackwell, D::fp8_block, true, 1166, 1805, 5000, "assumption: MXFP8 bwd = GB200 FP8 bwd [S32]"),
      through(A::blackwell_ultra, D::bf16, false, 1672, 2014, 2500, s32 + "GB300 BF16 fwd 1672-2014 TF [S32]"),
      through(A::blackwell_ultra, D::bf16, true, 1195, 1559, 2500, s32 + "GB300 BF16 bwd 1195-1559 TF [S32]"),
      through(A::blackwell_ultra, D::fp8, false, 2324, 3157, 5000, s32 + "GB300 FP8 fwd 2324-3157 TF [S32]"),
      through(A::blackwell_ultra, D::fp8, true, 1309, 1926, 5000, s32 + "GB300 FP8 bwd 1309-1926 TF [S32]"),
      through(A::blackwell_ultra, D::fp8_block, false, 2324, 3157, 5000, "assumption: MXFP8 fwd = GB300 FP8 fwd [S32]"),
      through(A::blackwell_ultra, D::fp8_block, true, 1309, 1926, 5000, "assumption: MXFP8 bwd = GB300 FP8 bwd [S32]"),
  };
  // Older cuDNN releases on Blackwell. The curves above are cuDNN 9.19-9.27 kernels; cuDNN 9.18.0 (the NeMo 26.02
  // container's) is within 3 % of them on GB200 (cudnn-frontend gb200_918_only_cudnn/llama3.1_20260126_110503.csv:
  // BF16 causal 1297 / 1105 TF fwd / bwd at 4k, 1686 / 1441 at 32k). cuDNN 9.13.1 (the NeMo 25.11 container's;
  // 25.09 shipped 9.11) on B200 is slower at the same hd128 causal shape [S63]: BF16 fwd 1141 / bwd 833 TF at 4k,
  // 1515 / 1180 at 32k; FP8 fwd 1231 / bwd 972 at 4k, 1781 / 1582 at 32k (of B200's 2250 / 4500 TF peaks). They
  // apply to shapes that name a release below 9.18.0 (AttentionShape::cudnn_version). No MXFP8 or Blackwell Ultra
  // figure of those releases exists: those keep the curves above.
  const std::string s63 = "hardware.md §5.2 cuDNN 9.13.1 SDPA on B200, causal GQA 128/8 hd128 [S63], ";
  auto older = [&](D d, bool bwd, double lo, double hi, double peak, const std::string& what) {
    auto c = through(A::blackwell, d, bwd, lo, hi, peak, s63 + what);
    c.cudnn_below = 91800;
    return c;
  };
  p.attention.push_back(older(D::bf16, false, 1141.14, 1514.76, 2250, "BF16 fwd 1141-1515 TF"));
  p.attention.push_back(older(D::bf16, true, 832.907, 1180.25, 2250, "BF16 bwd 833-1180 TF"));
  p.attention.push_back(older(D::fp8, false, 1230.65, 1781.41, 4500, "FP8 fwd 1231-1781 TF"));
  p.attention.push_back(older(D::fp8, true, 972.284, 1582.24, 4500, "FP8 bwd 972-1582 TF"));
  return p;
}

// ---------------------------------------------------------------------------------------------------------------
// JSON

namespace {

using config::Bound;
using config::Json;
using config::ObjectReader;

bool in_unit_interval(ObjectReader& r, const char* key, double v) {
  if (v > 1.0) {
    r.error(key, "must be a fraction in (0, 1], got " + std::to_string(v));
    return false;
  }
  return true;
}

KernelEfficiencyParams read(const config::Document& doc, Diagnostics& diags) {
  KernelEfficiencyParams p;
  ObjectReader root(doc, diags);
  p.source = root.string("source");
  p.hbm_fraction = root.number("hbm_fraction");
  in_unit_interval(root, "hbm_fraction", p.hbm_fraction);
  std::set<std::string> seen_elementwise;
  for (auto& r : root.objects("elementwise_hbm")) {
    ElementwiseBandwidth e;
    const std::string a = r.choice("arch", arch_names());
    e.arch = parse_arch(a);
    e.fraction = r.number("fraction");
    in_unit_interval(r, "fraction", e.fraction);
    e.source = r.string("source");
    if (!seen_elementwise.insert(a).second) r.error("", "second elementwise bandwidth for " + a);
    p.elementwise_hbm.push_back(std::move(e));
  }
  p.kernel_fixed_s = root.number("kernel_fixed_us", Bound::non_negative) * 1e-6;
  p.grouped_gemm_overhead_rows = root.number("grouped_gemm_overhead_rows", Bound::non_negative);
  {
    auto r = root.object("per_expert_gemms");
    p.per_expert_gemms.kernel_s = r.number("kernel_us", Bound::non_negative) * 1e-6;
    p.per_expert_gemms.ceiling_scale = r.number("ceiling_scale", Bound::positive);
    in_unit_interval(r, "ceiling_scale", p.per_expert_gemms.ceiling_scale);
    p.per_expert_gemms.source = r.string("source");
  }

  std::set<std::pair<std::string, std::string>> seen_ceiling;
  for (auto& r : root.objects("gemm_ceilings")) {
    GemmCeiling c;
    const std::string a = r.choice("arch", arch_names()), d = r.choice("dtype", dtype_names());
    c.arch = parse_arch(a);
    c.dtype = parse_dtype(d);
    c.fraction = r.number("fraction");
    in_unit_interval(r, "fraction", c.fraction);
    c.source = r.string("source");
    if (!seen_ceiling.insert({a, d}).second) r.error("", "second GEMM ceiling for " + a + "/" + d);
    p.gemm_ceilings.push_back(std::move(c));
  }
  std::set<std::string> seen_tiling;
  for (auto& r : root.objects("gemm_tilings")) {
    GemmTiling t;
    const std::string a = r.choice("arch", arch_names());
    t.arch = parse_arch(a);
    t.tile_m = static_cast<int>(r.integer("tile_m"));
    t.tile_n = static_cast<int>(r.integer("tile_n"));
    t.sms_per_tile = static_cast<int>(r.integer("sms_per_tile"));
    t.source = r.string("source");
    if (!seen_tiling.insert(a).second) r.error("", "second GEMM tiling for " + a);
    p.gemm_tilings.push_back(std::move(t));
  }
  std::set<std::tuple<std::string, std::string, std::string>> seen_attention;
  for (auto& r : root.objects("attention")) {
    AttentionCurve c;
    const std::string a = r.choice("arch", arch_names()), d = r.choice("dtype", dtype_names());
    const std::string pass = r.choice("pass", {"fwd", "bwd"});
    c.arch = parse_arch(a);
    c.dtype = parse_dtype(d);
    c.backward = pass == "bwd";
    c.ceiling_fraction = r.number("ceiling_fraction");
    in_unit_interval(r, "ceiling_fraction", c.ceiling_fraction);
    c.half_seq = r.number("half_seq", Bound::non_negative);
    if (r.has("cudnn_below")) c.cudnn_below = static_cast<int>(r.integer("cudnn_below"));
    c.source = r.string("source");
    const std::string release = c.cudnn_below > 0 ? " (cudnn_below " + std::to_string(c.cudnn_below) + ")" : "";
    if (!seen_attention.insert({a, d, pass + release}).second)
      r.error("", "second attention curve for " + a + "/" + d + "/" + pass + release);
    p.attention.push_back(std::move(c));
  }
  return p;
}

KernelEfficiencyParams finish(const config::Document& doc, Diagnostics& diags) {
  diags.throw_if_any();                         // parse / open errors: nothing to read
  KernelEfficiencyParams p = read(doc, diags);  // readers finish (unknown keys) when they go out of scope
  diags.throw_if_any();
  return p;
}

}  // namespace

KernelEfficiencyParams load_kernel_efficiency_params(const std::filesystem::path& file) {
  Diagnostics diags;
  const config::Document doc = config::load_file(file, diags);
  return finish(doc, diags);
}

KernelEfficiencyParams parse_kernel_efficiency_params(const std::string& json_text, const std::string& name) {
  Diagnostics diags;
  const config::Document doc = config::parse_text(json_text, name, diags);
  return finish(doc, diags);
}

std::string to_json_text(const KernelEfficiencyParams& p) {
  Json j;
  j["source"] = p.source;
  j["hbm_fraction"] = p.hbm_fraction;
  j["elementwise_hbm"] = Json::array();
  for (const auto& e : p.elementwise_hbm)
    j["elementwise_hbm"].push_back({{"arch", to_string(e.arch)}, {"fraction", e.fraction}, {"source", e.source}});
  j["kernel_fixed_us"] = p.kernel_fixed_s * 1e6;
  j["grouped_gemm_overhead_rows"] = p.grouped_gemm_overhead_rows;
  j["per_expert_gemms"] = {{"kernel_us", p.per_expert_gemms.kernel_s * 1e6},
                           {"ceiling_scale", p.per_expert_gemms.ceiling_scale},
                           {"source", p.per_expert_gemms.source}};
  j["gemm_ceilings"] = Json::array();
  for (const auto& c : p.gemm_ceilings)
    j["gemm_ceilings"].push_back(
        {{"arch", to_string(c.arch)}, {"dtype", to_string(c.dtype)}, {"fraction", c.fraction}, {"source", c.source}});
  j["gemm_tilings"] = Json::array();
  for (const auto& t : p.gemm_tilings)
    j["gemm_tilings"].push_back({{"arch", to_string(t.arch)},
                                 {"tile_m", t.tile_m},
                                 {"tile_n", t.tile_n},
                                 {"sms_per_tile", t.sms_per_tile},
                                 {"source", t.source}});
  j["attention"] = Json::array();
  for (const auto& c : p.attention) {
    Json row = {{"arch", to_string(c.arch)},
                {"dtype", to_string(c.dtype)},
                {"pass", c.backward ? "bwd" : "fwd"},
                {"ceiling_fraction", c.ceiling_fraction},
                {"half_seq", c.half_seq},
                {"source", c.source}};
    if (c.cudnn_below > 0) row["cudnn_below"] = c.cudnn_below;
    j["attention"].push_back(std::move(row));
  }
  return j.dump(2);
}

}  // namespace moesim::kernels
