#pragma once
// FittedKernelCostModel: kernel times from a GPU's fit file (kernels-sim/fits/<gpu>.json, written by
// `moesim fit`), with the roofline model for every kernel the fit does not cover.
//
// Which fit family prices a kernel (fit_family_for):
//   Gemm          "gemm/<dtype>"            dims m, n, k
//   GroupedGemm   "grouped_gemm/<dtype>"    dims n, k; groups = tokens_per_expert (empty experts included);
//                                           one grouped kernel; per_expert_kernels (TE's loop of cuBLAS calls)
//                                           "grouped_gemm/<dtype>+per_expert", never the one-kernel family
//   a GEMM's dgrad / wgrad pass looks for "<family>+dgrad" / "<family>+wgrad" first, then the plain family
//   AttentionFwd  "attention_fwd/<dtype>"   dims batch, heads, seq_q, seq_kv, head_dim_qk, head_dim_v, causal;
//   AttentionBwd  "attention_bwd/<dtype>"   sliding-window attention (0 < window < seq_kv) has no fit feature
//                                           for the window and always falls back
//   MemoryBound   by name: rmsnorm, q_norm, kv_norm, final_norm, mtp_norms -> "rmsnorm/bf16";
//                 swiglu, shared_swiglu -> "swiglu/bf16"; permute -> "permute/bf16"; unpermute ->
//                 "unpermute/bf16"; quantize -> "quantize_fp8/fp8_e4m3"; memcpy -> "memcpy/bytes". Every
//                 other name (all *_bwd kernels, rope, embedding, cross_entropy, router_topk, router_bwd,
//                 adam) falls back; router_topk because the builder's stands for the whole fused router.
// dtype names are the calibration records' (kernels-sim/data/README.md): bf16 -> "bf16", fp8 -> "fp8_tensor",
// fp8_block -> "fp8_block128" on Hopper and "mxfp8" on Blackwell(-Ultra); fp4 has no fit family (falls back).
// Families the simulator never looks up stay in a fit file as data: FP8 GEMMs with fast accumulation
// ("gemm/fp8_tensor+fast_accum"; the simulator's FP8 GEMMs use the split-accumulation family, Transformer Engine's
// choice for dgrad and wgrad), PyTorch's FlashAttention-2 ("attention_*/bf16_fa2"); "*_reference" families are
// never fitted at all.
//
// Evaluation, per family looked for (most specific first): the fit file's measured table (fit/measured_table.hpp)
// first, its time exactly where it holds the kernel's shape, interpolated between the two measured neighbours of
// the shape along the family's axis; the fitted coefficients only off the table. Then:
// the kernel is turned into a calibration record of the fit's GPU and priced with the fitter's own
// feature_vector() and FamilyFit::predict_us(), so a covered kernel gets exactly the fit's prediction, except
// that the result is clamped to never fall below the roofline bound max(FLOP / peak(dtype), minimum HBM bytes /
// HBM bandwidth) of the device being simulated (explain() says when it was). Memory-bound kernels carry only a
// byte count, so their features are {1, bytes / HBM bandwidth of the fit's peaks} directly.
//
// A fit belongs to one GPU: seconds() on a device the fit does not match (fit_matches_gpu) is a ConfigError.
#include <optional>
#include <string>
#include <vector>

#include "kernels/fit/fit_file.hpp"
#include "kernels/kernel_cost_model.hpp"
#include "kernels/roofline_model.hpp"

namespace moesim::kernels {

// The fit family ("gemm/bf16") that prices `kernel` on a GPU of architecture `arch`, or nullopt when no fit
// family can (see the table above). Says nothing about whether a given fit file has that family.
std::optional<std::string> fit_family_for(const Kernel& kernel, Arch arch);
// The families explain() looks for, most specific first: a GEMM's gradient pass family ("gemm/bf16+wgrad"), then
// fit_family_for's. Empty when fit_family_for has none.
std::vector<std::string> fit_family_candidates(const Kernel& kernel, Arch arch);

// The GpuPeaks table row (kernels/fit/gpu_peaks.cpp) a catalog GPU name maps to: find_gpu_peaks on the
// upper-cased name ("h200-sxm" -> "H200", "gb200" -> "GB200"); empty when there is no row (e.g. "b300").
std::string peaks_key_for_gpu(const std::string& gpu_name);

// Whether `fit` was made on the GPU called `gpu_name` in the catalog (SystemSpec::gpu.name, DeviceRates::name):
// its peaks row is the fit's peaks.key. H100 and H800 are different rows and never share a fit.
bool fit_matches_gpu(const fit::FitFile& fit, const std::string& gpu_name);

// One prediction and where it came from.
struct FittedKernelTime {
  double seconds = 0;
  std::string family;  // the family that priced it (or, for the roofline, the first looked for; empty: none)
  KernelSource source = KernelSource::roofline;
  bool from_fit = false;     // source is fit: the fitted coefficients priced it
  double fit_seconds = 0;    // the fit's own prediction (predict_us / 1e6); 0 for a fallback
  double bound_seconds = 0;  // roofline bound on the device; 0 for a fallback
  bool clamped = false;      // the fit predicted less than the bound, and the bound was used
};

class FittedKernelCostModel final : public KernelCostModel {
 public:
  // `label` names the fit in name() and messages (its path). The fallback is the built-in roofline unless given.
  FittedKernelCostModel(fit::FitFile fit, std::string label,
                        RooflineKernelCostModel fallback = RooflineKernelCostModel());

  double seconds(const Kernel& kernel, const DeviceRates& device) const override;
  KernelSource source(const Kernel& kernel, const DeviceRates& device) const override;
  // "fit kernels-sim/fits/h200-sxm.json (gemm, grouped_gemm) + roofline fallback": the kernels with at least one
  // fitted family, in fit-file order ("no fitted families" when the fit has none).
  std::string name() const override;
  FittedKernelTime explain(const Kernel& kernel, const DeviceRates& device) const;

  const fit::FitFile& fit() const { return fit_; }
  const std::string& label() const { return label_; }

 private:
  fit::FitFile fit_;
  fit::MeasuredTable table_;
  std::string label_;
  RooflineKernelCostModel fallback_;
};

}  // namespace moesim::kernels
