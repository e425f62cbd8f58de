// Dense GEMM through cuBLASLt: D[m,n] (BF16) = A[m,k] * B[k,n], "TN" layout (the layout FP8 requires).
// Variants, each tried only where the GPU and the cuBLASLt version support it (a variant with no algorithm
// from the heuristic is reported as skipped, never timed):
//   bf16          BF16 inputs, FP32 accumulate
//   fp8_tensor    FP8 E4M3 inputs with one FP32 scale per tensor (Hopper and later)
//   fp8_block128  FP8 E4M3, 1x128 activation scales and 128x128 weight scales (DeepSeek-V3 recipe;
//                 CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F / BLK128x128_32F, cuBLAS 12.9+)
//   mxfp8         FP8 E4M3 with UE8M0 scales per 32 elements (CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0,
//                 Blackwell only: Hopper has no MXFP8 datapath)
#include <cublasLt.h>

#include <cuda_fp8.h>

#include <cstring>

#include "calib_common.cuh"

namespace calib {
namespace {

#define CALIB_LT(call)                                                                                        \
  do {                                                                                                        \
    cublasStatus_t s_ = (call);                                                                               \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                        \
      std::fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #call, static_cast<int>(s_)); \
      std::exit(1);                                                                                           \
    }                                                                                                         \
  } while (0)

enum class Variant { bf16, fp8_tensor, fp8_block128, mxfp8 };

const char* dtype_name(Variant v) {
  switch (v) {
    case Variant::bf16: return "bf16";
    case Variant::fp8_tensor: return "fp8_tensor";
    case Variant::fp8_block128: return "fp8_block128";
    case Variant::mxfp8: return "mxfp8";
  }
  return "?";
}

bool supported_on(Variant v, const Device& d) {
  if (v == Variant::bf16) return d.cc_major >= 8;
  if (v == Variant::mxfp8) return d.cc_major >= 10;  // Blackwell
  return d.cc_major >= 9;                            // FP8 tensor cores from Hopper on
}

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// Times one GEMM shape in one variant. Returns false (and times nothing) when cuBLASLt has no algorithm.
bool time_gemm(cublasLtHandle_t lt, Timer& timer, const Settings& s, Variant v, long long m, long long n, long long k,
               Stats& out) {
  const bool fp8 = v != Variant::bf16;
  const cudaDataType_t in_type = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  const std::size_t in_bytes = fp8 ? 1 : 2;
  DeviceBuffer a(m * k * in_bytes), b(k * n * in_bytes), d(m * n * 2);
  const std::size_t workspace_bytes = 64ull << 20;
  DeviceBuffer workspace(workspace_bytes);

  cublasLtMatmulDesc_t op;
  CALIB_LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CALIB_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CALIB_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));

  // Scale tensors, sized generously (cuBLASLt pads block-scale layouts to 128-row tiles).
  std::size_t a_scale_bytes = 4, b_scale_bytes = 4;
  int fill = 0;
  std::int32_t mode_a = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, mode_b = mode_a;
  if (v == Variant::fp8_block128) {
    mode_a = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    mode_b = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    a_scale_bytes = 4 * (ceil_div(m, 128) * 128) * ceil_div(k, 128);
    b_scale_bytes = 4 * (ceil_div(n, 128) * 128) * ceil_div(k, 128);
  } else if (v == Variant::mxfp8) {
    mode_a = mode_b = CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
    a_scale_bytes = (ceil_div(m, 128) * 128) * (ceil_div(ceil_div(k, 32), 4) * 4);
    b_scale_bytes = (ceil_div(n, 128) * 128) * (ceil_div(ceil_div(k, 32), 4) * 4);
    fill = 127;  // UE8M0 127 = 2^0
  }
  DeviceBuffer a_scale(a_scale_bytes, fill), b_scale(b_scale_bytes, fill);
  if (v == Variant::fp8_tensor || v == Variant::fp8_block128) {
    // FP32 scales of 1.0 (bytes 00 00 80 3f); the values do not change the tensor-core timing.
    std::vector<float> ones(std::max(a_scale_bytes, b_scale_bytes) / 4, 1.0f);
    CALIB_CUDA(cudaMemcpy(a_scale.p, ones.data(), a_scale_bytes, cudaMemcpyHostToDevice));
    CALIB_CUDA(cudaMemcpy(b_scale.p, ones.data(), b_scale_bytes, cudaMemcpyHostToDevice));
  }
  if (fp8) {
    CALIB_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_a, sizeof mode_a));
    CALIB_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode_b, sizeof mode_b));
    CALIB_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale.p, sizeof a_scale.p));
    CALIB_LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale.p, sizeof b_scale.p));
  }
  cublasLtMatrixLayout_t la, lb, ld;
  CALIB_LT(cublasLtMatrixLayoutCreate(&la, in_type, k, m, k));  // A^T stored k x m, column-major
  CALIB_LT(cublasLtMatrixLayoutCreate(&lb, in_type, k, n, k));
  CALIB_LT(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, n, m));

  cublasLtMatmulPreference_t pref;
  CALIB_LT(cublasLtMatmulPreferenceCreate(&pref));
  CALIB_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                sizeof workspace_bytes));
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heur, &found);
  bool ok = hs == CUBLAS_STATUS_SUCCESS && found > 0;
  if (ok) {
    const float alpha = 1.0f, beta = 0.0f;
    out = timer.time(
        [&] {
          CALIB_LT(cublasLtMatmul(lt, op, &alpha, a.p, la, b.p, lb, &beta, d.p, ld, d.p, ld, &heur.algo, workspace.p,
                                  workspace_bytes, timer.stream()));
        },
        s.warmup, s.repeats);
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  return ok;
}

}  // namespace

void run_gemm(Writer& w, Timer& timer, const Settings& s) {
  cublasLtHandle_t lt;
  CALIB_LT(cublasLtCreate(&lt));
  // Token counts of one micro-batch through expert-sized and attention-sized weights (DeepSeek-V3 and
  // Qwen3-style dims), chosen so that flops, bytes and wave waste vary independently enough to fit.
  const std::vector<long long> ms =
      s.quick ? std::vector<long long>{512, 4096} : std::vector<long long>{128, 512, 1000, 4096, 16384};
  const std::vector<std::pair<long long, long long>> nks =
      s.quick ? std::vector<std::pair<long long, long long>>{{7168, 2048}, {4096, 7168}}
              : std::vector<std::pair<long long, long long>>{{7168, 2048},  {4096, 7168}, {1536, 7168}, {7168, 7168},
                                                             {24576, 1536}, {576, 7168},  {2048, 4096}};
  for (Variant v : {Variant::bf16, Variant::fp8_tensor, Variant::fp8_block128, Variant::mxfp8}) {
    if (!supported_on(v, w.device())) {
      std::printf("gemm %s: not supported on compute capability %d.%d, skipped\n", dtype_name(v), w.device().cc_major,
                  w.device().cc_minor);
      continue;
    }
    for (long long m : ms)
      for (auto [n, k] : nks) {
        Stats st;
        if (!time_gemm(lt, timer, s, v, m, n, k, st)) {
          std::printf("gemm %s m=%lld n=%lld k=%lld: no cuBLASLt algorithm, skipped\n", dtype_name(v), m, n, k);
          continue;
        }
        Record r{"gemm", dtype_name(v), "cublaslt_tn", {{"m", m}, {"n", n}, {"k", k}}, {}, 0, st};
        w.write("gemm", r);
      }
  }
  cublasLtDestroy(lt);
}

}  // namespace calib
