#pragma once
// Cost-model families and their feature vectors. A family is one kernel name with one dtype ("gemm/bf16",
// "rmsnorm/bf16"); its model is linear in the features, time_us = sum_i c_i * f_i(record, peaks), and every
// feature is itself a time in microseconds, so each coefficient is dimensionless (except the constant and
// per-group terms, which are microseconds) and c = 1 means "runs at the peak rate". Features:
//
//   dense GEMM (gemm):          1, flops/peak, bytes/hbm_bw, wave_waste_flops/peak
//   grouped GEMM (grouped_gemm): 1, flops/peak, bytes/hbm_bw, tile_padding_flops/peak, groups
//   attention (attention_fwd/_bwd): 1, flops/peak_bf16, bytes/hbm_bw
//   memory-bound (permute, unpermute, router_topk, rmsnorm, swiglu, quantize_fp8, memcpy): 1, bytes/hbm_bw
//
// The exact byte and FLOP counts are in feature_definitions() (written into every fit file) and features.cpp.
// Communication kernels (ep_dispatch, ep_combine, ep_notify) have no family here: their cost is a network
// model, not a roofline over one GPU.
#include <optional>
#include <string>
#include <vector>

#include "kernels/fit/gpu_peaks.hpp"
#include "kernels/fit/record.hpp"

namespace moesim::kernels::fit {

struct FeatureSpec {
  std::string name;        // "flops_at_peak"
  std::string unit;        // unit of the coefficient: "us" for the constant, "1" for time-valued features
  std::string definition;  // formula in words, written into the fit file
};

struct FamilySpec {
  std::string model;  // "gemm", "grouped_gemm", "attention", "memory_bound"
  std::vector<FeatureSpec> features;
};

// The family a kernel name belongs to; nullopt for kernels without a cost model (communication).
std::optional<FamilySpec> family_for_kernel(const std::string& kernel);

// "kernel/dtype": the key a fit is stored under. FP8 GEMMs timed with cuBLASLt's fast accumulation are a family of
// their own, dtype "<dtype>+fast_accum" ("gemm/fp8_tensor+fast_accum"), kept beside the split-accumulation one
// that the simulator's FP8 GEMMs use (kernels/fitted_model.hpp).
// Likewise "+per_expert" for a grouped GEMM run as one kernel per group, and "+dgrad" / "+wgrad" for a GEMM's
// gradient passes ("grouped_gemm/bf16+per_expert+wgrad"); a forward keeps the plain key.
std::string family_key(const CalibrationRecord& r);
std::string family_dtype(const CalibrationRecord& r);
// The record dtype a family dtype was made from: "bf16+per_expert+wgrad" -> "bf16".
std::string base_dtype(const std::string& family_dtype);

// Feature values (microseconds) of one record, in FamilySpec order. Throws ConfigError naming the record's
// file:line when the record cannot be costed (no tensor-core rate for its dtype on this GPU, bad groups).
std::vector<double> feature_vector(const CalibrationRecord& r, const GpuPeaks& peaks);

// The roofline lower bound, max(flops/peak, least bytes/hbm_bw), in microseconds. A measurement below it means
// the peak table or the byte/FLOP count is wrong; the fitter refuses such data. The least bytes equal the feature's
// except for permute and unpermute (kernels/token_pass_bytes.hpp).
double roofline_bound_us(const CalibrationRecord& r, const GpuPeaks& peaks);

// Bytes per element of a dtype name ("bf16" 2, "fp8*"/"mxfp8" 1, "fp32" 4).
double element_bytes(const std::string& dtype);

// GEMM tile edge used for wave quantisation and per-expert padding (128 x 128 output tiles: the common
// Hopper/Blackwell cuBLAS and CUTLASS tile, e.g. "tilesize128x128x64" in the H800 trace's cuBLAS kernels).
inline constexpr int gemm_tile = 128;

}  // namespace moesim::kernels::fit
