#include "kernels/fit/features.hpp"

#include "kernels/token_pass_bytes.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace moesim::kernels::fit {
namespace {

constexpr double us_per_s = 1e6;

// Work of one kernel call: math (FLOPs) and the HBM traffic of the byte feature; `floor_bytes` is the least
// traffic any kernel needs (the roofline bound's), below `bytes` only where the feature counts the step builder's
// way (permute, unpermute: kernels/token_pass_bytes.hpp). Negative = same as bytes.
struct Work {
  double flops = 0;
  double bytes = 0;
  double floor_bytes = -1;
  double floor() const { return floor_bytes >= 0 ? floor_bytes : bytes; }
};

double ceil_div(double a, double b) { return std::ceil(a / b); }

// Fraction of the GPU a kernel ran on (communication kernels holding SMs leave the rest to compute).
double sm_fraction(const CalibrationRecord& r) {
  if (r.sms_used <= 0 || r.gpu.sm_count <= 0) return 1.0;
  return std::min(1.0, static_cast<double>(r.sms_used) / static_cast<double>(r.gpu.sm_count));
}

double sms_available(const CalibrationRecord& r, const GpuPeaks& p) {
  if (r.sms_used > 0) return static_cast<double>(r.sms_used);
  return static_cast<double>(r.gpu.sm_count > 0 ? r.gpu.sm_count : p.sm_count);
}

[[noreturn]] void bad_record(const CalibrationRecord& r, const std::string& message) {
  throw ConfigError({{r.location, "", message}});
}

double peak_flops(const CalibrationRecord& r, const GpuPeaks& p) {
  const std::string dtype = r.kernel.rfind("attention", 0) == 0 ? std::string("bf16") : r.dtype;
  const double peak = p.tensor_flops_per_s(dtype);
  if (!(peak > 0))
    bad_record(r, "no tensor-core peak for dtype \"" + r.dtype + "\" on " + p.key +
                      " (see kernels/fit/gpu_peaks.cpp); a measurement of it is unphysical or mislabelled");
  return peak * sm_fraction(r);
}

// Output is BF16 in every GEMM the calibration program times (kernels-sim/cuda/README.md).
constexpr double gemm_out_bytes = 2;

Work work_of(const CalibrationRecord& r) {
  const auto d = [&](const char* n) { return static_cast<double>(r.dim(n)); };
  const double e = element_bytes(r.dtype);
  const std::string& k = r.kernel;
  Work w;
  if (k == "gemm") {
    w.flops = 2 * d("m") * d("n") * d("k");
    w.bytes = (d("m") * d("k") + d("k") * d("n")) * e + d("m") * d("n") * gemm_out_bytes;
  } else if (k == "grouped_gemm") {
    for (auto rows : r.groups) {
      const double m = static_cast<double>(rows);
      w.flops += 2 * m * d("n") * d("k");
      w.bytes += m * d("k") * e + m * d("n") * gemm_out_bytes + (rows > 0 ? d("k") * d("n") * e : 0.0);
    }
  } else if (k == "attention_fwd" || k == "attention_bwd") {
    const double bh = d("batch") * d("heads");
    const double sq = d("seq_q"), skv = d("seq_kv"), dqk = d("head_dim_qk"), dv = d("head_dim_v");
    const double causal = r.dim("causal") != 0 ? 0.5 : 1.0;
    // Forward: S = QK^T (2*sq*skv*dqk) and O = PV (2*sq*skv*dv). Backward recomputes S and adds dV, dP, dQ, dK:
    // 2.5x the forward matmul FLOPs (the FlashAttention papers' accounting).
    const double fwd = 2 * bh * sq * skv * (dqk + dv) * causal;
    const double io_fwd = bh * (sq * dqk + skv * dqk + skv * dv + sq * dv) * 2;  // q, k, v in; o out (BF16)
    if (k == "attention_fwd") {
      w.flops = fwd;
      w.bytes = io_fwd;
    } else {
      w.flops = 2.5 * fwd;
      w.bytes = io_fwd + bh * (sq * dv + sq * dqk + skv * dqk + skv * dv) * 2;  // + dO in; dq, dk, dv out
    }
  } else if (k == "permute" || k == "unpermute") {
    // The step builder's count (every routed copy read and written once), so a fitted coefficient prices the
    // builder's permute and unpermute kernels in the units it hands them; the floor is the least traffic (each
    // token read once and its top_k copies written, or the reverse).
    w.bytes = routed_copy_pass_bytes(d("tokens"), d("top_k"), d("hidden"), e);
    w.floor_bytes = min_permute_bytes(d("tokens"), d("top_k"), d("hidden"), e);
  } else if (k == "router_topk") {
    // Scores read once; top_k indices (int32) and weights (fp32) written.
    w.bytes = d("tokens") * d("experts") * e + d("tokens") * d("top_k") * 8;
  } else if (k == "rmsnorm") {
    w.bytes = 2 * d("tokens") * d("hidden") * e + d("hidden") * e;
  } else if (k == "swiglu") {
    w.bytes = 3 * d("tokens") * d("ffn") * e;  // gate and up in, product out
  } else if (k == "quantize_fp8") {
    // BF16 in, FP8 out, one fp32 scale per 128 elements of a row.
    w.bytes = d("rows") * d("cols") * 3 + d("rows") * ceil_div(d("cols"), 128) * 4;
  } else if (k == "memcpy") {
    w.bytes = 2 * d("bytes");  // read and write
  } else {
    bad_record(r, "kernel \"" + k + "\" has no cost model");
  }
  return w;
}

}  // namespace

double element_bytes(const std::string& dtype) {
  if (dtype == "fp32") return 4;
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "mxfp8" || dtype.rfind("fp8", 0) == 0) return 1;
  return 2;
}

std::string family_dtype(const CalibrationRecord& r) {
  std::string d = r.fast_accum.value_or(false) ? r.dtype + "+fast_accum" : r.dtype;
  if (r.per_expert_kernels) d += "+per_expert";
  // A forward (or an unstated pass) is the plain family; the gradients run other kernels and layouts (TE's NN and
  // NT cuBLAS calls, a weight gradient accumulating into an FP32 main gradient) and are priced on their own.
  if (r.pass == "dgrad" || r.pass == "wgrad") d += "+" + r.pass;
  // In a Megatron step the weight gradient accumulates into the FP32 main gradient (gradient_accumulation_fusion,
  // main grads in FP32), so the "+wgrad" family is that call; a table's other output dtype (TE's BF16-output NT
  // call: less output traffic; on the SimuMax B200 shapes timed both ways the FP32 call is a median 7 % slower,
  // grouped 35 %) is fitted apart and not priced.
  if (r.pass == "wgrad" && !r.out_dtype.empty() && r.out_dtype != "fp32") d += "+out_" + r.out_dtype;
  return d;
}

std::string base_dtype(const std::string& family_dtype) { return family_dtype.substr(0, family_dtype.find('+')); }

std::string family_key(const CalibrationRecord& r) { return r.kernel + "/" + family_dtype(r); }

std::optional<FamilySpec> family_for_kernel(const std::string& kernel) {
  const FeatureSpec constant{"constant", "us", "1 (launch and fixed per-call cost)"};
  const FeatureSpec flops{"flops_at_peak", "1",
                          "FLOPs / (dense tensor-core peak of the dtype x sms_used/sm_count), in us"};
  const FeatureSpec bytes{"bytes_at_hbm_bw", "1", "ideal HBM bytes / HBM peak bandwidth, in us"};
  if (kernel == "gemm")
    return FamilySpec{"gemm",
                      {constant,
                       flops,
                       bytes,
                       {"wave_waste_at_peak", "1",
                        "(ceil(tiles/SMs)*SMs - tiles) * 2*128*128*k / peak, tiles = ceil(m/128)*ceil(n/128), in us"}}};
  if (kernel == "grouped_gemm")
    return FamilySpec{
        "grouped_gemm",
        {constant,
         flops,
         bytes,
         {"tile_padding_at_peak", "1", "sum over groups (ceil(rows/128)*128 - rows) * 2*n*k / peak, in us"},
         {"groups", "us", "number of groups (per-group setup cost)"}}};
  if (kernel == "attention_fwd" || kernel == "attention_bwd") return FamilySpec{"attention", {constant, flops, bytes}};
  static const std::vector<std::string> memory_bound = {"permute", "unpermute",    "router_topk", "rmsnorm",
                                                        "swiglu",  "quantize_fp8", "memcpy"};
  if (std::find(memory_bound.begin(), memory_bound.end(), kernel) != memory_bound.end())
    return FamilySpec{"memory_bound", {constant, bytes}};
  return std::nullopt;
}

std::vector<double> feature_vector(const CalibrationRecord& r, const GpuPeaks& p) {
  const auto spec = family_for_kernel(r.kernel);
  if (!spec) bad_record(r, "kernel \"" + r.kernel + "\" has no cost model");
  const Work w = work_of(r);
  const double bw = p.hbm_bytes_per_s();
  const double t_bytes = w.bytes / bw * us_per_s;
  if (spec->model == "memory_bound") return {1.0, t_bytes};
  const double peak = peak_flops(r, p);
  const double t_flops = w.flops / peak * us_per_s;
  if (spec->model == "attention") return {1.0, t_flops, t_bytes};
  const double n = static_cast<double>(r.dim("n")), k = static_cast<double>(r.dim("k"));
  const double tile_flops = 2.0 * gemm_tile * gemm_tile * k;
  if (spec->model == "gemm") {
    const double tiles = ceil_div(static_cast<double>(r.dim("m")), gemm_tile) * ceil_div(n, gemm_tile);
    const double sms = sms_available(r, p);
    const double waste_tiles = ceil_div(tiles, sms) * sms - tiles;
    return {1.0, t_flops, t_bytes, waste_tiles * tile_flops / peak * us_per_s};
  }
  // grouped_gemm
  double padding = 0;
  for (auto rows : r.groups) {
    const double m = static_cast<double>(rows);
    padding += (ceil_div(m, gemm_tile) * gemm_tile - m) * 2 * n * k;
  }
  return {1.0, t_flops, t_bytes, padding / peak * us_per_s, static_cast<double>(r.groups.size())};
}

double roofline_bound_us(const CalibrationRecord& r, const GpuPeaks& p) {
  const auto spec = family_for_kernel(r.kernel);
  if (!spec) return 0;
  const Work w = work_of(r);
  const double t_bytes = w.floor() / p.hbm_bytes_per_s() * us_per_s;
  if (spec->model == "memory_bound") return t_bytes;
  return std::max(t_bytes, w.flops / peak_flops(r, p) * us_per_s);
}

}  // namespace moesim::kernels::fit
