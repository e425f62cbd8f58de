#include "kernels/fitted_model.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/error.hpp"
#include "kernels/fit/features.hpp"
#include "kernels/fit/gpu_peaks.hpp"
#include "kernels/fit/record.hpp"

namespace moesim::kernels {
namespace {

constexpr double us_per_s = 1e6;

// Record dtype names as kernels-sim/cuda writes them (kernels-sim/cuda/README.md, gemm.jsonl row).
std::optional<std::string> record_dtype(DType d, Arch arch) {
  switch (d) {
    case DType::bf16: return "bf16";
    case DType::fp8: return "fp8_tensor";
    case DType::fp8_block: return arch == Arch::hopper ? "fp8_block128" : "mxfp8";
    case DType::fp4: return std::nullopt;  // no calibration kernel or peak row for NVFP4 yet
  }
  return std::nullopt;
}

// MemoryBound kernel names (src/workload/layer_costs.cpp, step_builder.cpp) -> the family of the calibration
// kernel that does the same work (kernels-sim/cuda/moe_kernels.cu writes these kernel/dtype pairs), counted in the
// same bytes (permute, unpermute: kernels/token_pass_bytes.hpp). router_topk is not here: the builder's
// "router_topk" stands for the fused router's tens of kernels over T x E x 24 bytes, the calibration's for one
// top-k kernel over T x E x 4 + T x top_k x 8 bytes, so a fit of one cannot price the other.
const std::map<std::string, std::string>& memory_bound_families() {
  static const std::map<std::string, std::string> table = {
      {"rmsnorm", "rmsnorm/bf16"},           {"q_norm", "rmsnorm/bf16"},    {"kv_norm", "rmsnorm/bf16"},
      {"final_norm", "rmsnorm/bf16"},        {"mtp_norms", "rmsnorm/bf16"}, {"swiglu", "swiglu/bf16"},
      {"shared_swiglu", "swiglu/bf16"},      {"permute", "permute/bf16"},   {"unpermute", "unpermute/bf16"},
      {"quantize", "quantize_fp8/fp8_e4m3"}, {"memcpy", "memcpy/bytes"},
  };
  return table;
}

// Shapes a fit's attention records do not describe — a sliding window, or work split into calls over key blocks
// (CP ring steps) — go to the roofline, which models both.
bool windowed(const AttentionShape& a) {
  return (a.window > 0 && a.window < a.seq_kv) || (a.keys_per_call > 0 && a.keys_per_call < a.seq_kv);
}

// The kernel as a calibration record of the fit's GPU, so the fitter's feature_vector prices it exactly as it
// priced the measurements. Only called for kernels with a family (not MemoryBound).
fit::CalibrationRecord to_record(const Kernel& kernel, const std::string& family, const fit::FitFile& f) {
  fit::CalibrationRecord r;
  const auto slash = family.find('/');
  r.kernel = family.substr(0, slash);
  r.dtype = fit::base_dtype(family.substr(slash + 1));  // the features depend on the dtype, not on the suffixes
  r.gpu.name = f.gpu;
  r.gpu.sm_count = f.peaks.sm_count;  // whole GPU (sms_used 0)
  r.location = "kernel " + describe(kernel);
  struct V {
    fit::CalibrationRecord& r;
    void operator()(const Gemm& g) const { r.shape = {{"m", g.m}, {"n", g.n}, {"k", g.k}}; }
    void operator()(const GroupedGemm& g) const {
      r.shape = {{"n", g.n}, {"k", g.k}};
      r.groups = g.tokens_per_expert;
    }
    void attention(const AttentionShape& a) const {
      r.shape = {
          {"batch", a.batch},    {"heads", a.heads},          {"kv_heads", a.kv_heads > 0 ? a.kv_heads : a.heads},
          {"seq_q", a.seq_q},    {"seq_kv", a.seq_kv},        {"head_dim_qk", a.d_qk},
          {"head_dim_v", a.d_v}, {"causal", a.causal ? 1 : 0}};
    }
    void operator()(const AttentionFwd& a) const { attention(a); }
    void operator()(const AttentionBwd& a) const { attention(a); }
    void operator()(const MemoryBound&) const {
      throw InternalError("memory-bound kernels are priced without a record");
    }
  };
  std::visit(V{r}, kernel);
  return r;
}

// Roofline bound on the simulated device: no kernel runs faster than its FLOPs at the dtype's peak or its
// minimum HBM traffic at the datasheet bandwidth.
double roofline_bound_s(const Kernel& kernel, const DeviceRates& device) {
  struct Peak {
    const DeviceRates& d;
    double operator()(const Gemm& g) const { return d.peak_flops(g.dtype); }
    double operator()(const GroupedGemm& g) const { return d.peak_flops(g.dtype); }
    double operator()(const AttentionFwd& a) const { return d.peak_flops(a.dtype); }
    double operator()(const AttentionBwd& a) const { return d.peak_flops(a.dtype); }
    double operator()(const MemoryBound&) const { return 0; }
  };
  const double work = flops(kernel);
  const double peak = std::visit(Peak{device}, kernel);
  const double compute = work > 0 && peak > 0 ? work / peak : 0;
  return std::max(compute, hbm_bytes(kernel) / device.hbm_Bps);
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::optional<std::string> fit_family_for(const Kernel& kernel, Arch arch) {
  struct V {
    Arch arch;
    std::optional<std::string> with(const char* name, DType d) const {
      const auto dt = record_dtype(d, arch);
      if (!dt) return std::nullopt;
      return std::string(name) + "/" + *dt;
    }
    std::optional<std::string> operator()(const Gemm& g) const { return with("gemm", g.dtype); }
    // One grouped kernel and TE's per-expert loop of cuBLAS calls are different measurements: the loop has a
    // family of its own ("+per_expert"), never priced by a one-kernel fit.
    std::optional<std::string> operator()(const GroupedGemm& g) const {
      const auto f = with("grouped_gemm", g.dtype);
      return f && g.per_expert_kernels ? *f + "+per_expert" : f;
    }
    std::optional<std::string> operator()(const AttentionFwd& a) const {
      return windowed(a) ? std::nullopt : with("attention_fwd", a.dtype);
    }
    std::optional<std::string> operator()(const AttentionBwd& a) const {
      return windowed(a) ? std::nullopt : with("attention_bwd", a.dtype);
    }
    std::optional<std::string> operator()(const MemoryBound& m) const {
      const auto& t = memory_bound_families();
      const auto it = t.find(m.name);
      if (it == t.end()) return std::nullopt;
      return it->second;
    }
  };
  return std::visit(V{arch}, kernel);
}

std::vector<std::string> fit_family_candidates(const Kernel& kernel, Arch arch) {
  const auto base = fit_family_for(kernel, arch);
  if (!base) return {};
  GemmPass pass = GemmPass::fwd;
  if (const auto* g = std::get_if<Gemm>(&kernel)) pass = g->pass;
  if (const auto* g = std::get_if<GroupedGemm>(&kernel)) pass = g->pass;
  if (pass == GemmPass::fwd) return {*base};
  return {*base + (pass == GemmPass::dgrad ? "+dgrad" : "+wgrad"), *base};
}

std::string peaks_key_for_gpu(const std::string& gpu_name) {
  const auto p = fit::find_gpu_peaks(upper(gpu_name));
  return p ? p->key : std::string();
}

bool fit_matches_gpu(const fit::FitFile& fit, const std::string& gpu_name) {
  const std::string key = peaks_key_for_gpu(gpu_name);
  return !key.empty() && key == fit.peaks.key;
}

FittedKernelCostModel::FittedKernelCostModel(fit::FitFile fit, std::string label, RooflineKernelCostModel fallback)
    : fit_(std::move(fit)), table_(fit_.table, fit_.peaks), label_(std::move(label)), fallback_(std::move(fallback)) {
  // A family is evaluated with today's feature definitions, so its coefficients must be exactly those features
  // (a hand-edited file, or one from an older fitter, must not be evaluated with the wrong vector).
  Diagnostics diags;
  for (std::size_t i = 0; i < fit_.families.size(); ++i) {
    const auto& f = fit_.families[i];
    const std::string where = "/families/" + std::to_string(i);
    if (f.family != f.kernel + "/" + f.dtype)
      diags.add(label_, where, "family \"" + f.family + "\" is not kernel/dtype \"" + f.kernel + "/" + f.dtype + "\"");
    const auto spec = fit::family_for_kernel(f.kernel);
    if (!spec) {
      diags.add(label_, where, "kernel \"" + f.kernel + "\" has no cost-model family (kernels/fit/features.hpp)");
      continue;
    }
    if (spec->model != f.model)
      diags.add(label_, where, "model \"" + f.model + "\" of " + f.family + ", expected \"" + spec->model + "\"");
    std::string expected, got;
    for (const auto& s : spec->features) expected += (expected.empty() ? "" : ", ") + s.name;
    for (const auto& c : f.coefficients) got += (got.empty() ? "" : ", ") + c.name;
    if (expected != got)
      diags.add(
          label_, where + "/coefficients",
          f.family + " has coefficients [" + got + "], the " + spec->model + " model has features [" + expected + "]");
  }
  diags.throw_if_any();
}

std::string FittedKernelCostModel::name() const {
  std::vector<std::string> kernels;
  for (const auto& f : fit_.families)
    if (std::find(kernels.begin(), kernels.end(), f.kernel) == kernels.end()) kernels.push_back(f.kernel);
  std::string list;
  for (const auto& k : kernels) list += (list.empty() ? "" : ", ") + k;
  // A fallback over changed constants (--param) says so; the built-in one keeps the short name.
  const auto& source = fallback_.params().source;
  const std::string fallback =
      source == builtin_kernel_efficiency().source ? "roofline fallback" : "roofline fallback (" + source + ")";
  return "fit " + label_ + " (" + (list.empty() ? std::string("no fitted families") : list) + ") + " + fallback;
}

double FittedKernelCostModel::seconds(const Kernel& kernel, const DeviceRates& device) const {
  return explain(kernel, device).seconds;
}

KernelSource FittedKernelCostModel::source(const Kernel& kernel, const DeviceRates& device) const {
  return explain(kernel, device).source;
}

FittedKernelTime FittedKernelCostModel::explain(const Kernel& kernel, const DeviceRates& device) const {
  check_device_rates(device);
  if (!fit_matches_gpu(fit_, device.name))
    throw ConfigError(
        {{label_, "/gpu",
          "this fit is for " + fit_.gpu + " (peaks row " + fit_.peaks.key + "), not for GPU \"" + device.name + "\"" +
              (peaks_key_for_gpu(device.name).empty() ? std::string(" (which has no peaks row)")
                                                      : " (peaks row " + peaks_key_for_gpu(device.name) + ")")}});
  FittedKernelTime t;
  const fit::FamilyFit* ff = nullptr;
  const bool has_shape = !std::holds_alternative<MemoryBound>(kernel);  // memory-bound kernels carry only bytes
  for (const auto& candidate : fit_family_candidates(kernel, device.arch)) {
    if (t.family.empty()) t.family = candidate;
    if (has_shape && table_.has_family(candidate)) {
      const auto hit = table_.lookup(candidate, to_record(kernel, candidate, fit_));
      if (hit.hit != fit::TableHit::none) {
        t.family = candidate;
        t.source = hit.hit == fit::TableHit::exact ? KernelSource::table : KernelSource::interpolated;
        t.seconds = hit.time_us / us_per_s;
        return t;
      }
    }
    if ((ff = fit_.find(candidate))) {
      t.family = candidate;
      break;
    }
  }
  if (!ff) {
    t.seconds = fallback_.seconds(kernel, device);
    return t;
  }
  std::vector<double> features;
  if (const auto* mb = std::get_if<MemoryBound>(&kernel)) {
    if (!(mb->bytes >= 0)) throw InternalError("memory-bound kernel \"" + mb->name + "\" with negative bytes");
    features = {1.0, mb->bytes / fit_.peaks.hbm_bytes_per_s() * us_per_s};
  } else {
    features = fit::feature_vector(to_record(kernel, t.family, fit_), fit_.peaks);
  }
  t.from_fit = true;
  t.source = KernelSource::fit;
  t.fit_seconds = ff->predict_us(features) / us_per_s;
  t.bound_seconds = roofline_bound_s(kernel, device);
  t.clamped = t.fit_seconds < t.bound_seconds;
  t.seconds = t.clamped ? t.bound_seconds : t.fit_seconds;
  return t;
}

}  // namespace moesim::kernels
