#include "calib_plan.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>

namespace calib {
namespace {

using Shape = std::vector<std::pair<std::string, long long>>;
using Sizes = std::vector<long long>;

// The GEMM orientation Transformer Engine uses for a linear layer's forward (and for every FP8 GEMM on Hopper,
// which supports only TN): cuBLAS A = the weight (n x k, transposed), B = the input (m tokens x k), D = n x m
// column-major, i.e. the [m, n] row-major output; every leading dimension is k or n, never a ragged token count.
const char* const gemm_impl =
    "cuBLASLt cublasLtMatmul, TN as Transformer Engine's forward (A = weight, B = input), BF16 output, heuristic's "
    "first algorithm, 32 MiB workspace";
const char* const grouped_impl =
    "cuBLAS cublasGemmGroupedBatchedEx, one group per expert, TN as Transformer Engine (leading dimensions k and n)";

std::string stand_in(const char* what) {
  return std::string("stand-in written in kernels-sim/cuda/moe_kernels.cu for ") + what +
         "; not Transformer Engine's kernel";
}

Suite gemm_suite(const PlanOptions& o) {
  Suite s{"gemm",
          "dense GEMMs (cuBLASLt), BF16 and FP8 (per-tensor FP8 with and without fast accumulation)",
          5,
          o.quick ? 10 : 30,
          {}};
  // Token counts of a micro-batch through DeepSeek-V3 / Qwen3 / Llama-sized weights, chosen so that FLOPs, bytes
  // and wave waste vary independently enough to fit (n, k) = (out, in) features.
  const Sizes ms = o.quick ? Sizes{256, 1000, 4096, 16384} : Sizes{128, 512, 1000, 2048, 4096, 8192, 16384};
  const std::vector<std::pair<long long, long long>> nks =
      o.quick ? std::vector<std::pair<long long, long long>>{{7168, 2048}, {4096, 7168}, {576, 7168}}
              : std::vector<std::pair<long long, long long>>{{7168, 2048},  {4096, 7168}, {1536, 7168},
                                                             {24576, 1536}, {576, 7168},  {7168, 7168},
                                                             {2048, 4096},  {5120, 5120}, {8192, 8192}};
  struct Variant {
    const char* dtype;
    int fast_accum;
  };
  // Block-scaled FP8 runs with split accumulation only: cuBLASLt refuses CUBLASLT_MATMUL_DESC_FAST_ACCUM with
  // block scaling, so a fast-accumulation variant would only ever be a skip record (issue 29).
  std::vector<Variant> variants = {{"bf16", -1}, {"fp8_tensor", 0}, {"fp8_tensor", 1}, {"fp8_block128", 0}};
  if (o.cc_major >= 10) variants.push_back({"mxfp8", 0});  // Hopper has no MXFP8 datapath
  // Variants innermost: a suite cut short by its time budget (main.cu) loses its largest shapes in every variant
  // rather than whole variants.
  for (long long m : ms)
    for (const auto& [n, k] : nks)
      for (const auto& v : variants) {
        Record r;
        r.kernel = "gemm";
        r.dtype = v.dtype;
        r.variant = "te_fprop_tn";
        r.implementation = gemm_impl;
        r.fast_accum = v.fast_accum;
        r.shape = {{"m", m}, {"n", n}, {"k", k}};
        s.cases.push_back(r);
      }
  return s;
}

Suite grouped_suite(const PlanOptions& o) {
  Suite s{"grouped_gemm",
          "ragged expert GEMMs, BF16 (cuBLAS grouped GEMM), balanced and skewed routing",
          5,
          o.quick ? 10 : 30,
          {}};
  const std::vector<int> experts = {4, 8, 32};  // three group counts: the per-group term is then determined
  const Sizes totals = o.quick ? Sizes{4096, 16384} : Sizes{2048, 8192, 32768};
  const std::vector<std::pair<long long, long long>> nks = {{4096, 7168}, {7168, 2048}};  // fc1 (gate+up), fc2
  for (int e : experts)
    for (long long total : totals)
      for (const auto& [n, k] : nks)
        for (bool skewed : {false, true}) {
          Record r;
          r.kernel = "grouped_gemm";
          r.dtype = "bf16";
          r.variant = skewed ? "skewed" : "balanced";
          r.implementation = grouped_impl;
          r.shape = {{"n", n}, {"k", k}, {"experts", e}, {"tokens", total}};
          r.groups = split_rows(total, e, skewed);
          s.cases.push_back(r);
        }
  return s;
}

Record moe_case(const char* kernel, const char* dtype, const char* variant, const char* what, Shape shape) {
  Record r;
  r.kernel = kernel;
  r.dtype = dtype;
  r.variant = variant;
  r.implementation = stand_in(what);
  r.stand_in = true;
  r.shape = std::move(shape);
  return r;
}

Suite moe_suite(const PlanOptions& o) {
  Suite s{"moe",
          "MoE memory-bound kernels: STAND-INS written here for Transformer Engine's permute, unpermute, router "
          "top-k, RMSNorm, SwiGLU and FP8 quantize",
          5,
          o.quick ? 10 : 30,
          {}};
  const Sizes tokens = o.quick ? Sizes{2048, 8192} : Sizes{1024, 4096, 16384};
  const Sizes hiddens = o.quick ? Sizes{2048, 7168} : Sizes{2048, 4096, 7168};
  const long long experts = 128;  // routing of the permutes: top_k distinct experts of 128 per token
  for (long long t : tokens)
    for (long long h : hiddens)
      for (long long k : {2LL, 8LL}) {
        const Shape shape = {{"tokens", t}, {"hidden", h}, {"top_k", k}, {"experts", experts}};
        s.cases.push_back(moe_case("permute", "bf16", "", "TE's moe_permute (rows gathered into expert order)", shape));
        s.cases.push_back(
            moe_case("unpermute", "bf16", "", "TE's moe_unpermute (probability-weighted sum back to tokens)", shape));
      }
  for (long long t : tokens)
    for (long long e : {64LL, 256LL})
      for (const char* score : {"sigmoid", "softmax"})
        s.cases.push_back(moe_case("router_topk", "fp32", score, "TE's fused router top-k",
                                   {{"tokens", t}, {"experts", e}, {"top_k", 8}}));
  const Sizes norm_tokens = o.quick ? Sizes{2048, 8192, 16384} : tokens;
  for (long long t : norm_tokens)
    for (long long h : hiddens)
      s.cases.push_back(moe_case("rmsnorm", "bf16", "", "TE's RMSNorm forward", {{"tokens", t}, {"hidden", h}}));
  const Sizes ffns = o.quick ? Sizes{2048, 18432} : Sizes{2048, 4096, 18432};
  for (long long t : norm_tokens)
    for (long long f : ffns)
      s.cases.push_back(moe_case("swiglu", "bf16", "", "TE's SwiGLU forward", {{"tokens", t}, {"ffn", f}}));
  for (long long t : norm_tokens)
    for (long long c : o.quick ? Sizes{2048, 7168} : Sizes{2048, 7168, 18432})
      s.cases.push_back(moe_case("quantize_fp8", "fp8_e4m3", "block128", "TE's FP8 cast with 1x128 block scales",
                                 {{"rows", t}, {"cols", c}}));
  return s;
}

Suite memcpy_suite(const PlanOptions& o) {
  Suite s{"memcpy", "device-to-device copies (cudaMemcpyAsync)", 5, o.quick ? 10 : 30, {}};
  for (long long mib : Sizes{1, 4, 16, 64, 256, 1024}) {
    Record r;
    r.kernel = "memcpy";
    r.dtype = "bytes";
    r.variant = "d2d";
    r.implementation = "cudaMemcpyAsync device to device";
    r.shape = {{"bytes", mib << 20}};
    s.cases.push_back(r);
  }
  return s;
}

}  // namespace

const std::vector<std::string>& suite_names() {
  static const std::vector<std::string> names = {"memcpy", "moe", "gemm", "grouped_gemm"};
  return names;
}

std::vector<Suite> make_plan(const PlanOptions& o) {
  std::vector<std::string> wanted;
  for (std::size_t start = 0; start <= o.only.size() && !o.only.empty();) {
    const std::size_t comma = o.only.find(',', start);
    const std::string name = o.only.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!name.empty()) {
      bool known = false;
      for (const auto& n : suite_names()) known = known || n == name;
      if (!known)
        throw std::invalid_argument("unknown suite \"" + name + "\" (suites: memcpy, moe, gemm, grouped_gemm)");
      wanted.push_back(name);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const auto want = [&](const std::string& name) {
    if (wanted.empty()) return true;
    for (const auto& w : wanted)
      if (w == name) return true;
    return false;
  };
  std::vector<Suite> plan;
  for (const auto& name : suite_names()) {
    if (!want(name)) continue;
    if (name == "memcpy") plan.push_back(memcpy_suite(o));
    if (name == "moe") plan.push_back(moe_suite(o));
    if (name == "gemm") plan.push_back(gemm_suite(o));
    if (name == "grouped_gemm") plan.push_back(grouped_suite(o));
  }
  return plan;
}

std::vector<long long> split_rows(long long total, int experts, bool skewed) {
  std::vector<double> weight(static_cast<std::size_t>(experts), 1.0);
  if (skewed)
    for (int e = 0; e < experts; ++e) weight[static_cast<std::size_t>(e)] = 1.0 / std::pow(e + 1.0, 1.2);
  const double sum = std::accumulate(weight.begin(), weight.end(), 0.0);
  std::vector<long long> rows(static_cast<std::size_t>(experts));
  long long given = 0;
  for (int e = 0; e < experts; ++e)
    given += rows[static_cast<std::size_t>(e)] =
        static_cast<long long>(std::floor(static_cast<double>(total) * weight[static_cast<std::size_t>(e)] / sum));
  for (int e = 0; given < total; e = (e + 1) % experts, ++given) ++rows[static_cast<std::size_t>(e)];
  return rows;
}

long long dim(const Record& r, const char* name) {
  for (const auto& [n, v] : r.shape)
    if (n == name) return v;
  return 0;
}

}  // namespace calib
