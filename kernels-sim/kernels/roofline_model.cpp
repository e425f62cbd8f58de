#include "kernels/roofline_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace moesim::kernels {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

int units_of(const GemmTiling& t, int sms) { return std::max(1, sms / std::max(1, t.sms_per_tile)); }

// Tensor-core work a (grouped) GEMM occupies, in FLOP at the ceiling rate: whole waves of tiles, plus the
// per-expert overhead rows. `rows` holds one entry per expert (one entry for a dense GEMM, with no overhead).
double occupied_flops(const std::vector<std::int64_t>& rows, std::int64_t n, std::int64_t k, const GemmTiling& t,
                      int sms, double overhead_rows_per_group) {
  const std::int64_t tiles_n = ceil_div(n, t.tile_n);
  std::int64_t tiles = 0;
  double overhead_rows = 0;
  for (auto m : rows) {
    if (m <= 0) continue;
    tiles += ceil_div(m, t.tile_m) * tiles_n;
    overhead_rows += overhead_rows_per_group;
  }
  if (tiles == 0) return 0;
  const std::int64_t units = units_of(t, sms);
  const double waves = static_cast<double>(ceil_div(tiles, units));
  const double per_tile = 2.0 * t.tile_m * t.tile_n * static_cast<double>(k);
  return waves * static_cast<double>(units) * per_tile +
         2.0 * overhead_rows * static_cast<double>(tiles_n * t.tile_n) * static_cast<double>(k);
}

double attention_keys(const AttentionShape& a) {
  double keys = static_cast<double>(a.seq_kv);
  if (a.window > 0) keys = std::min(keys, static_cast<double>(a.window));
  if (a.keys_per_call > 0) keys = std::min(keys, static_cast<double>(a.keys_per_call));
  return keys;
}

// The work the attention kernel actually executes. cuDNN's FP8 SDPA backward does not skip the keys outside a
// sliding window: at a fixed window its TFLOPS (counted over the window) fall as 1/seq, i.e. its time grows like
// full causal attention, while the BF16 backward and both forwards keep their rate (NVIDIA/cudnn-frontend
// benchmark/sdpa_benchmark_training/results: gpt_oss/gb200/gpt_oss_20260813_110803.csv @20dc1089, cuDNN 9.27,
// 128 query and KV heads of 64, window 128, causal: FP8 backward 76 / 48 / 27 / 14 / 7 TFLOPS at 2k…32k, MXFP8
// 63 / 41 / 23 / 12 / 6, against BF16 172…190; and gb200_919_only_cudnn / gb300_919_only_cudnn gpt_oss CSVs,
// cuDNN 9.19, GPT-OSS's 64/8 heads, window 1024, the same pattern on both GPUs). So an FP8 backward with a window
// costs the full causal shape. Assumptions: the same on every GPU and cuDNN release, and for non-causal windows
// (the files are causal only).
AttentionShape executed_shape(const AttentionShape& a, bool backward) {
  AttentionShape run = a;
  const bool fp8 = a.dtype == DType::fp8 || a.dtype == DType::fp8_block;
  if (backward && fp8 && a.window > 0) run.window = 0;
  return run;
}

// Peak FLOP/s of the datapath the kernel runs on (1 for memory-bound kernels, which have no compute term).
double math_peak(const Kernel& k, const DeviceRates& d) {
  struct V {
    const DeviceRates& d;
    double operator()(const Gemm& g) const { return d.peak_flops(g.dtype); }
    double operator()(const GroupedGemm& g) const { return d.peak_flops(g.dtype); }
    double operator()(const AttentionFwd& a) const { return d.peak_flops(a.dtype); }
    double operator()(const AttentionBwd& a) const { return d.peak_flops(a.dtype); }
    double operator()(const MemoryBound&) const { return 1.0; }
  };
  return std::visit(V{d}, k);
}

void check_shape(bool ok, const Kernel& k) {
  if (!ok) throw InternalError("kernel with a negative dimension: " + describe(k));
}

}  // namespace

double gemm_tile_utilization(std::int64_t m, std::int64_t n, const GemmTiling& tiling, int sms) {
  if (m <= 0 || n <= 0) return 0;
  const double useful = 2.0 * static_cast<double>(m) * static_cast<double>(n);
  return useful / occupied_flops({m}, n, 1, tiling, sms, 0);
}

double gemm_occupied_flops(const std::vector<std::int64_t>& rows, std::int64_t n, std::int64_t k,
                           const GemmTiling& tiling, int sms) {
  return occupied_flops(rows, n, k, tiling, sms, 0);
}

RooflineKernelCostModel::RooflineKernelCostModel(KernelEfficiencyParams params) : params_(std::move(params)) {}

std::string RooflineKernelCostModel::name() const { return "roofline (" + params_.source + ")"; }

double RooflineKernelCostModel::seconds(const Kernel& kernel, const DeviceRates& device) const {
  return explain(kernel, device).seconds;
}

KernelTimeBreakdown RooflineKernelCostModel::explain(const Kernel& kernel, const DeviceRates& device) const {
  check_device_rates(device);
  KernelTimeBreakdown b;
  b.fixed_s = params_.kernel_fixed_s;
  const double fraction =
      std::holds_alternative<MemoryBound>(kernel) ? params_.elementwise_fraction(device.arch) : params_.hbm_fraction;
  b.memory_s = hbm_bytes(kernel) / (device.hbm_Bps * fraction);
  if (const auto* m = std::get_if<MemoryBound>(&kernel)) {
    if (!(m->bytes >= 0)) throw InternalError("memory-bound kernel \"" + m->name + "\" with negative bytes");
    // A memory-bound kind timed on this GPU costs what was measured: its rate, and its fixed time per call in place
    // of the assumed kernel_fixed_s.
    if (const auto it = device.memory_rates.find(m->name); it != device.memory_rates.end()) {
      b.fixed_s = it->second.fixed_s;
      b.memory_s = m->bytes / it->second.bytes_per_s;
      b.seconds = b.fixed_s + b.memory_s;
      return b;
    }
  }
  const double work = flops(kernel);

  struct Compute {
    const KernelEfficiencyParams& p;
    const DeviceRates& d;
    const Kernel& kernel;
    // Seconds of tensor-core time.
    double operator()(const Gemm& g) const {
      check_shape(g.m >= 0 && g.n >= 0 && g.k >= 0, kernel);
      if (g.m == 0 || g.n == 0 || g.k == 0) return 0;
      const double occupied = occupied_flops({g.m}, g.n, g.k, p.gemm_tiling(d.arch), d.sms, 0);
      return occupied / (d.peak_flops(g.dtype) * p.gemm_ceiling(d.arch, g.dtype).fraction);
    }
    double operator()(const GroupedGemm& g) const {
      check_shape(g.n >= 0 && g.k >= 0, kernel);
      for (auto t : g.tokens_per_expert) check_shape(t >= 0, kernel);
      if (g.n == 0 || g.k == 0) return 0;
      const double overhead_rows = g.per_expert_kernels ? 0.0 : p.grouped_gemm_overhead_rows;
      const double occupied =
          occupied_flops(g.tokens_per_expert, g.n, g.k, p.gemm_tiling(d.arch), d.sms, overhead_rows);
      if (occupied == 0) return 0;
      const double scale = g.per_expert_kernels ? p.per_expert_gemms.ceiling_scale : 1.0;
      return occupied / (d.peak_flops(g.dtype) * p.gemm_ceiling(d.arch, g.dtype).fraction * scale);
    }
    double attention(const AttentionShape& a, bool backward) const {
      check_shape(a.batch >= 0 && a.heads >= 0 && a.seq_q >= 0 && a.seq_kv >= 0 && a.d_qk >= 0 && a.d_v >= 0, kernel);
      const AttentionShape run = executed_shape(a, backward);
      const double w = backward ? flops(AttentionBwd{run}) : flops(AttentionFwd{run});
      if (w == 0) return 0;
      const double eff = p.attention_curve(d.arch, a.dtype, backward, a.cudnn_version).fraction_at(attention_keys(run));
      return w / (d.peak_flops(a.dtype) * eff);
    }
    double operator()(const AttentionFwd& a) const { return attention(a, false); }
    double operator()(const AttentionBwd& a) const { return attention(a, true); }
    double operator()(const MemoryBound&) const { return 0; }  // bytes checked above; no compute term
  };
  if (const auto* g = std::get_if<GroupedGemm>(&kernel); g && g->per_expert_kernels) {
    std::int64_t launched = 0;
    for (auto t : g->tokens_per_expert) launched += t > 0 ? 1 : 0;
    b.fixed_s = static_cast<double>(launched) * params_.per_expert_gemms.kernel_s;
  }
  b.compute_s = std::visit(Compute{params_, device, kernel}, kernel);
  if (b.compute_s > 0) b.efficiency = work / (b.compute_s * math_peak(kernel, device));
  b.seconds = b.fixed_s + std::max(b.compute_s, b.memory_s);
  return b;
}

}  // namespace moesim::kernels
