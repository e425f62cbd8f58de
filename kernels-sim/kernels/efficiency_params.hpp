#pragma once
// KernelEfficiencyParams: every calibration constant of the roofline kernel cost model, as plain data. The
// built-in set is a data file, kernels-sim/data/efficiency/builtin.json (every figure from
// data/reference/hardware.md §5 with its source; derivations in kernels-sim/data/efficiency/README.md), read by
// the strict reader below; a file of the same shape can replace it, which is how fitted coefficients from
// kernels/fit/ or a hand-edited set for a new GPU plug in without code changes.
//
// JSON shape (all keys required unless marked optional, unknown keys are errors; every entry names its source):
//   { "source": "...", "about": "..." (optional),
//     "hbm_fraction": {"value": 0.8, "unit": "fraction", "source": "..."},
//     "kernel_fixed_us": {"value": 2, "unit": "us", "source": "..."},
//     "grouped_gemm_overhead_rows": {"value": 123.5, "unit": "rows", "source": "..."},
//     "per_expert_gemms": {"kernel_us": 2.7, "ceiling_scale": 0.94, "source": "..."},
//     "elementwise_hbm": [ {"arch": "hopper", "fraction": 0.31, "source": "..."} ],
//     "gemm_ceilings": [ {"arch": "hopper", "dtype": "bf16", "fraction": 0.803, "source": "..."} ],
//     "gemm_tilings":  [ {"arch": "hopper", "tile_m": 128, "tile_n": 256, "sms_per_tile": 1, "source": "..."} ],
//     "attention":     [ {"arch": "hopper", "dtype": "bf16", "pass": "fwd", "ceiling_fraction": 0.73,
//                         "half_seq": 903, "source": "..."} ] }
//   Every entry may add "note" (a derivation, for the reader of the file). An attention row may add
//   "cudnn_below": N (a curve of cuDNN releases older than N; AttentionCurve).
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/device_rates.hpp"

namespace moesim::kernels {

// Best achieved fraction of the dtype's dense peak for a large, well-shaped GEMM (MAMF / peak).
struct GemmCeiling {
  Arch arch = Arch::hopper;
  DType dtype = DType::bf16;
  double fraction = 0;
  std::string source;
};

// Output tile a GEMM kernel assigns to one unit of `sms_per_tile` SMs; sets wave quantisation and padding.
struct GemmTiling {
  Arch arch = Arch::hopper;
  int tile_m = 0, tile_n = 0, sms_per_tile = 1;
  std::string source;
};

// Attention efficiency by key length s: fraction(s) = ceiling_fraction * s / (s + half_seq), of the dtype's peak.
// Achieved fraction of datasheet HBM bandwidth of memory-bound kernels on one architecture.
struct ElementwiseBandwidth {
  Arch arch = Arch::hopper;
  double fraction = 0;
  std::string source;
};

// Grouped GEMMs issued as one GEMM kernel per expert (GroupedGemm::per_expert_kernels): every expert's kernel pays
// `kernel_s` of ramp-up, tail and stream hand-over, and the tiles run at `ceiling_scale` x the dense GEMM ceiling
// (the experts' kernels share the GPU through streams, not one persistent schedule).
struct PerExpertGemms {
  double kernel_s = 0;
  double ceiling_scale = 1;
  std::string source;
};

struct AttentionCurve {
  Arch arch = Arch::hopper;
  DType dtype = DType::bf16;
  bool backward = false;
  double ceiling_fraction = 0;
  double half_seq = 0;
  // 0: the kernels of current cuDNN releases. N > 0: a curve measured on an older release, used for shapes whose
  // cudnn_version is set and below N (the release whose kernels the curve without it describes).
  int cudnn_below = 0;
  std::string source;
  double fraction_at(double seq) const { return ceiling_fraction * seq / (seq + half_seq); }
};

struct KernelEfficiencyParams {
  std::string source;  // where this set came from: the built-in file's "source", or another file's
  std::vector<GemmCeiling> gemm_ceilings;
  std::vector<GemmTiling> gemm_tilings;
  // Grouped GEMM: every non-empty expert costs this many extra rows of work (its weights are loaded and its tile
  // pipeline filled once per expert), so an expert of m rows (a tile multiple) runs at m / (m + overhead) of the
  // dense-GEMM rate.
  double grouped_gemm_overhead_rows = 0;
  std::string grouped_gemm_overhead_source;
  PerExpertGemms per_expert_gemms;
  std::vector<AttentionCurve> attention;
  double hbm_fraction = 0;  // achieved fraction of datasheet HBM bandwidth for streaming kernels
  std::string hbm_fraction_source;
  // Per architecture where measured: what memory-bound kernels (norms, casts / quantisation, activations,
  // permutes, optimizer) reach inside a training step; an architecture without an entry uses hbm_fraction.
  std::vector<ElementwiseBandwidth> elementwise_hbm;
  double elementwise_fraction(Arch a) const;
  double kernel_fixed_s = 0;  // device time every kernel pays regardless of size (ramp-up and tail)
  std::string kernel_fixed_source;

  // Lookups; a missing row is a ConfigError naming `source` and the (arch, dtype) asked for.
  const GemmCeiling& gemm_ceiling(Arch a, DType d) const;
  const GemmTiling& gemm_tiling(Arch a) const;
  // `cudnn_version` (AttentionShape's encoding, 0 = current): the older-release curve with the smallest
  // cudnn_below above it when there is one for (a, d, pass), else the current curve.
  const AttentionCurve& attention_curve(Arch a, DType d, bool backward, int cudnn_version = 0) const;
};

// The curve through two published points (throughput tf_lo at seq_lo, tf_hi at seq_hi, same peak), solved
// exactly for ceiling and half_seq. Throws InternalError unless tf_lo < tf_hi and seq_lo < seq_hi.
AttentionCurve attention_curve_through(Arch a, DType d, bool backward, double seq_lo, double tf_lo, double seq_hi,
                                       double tf_hi, double peak, std::string source);

// One published grouped-GEMM point: `groups` experts of `rows` rows each, C = [rows x k] * [k x n], at `tflops`.
struct GroupedGemmPoint {
  std::int64_t groups = 0, rows = 0, n = 0, k = 0;
  double tflops = 0;
};
// The per-expert-kernel parameters that reproduce two published points of the same GEMM on one GPU (peak FLOP/s,
// dense ceiling fraction, tiling, SM count) exactly: solves time = occupied / (peak x ceiling x scale) +
// groups x kernel_s for scale and kernel_s. Throws InternalError unless the solution is positive.
PerExpertGemms per_expert_gemms_through(const GroupedGemmPoint& a, const GroupedGemmPoint& b, double peak_flops,
                                        double ceiling, const GemmTiling& tiling, int sms, std::string source);

// The built-in set: <data_root>/kernels-sim/data/efficiency/builtin.json, read once per data root (the root is
// config::data_dir(): --data-dir, $MOESIM_DATA_DIR or the source tree). A missing or bad file is a ConfigError.
std::filesystem::path builtin_kernel_efficiency_file(const std::filesystem::path& data_root);
KernelEfficiencyParams builtin_kernel_efficiency(const std::filesystem::path& data_root);
KernelEfficiencyParams builtin_kernel_efficiency();  // under config::data_dir() (no --data-dir)

// Strict JSON reading (all problems of the file in one ConfigError, exit code 2).
KernelEfficiencyParams load_kernel_efficiency_params(const std::filesystem::path& file);
KernelEfficiencyParams parse_kernel_efficiency_params(const std::string& json_text, const std::string& name);
// The same shape back as JSON text (so fitted sets can be written and round-tripped).
std::string to_json_text(const KernelEfficiencyParams& p);

}  // namespace moesim::kernels
