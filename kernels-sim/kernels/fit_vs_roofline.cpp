#include "kernels/fit_vs_roofline.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "kernels/fit/features.hpp"
#include "kernels/roofline_model.hpp"

namespace moesim::kernels {
namespace {

std::optional<DType> dtype_of(const std::string& d) {
  if (d == "bf16" || d == "bf16_fa2") return DType::bf16;
  if (d == "fp8_tensor") return DType::fp8;
  if (d == "fp8_block128" || d == "mxfp8") return DType::fp8_block;
  return std::nullopt;
}

// Calibration kernel -> the builder's MemoryBound name (kernels/fitted_model.cpp's table, read backwards).
const std::map<std::string, std::string>& memory_bound_names() {
  static const std::map<std::string, std::string> names = {{"permute", "permute"},       {"unpermute", "unpermute"},
                                                           {"rmsnorm", "rmsnorm"},       {"swiglu", "swiglu"},
                                                           {"quantize_fp8", "quantize"}, {"memcpy", "memcpy"}};
  return names;
}

// Nearest-rank quantile of a sorted, non-empty vector.
double quantile(const std::vector<double>& sorted, double q) {
  return sorted[static_cast<std::size_t>(std::floor(q * static_cast<double>(sorted.size() - 1) + 0.5))];
}

// `signed_errors`: (predicted - measured) / measured per record.
RelativeErrors summarise(std::vector<double> signed_errors) {
  RelativeErrors r;
  r.n = static_cast<int>(signed_errors.size());
  if (signed_errors.empty()) return r;
  std::vector<double> e;
  for (double x : signed_errors) e.push_back(std::abs(x));
  std::sort(e.begin(), e.end());
  std::sort(signed_errors.begin(), signed_errors.end());
  r.median = quantile(e, 0.5);
  r.p90 = quantile(e, 0.9);
  r.max = e.back();
  r.median_signed = quantile(signed_errors, 0.5);
  return r;
}

}  // namespace

std::optional<Kernel> kernel_of_record(const fit::CalibrationRecord& r, const fit::GpuPeaks& peaks) {
  const auto d = [&](const char* name) { return r.dim(name); };
  if (r.kernel == "gemm" || r.kernel == "grouped_gemm" || r.kernel == "attention_fwd" || r.kernel == "attention_bwd") {
    const auto dtype = dtype_of(r.dtype);
    if (!dtype) return std::nullopt;
    const GemmPass pass = r.pass == "dgrad" ? GemmPass::dgrad : r.pass == "wgrad" ? GemmPass::wgrad : GemmPass::fwd;
    if (r.kernel == "gemm") return Gemm{d("m"), d("n"), d("k"), *dtype, pass};
    if (r.kernel == "grouped_gemm") return GroupedGemm{r.groups, d("n"), d("k"), *dtype, r.per_expert_kernels, pass};
    AttentionShape a;
    a.batch = d("batch");
    a.heads = d("heads");
    a.kv_heads = r.has_dim("kv_heads") ? d("kv_heads") : a.heads;  // GQA records may name their key/value heads
    a.seq_q = d("seq_q");
    a.seq_kv = d("seq_kv");
    a.d_qk = d("head_dim_qk");
    a.d_v = d("head_dim_v");
    a.causal = d("causal") != 0;
    a.dtype = *dtype;
    if (r.kernel == "attention_fwd") return AttentionFwd{a};
    return AttentionBwd{a};
  }
  const auto name = memory_bound_names().find(r.kernel);
  if (name == memory_bound_names().end()) return std::nullopt;
  // The byte feature is bytes / HBM bandwidth in microseconds.
  const double bytes = fit::feature_vector(r, peaks)[1] * peaks.hbm_bytes_per_s() / 1e6;
  return MemoryBound{bytes, name->second};
}

std::vector<FamilyComparison> compare_fit_with_roofline(const fit::FitFile& f, const fit::CalibrationData& data,
                                                        const DeviceRates& device,
                                                        const KernelEfficiencyParams& params) {
  const RooflineKernelCostModel roofline(params);
  std::vector<FamilyComparison> out;
  for (const auto& fam : f.families) {
    std::vector<double> fit_errors, roofline_errors;
    for (const auto& r : data.records) {
      if (!r.skipped.empty() || fit::family_key(r) != fam.family) continue;
      const double measured = r.time.median_us;
      fit_errors.push_back((fam.predict_us(fit::feature_vector(r, f.peaks)) - measured) / measured);
      if (const auto k = kernel_of_record(r, f.peaks))
        roofline_errors.push_back((roofline.seconds(*k, device) * 1e6 - measured) / measured);
    }
    out.push_back({fam.family, summarise(fit_errors), summarise(roofline_errors)});
  }
  return out;
}

}  // namespace moesim::kernels
