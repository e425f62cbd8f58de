// Dense GEMM through cuBLASLt in Transformer Engine's orientation (calib_plan.cpp): for a linear layer's forward
// y[m, n] = x[m, k] W[n, k]^T, cuBLAS computes D (n x m, column-major) = op(A) B with A = W (stored k x n, op T) and
// B = x (stored k x m, op N); output BF16. Inputs are random. Variants by record dtype:
//   bf16          BF16 inputs, FP32 accumulate
//   fp8_tensor    FP8 E4M3 inputs, one FP32 scale per tensor (Hopper and later)
//   fp8_block128  FP8 E4M3, 128x128 weight scales and 1x128 input scales (DeepSeek-V3's recipe,
//                 CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F / VEC128_32F, cuBLAS 12.9+)
//   mxfp8         FP8 E4M3 with UE8M0 scales per 32 elements (Blackwell)
// FP8 records set CUBLASLT_MATMUL_DESC_FAST_ACCUM from the record's fast_accum (Transformer Engine uses fast
// accumulation for the forward GEMM and split accumulation for dgrad and wgrad); block-scaled FP8 (fp8_block128,
// mxfp8) has split accumulation only: cuBLASLt refuses fast accumulation with block scaling, so the plan has no
// such variant and one asked for is a Failure here. A variant cuBLASLt has no algorithm for is a Failure (a skip
// record), never timed.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <chrono>

#include "calib_cuda.cuh"

#define CALIB_CUBLAS(call)                                                                                            \
  do {                                                                                                                \
    const cublasStatus_t calib_s_ = (call);                                                                           \
    if (calib_s_ != CUBLAS_STATUS_SUCCESS) ::calib::fail(__FILE__, __LINE__, #call, cublasGetStatusString(calib_s_)); \
  } while (0)

namespace calib {
namespace {

constexpr std::size_t workspace_bytes = 32ull << 20;  // Transformer Engine's cuBLAS workspace on Hopper and later

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// Descriptors and buffers of one GEMM; destroyed on scope exit even when a call fails.
struct LtGemm {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtGemm() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (ld) cublasLtMatrixLayoutDestroy(ld);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

template <class T>
void set(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t attr, const T& value) {
  CALIB_CUBLAS(cublasLtMatmulDescSetAttribute(op, attr, &value, sizeof value));
}

}  // namespace

GemmRunner::GemmRunner(Timer& timer) : timer_(timer) {
  cublasLtHandle_t h = nullptr;
  CALIB_CUBLAS(cublasLtCreate(&h));
  handle_ = h;
}

GemmRunner::~GemmRunner() {
  if (handle_) cublasLtDestroy(static_cast<cublasLtHandle_t>(handle_));
}

std::string GemmRunner::version() {
  const std::size_t v = cublasLtGetVersion();  // major * 10000 + minor * 100 + patch
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

Stats GemmRunner::run(const Record& r, const Settings& s) {
  const auto lt = static_cast<cublasLtHandle_t>(handle_);
  const long long m = dim(r, "m"), n = dim(r, "n"), k = dim(r, "k");
  const bool fp8 = r.dtype != "bf16";
  const bool block128 = r.dtype == "fp8_block128", mx = r.dtype == "mxfp8";
  if (r.dtype != "bf16" && r.dtype != "fp8_tensor" && !block128 && !mx) throw Failure("unknown GEMM dtype " + r.dtype);
  if ((block128 || mx) && r.fast_accum == 1)
    throw Failure("fast accumulation with block-scaled FP8 (" + r.dtype + "): cuBLASLt refuses it; not planned");
  const cudaDataType_t in_type = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  const std::size_t e = fp8 ? 1 : 2;
  cudaStream_t st = timer_.stream();
  DeviceBuffer w(static_cast<std::size_t>(n * k) * e), x(static_cast<std::size_t>(m * k) * e),
      d(static_cast<std::size_t>(m * n) * 2), workspace(workspace_bytes);
  fill_random(w, fp8 ? Fill::fp8_e4m3 : Fill::bf16, 1, st);
  fill_random(x, fp8 ? Fill::fp8_e4m3 : Fill::bf16, 2, st);

  LtGemm g;
  CALIB_CUBLAS(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  set(g.op, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  set(g.op, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  // Scales, sized generously (block layouts are padded to 128-row tiles); values 1.0 (UE8M0 127 = 2^0).
  const long long rows = std::max(m, n);
  std::size_t scale_bytes = 4;
  if (block128) scale_bytes = 4 * static_cast<std::size_t>(ceil_div(rows, 128) * 128 * ceil_div(k, 128));
  if (mx) scale_bytes = static_cast<std::size_t>(ceil_div(rows, 128) * 128 * ceil_div(ceil_div(k, 32), 4) * 4);
  DeviceBuffer w_scale(scale_bytes), x_scale(scale_bytes);
  if (fp8) {
    if (mx) {
      CALIB_CUDA(cudaMemsetAsync(w_scale.p, 127, scale_bytes, st));
      CALIB_CUDA(cudaMemsetAsync(x_scale.p, 127, scale_bytes, st));
    } else {
      fill_float(w_scale, 1.0f, st);
      fill_float(x_scale, 1.0f, st);
    }
    std::int32_t mode_w = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, mode_x = mode_w;
    if (block128) {
      mode_w = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
      mode_x = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    }
    if (mx) mode_w = mode_x = CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
    set(g.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode_w);
    set(g.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode_x);
    set(g.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, w_scale.p);
    set(g.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, x_scale.p);
    set(g.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<std::int8_t>(r.fast_accum == 1 ? 1 : 0));
  }
  CALIB_CUBLAS(cublasLtMatrixLayoutCreate(&g.la, in_type, k, n, k));  // W: k x n column-major, op T
  CALIB_CUBLAS(cublasLtMatrixLayoutCreate(&g.lb, in_type, k, m, k));  // x: k x m column-major, op N
  CALIB_CUBLAS(cublasLtMatrixLayoutCreate(&g.ld, CUDA_R_16BF, n, m, n));
  CALIB_CUBLAS(cublasLtMatmulPreferenceCreate(&g.pref));
  CALIB_CUBLAS(cublasLtMatmulPreferenceSetAttribute(g.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                    sizeof workspace_bytes));
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  CALIB_CUBLAS(cublasLtMatmulAlgoGetHeuristic(lt, g.op, g.la, g.lb, g.ld, g.ld, g.pref, 1, &heur, &found));
  if (found == 0) throw Failure("cublasLtMatmulAlgoGetHeuristic: no algorithm for this configuration");
  const float alpha = 1.0f, beta = 0.0f;
  return timer_.time(
      [&] {
        CALIB_CUBLAS(cublasLtMatmul(lt, g.op, &alpha, w.p, g.la, x.p, g.lb, &beta, d.p, g.ld, d.p, g.ld, &heur.algo,
                                    workspace.p, workspace_bytes, st));
      },
      s.warmup, s.repeats);
}

double GemmRunner::warm_up(double seconds) {
  Record r;
  r.dtype = "bf16";
  const long long n = 8192;
  r.shape = {{"m", n}, {"n", n}, {"k", n}};
  // One timed call per round through the ordinary path (random inputs, checked calls), with many untimed ones.
  Settings s{50, 1};
  const auto start = std::chrono::steady_clock::now();
  double flops = 0, busy_us = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
    const Stats t = run(r, s);
    flops += 2.0 * n * n * n;
    busy_us += t.median_us;
  }
  return busy_us > 0 ? flops / (busy_us * 1e-6) / 1e12 : 0;
}

}  // namespace calib
