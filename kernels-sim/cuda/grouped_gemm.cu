// Grouped GEMM over ragged expert batches through cublasGemmGroupedBatchedEx (BF16 in and out, FP32 accumulate),
// in Transformer Engine's orientation: expert e computes y_e[m_e, n] = x_e[m_e, k] W_e[n, k]^T as the
// column-major D_e (n x m_e) = op(W_e) x_e with W_e stored k x n (op T, lda = k), x_e stored k x m_e (op N,
// ldb = k) and ldc = n. Every leading dimension is k or n, so a ragged m_e never misaligns a row, and each
// expert's rows start at a multiple of k (or n) elements of one packed buffer. Rows per expert come from the plan
// (calib_plan.cpp: balanced or Zipf-skewed); empty experts are not launched. Inputs are random.
#include <cublas_v2.h>

#include "calib_cuda.cuh"

#define CALIB_CUBLAS(call)                                                                                            \
  do {                                                                                                                \
    const cublasStatus_t calib_s_ = (call);                                                                           \
    if (calib_s_ != CUBLAS_STATUS_SUCCESS) ::calib::fail(__FILE__, __LINE__, #call, cublasGetStatusString(calib_s_)); \
  } while (0)

namespace calib {

GroupedGemmRunner::GroupedGemmRunner(Timer& timer) : timer_(timer) {
  cublasHandle_t h = nullptr;
  CALIB_CUBLAS(cublasCreate(&h));
  handle_ = h;
  CALIB_CUBLAS(cublasSetStream(h, timer_.stream()));
}

GroupedGemmRunner::~GroupedGemmRunner() {
  if (handle_) cublasDestroy(static_cast<cublasHandle_t>(handle_));
}

Stats GroupedGemmRunner::run(const Record& r, const Settings& s) {
  if (r.dtype != "bf16") throw Failure("grouped GEMM is BF16 only here (cuBLAS grouped GEMM has no FP8 path)");
  const auto h = static_cast<cublasHandle_t>(handle_);
  const long long n = dim(r, "n"), k = dim(r, "k");
  std::vector<long long> rows;
  long long total = 0;
  for (long long m : r.groups)
    if (m > 0) rows.push_back(m), total += m;
  const int g = static_cast<int>(rows.size());
  if (g == 0) throw Failure("no expert has rows");
  cudaStream_t st = timer_.stream();
  DeviceBuffer x(static_cast<std::size_t>(total * k) * 2), w(static_cast<std::size_t>(g) * n * k * 2),
      y(static_cast<std::size_t>(total * n) * 2);
  fill_random(x, Fill::bf16, 3, st);
  fill_random(w, Fill::bf16, 4, st);
  std::vector<const void*> wp(g), xp(g);
  std::vector<void*> yp(g);
  std::vector<int> m_arr(g, static_cast<int>(n)), n_arr(g), k_arr(g, static_cast<int>(k)), lda(g, static_cast<int>(k)),
      ldb(g, static_cast<int>(k)), ldc(g, static_cast<int>(n)), group_size(g, 1);
  std::vector<cublasOperation_t> ta(g, CUBLAS_OP_T), tb(g, CUBLAS_OP_N);
  std::vector<float> alpha(g, 1.0f), beta(g, 0.0f);
  long long offset = 0;
  for (int e = 0; e < g; ++e) {
    n_arr[e] = static_cast<int>(rows[e]);
    wp[e] = w.as<char>() + static_cast<std::size_t>(e) * n * k * 2;
    xp[e] = x.as<char>() + static_cast<std::size_t>(offset * k) * 2;
    yp[e] = y.as<char>() + static_cast<std::size_t>(offset * n) * 2;
    offset += rows[e];
  }
  DeviceBuffer dw(g * sizeof(void*)), dx(g * sizeof(void*)), dy(g * sizeof(void*));
  CALIB_CUDA(cudaMemcpyAsync(dw.p, wp.data(), g * sizeof(void*), cudaMemcpyHostToDevice, st));
  CALIB_CUDA(cudaMemcpyAsync(dx.p, xp.data(), g * sizeof(void*), cudaMemcpyHostToDevice, st));
  CALIB_CUDA(cudaMemcpyAsync(dy.p, yp.data(), g * sizeof(void*), cudaMemcpyHostToDevice, st));
  return timer_.time(
      [&] {
        CALIB_CUBLAS(cublasGemmGroupedBatchedEx(
            h, ta.data(), tb.data(), m_arr.data(), n_arr.data(), k_arr.data(), alpha.data(), dw.as<const void*>(),
            CUDA_R_16BF, lda.data(), dx.as<const void*>(), CUDA_R_16BF, ldb.data(), beta.data(), dy.as<void*>(),
            CUDA_R_16BF, ldc.data(), g, group_size.data(), CUBLAS_COMPUTE_32F));
      },
      s.warmup, s.repeats);
}

}  // namespace calib
